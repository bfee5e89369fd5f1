#include "policy_flags.h"

namespace lighten::cli {

void PolicyFlags::add_to(CLI::App& command) {
  for (const OptionSpec& spec : policy_options()) {
    const std::string name(spec.name);
    std::string help(spec.help);
    if (spec.type == OptionType::kChoice) {
      help += " {";
      for (size_t i = 0; i < spec.choices.size(); ++i)
        help += (i ? "|" : "") + std::string(spec.choices[i]);
      help += "}";
    }
    command.add_option("--" + name, values_[name], help)
        ->default_str(std::string(spec.default_value))
        ->group("Policy");
  }
}

Policy PolicyFlags::build() const {
  Policy policy;
  for (const auto& [name, value] : values_)
    if (!value.empty()) set_policy_option(policy, name, value);
  return policy;
}

}  // namespace lighten::cli
