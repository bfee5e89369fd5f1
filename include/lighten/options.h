// Every policy option declared once: the CLI, --help, reports and later the HTTP server and
// the Python binding all read this table instead of declaring their own.
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lighten/policy.h"

namespace lighten {

// kFlag is a choice of "no" and "yes" that the CLI also takes bare (--repair means yes).
enum class OptionType { kChoice, kFlag, kInteger, kNumber, kBytes };

struct OptionSpec {
  std::string_view name;  // flag name without dashes, e.g. "mode"
  OptionType type;
  std::string_view default_value;
  std::vector<std::string_view> choices;  // for kChoice and kFlag
  double min = 0, max = 0;                // for kInteger / kNumber / kBytes
  std::string_view help;
};

// A value the table refuses; the message names the option, the value and what is allowed.
class OptionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

std::span<const OptionSpec> policy_options();
// Parses `value` for option `name` into `policy`; throws OptionError.
void set_policy_option(Policy& policy, std::string_view name, std::string_view value);
// The option's current value, formatted as set_policy_option accepts it.
std::string get_policy_option(const Policy& policy, std::string_view name);
// Parses a size such as 65536, 512k, 64M or 4G (powers of 1024) given to --`flag`; throws
// OptionError naming the flag.
uint64_t parse_size(std::string_view flag, std::string_view text);
// Every option as name=value, in table order (for reports and journals).
std::vector<std::pair<std::string, std::string>> describe_policy(const Policy& policy);

}  // namespace lighten
