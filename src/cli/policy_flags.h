// Turns the library's options table into CLI flags: no option is declared twice.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <set>
#include <string>

#include "lighten/options.h"

namespace lighten::cli {

class PolicyFlags {
 public:
  // Adds one flag per row of policy_options() to `command`, under a "Policy" group.
  void add_to(CLI::App& command);
  // Applies the flags given on the command line; throws OptionError with a clear message.
  Policy build() const;

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;  // options given as bare flags
};

}  // namespace lighten::cli
