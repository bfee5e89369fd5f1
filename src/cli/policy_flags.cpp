#include "policy_flags.h"

namespace lighten::cli {

void PolicyFlags::add_to(CLI::App& command) {
  for (const OptionSpec& spec : policy_options()) {
    const std::string name(spec.name);
    std::string help(spec.help);
    if (spec.type == OptionType::kFlag) {
      flags_.insert(name);
      // Bare --name means yes; --name=no is still accepted.
      command.add_flag("--" + name, values_[name], help + " (--" + name + "=no to turn off)")
          ->group("Policy");
      continue;
    }
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
  for (const auto& [name, value] : values_) {
    if (value.empty()) continue;
    if (flags_.count(name)) {
      // CLI11 hands a bare flag over as "true" (and --flag=yes as "yes").
      const bool yes = value == "true" || value == "1", no = value == "false" || value == "0";
      set_policy_option(policy, name, yes ? "yes" : no ? "no" : value);
    } else {
      set_policy_option(policy, name, value);
    }
  }
  // A floor asked for in lossless mode, which keeps every pixel, would be ignored in silence.
  if (policy.mode == Mode::kLossless && policy.target_score > 0)
    throw OptionError("--target-score " + get_policy_option(policy, "target-score") +
                      ": needs a perceptual --mode (visually-lossless, high or compact); lossless "
                      "keeps every pixel");
  return policy;
}

}  // namespace lighten::cli
