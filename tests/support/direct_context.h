// A Context for calling an optimiser or verifier directly: embedded items go through the public
// optimize() (the engine, with its own verification), and are verified with the registry's
// verifier of their kind, as the engine's own Context does.
#pragma once

#include "core/context.h"
#include "engine/registry.h"
#include "lighten/lighten.h"

namespace lighten::testing {

class DirectContext final : public Context {
 public:
  explicit DirectContext(Policy policy = {}) : policy_(policy) {}
  const Policy& policy() const override { return policy_; }
  unsigned depth() const override { return 0; }
  bool out_of_time() const override { return false; }
  Outcome optimize_embedded_under(ByteView bytes, std::string_view, const Policy& p) override {
    ++embedded_calls;
    return optimize(bytes, p);
  }
  Verdict verify_embedded_under(ByteView original, ByteView output, const Policy& p) override {
    const FormatEntry* format = find_format(sniff(original));
    if (format == nullptr || sniff(output) != sniff(original)) return {false, "kind", {}};
    DirectContext child(p);
    return format->verify(original, output, child);
  }
  int embedded_calls = 0;

 private:
  Policy policy_;
};

}  // namespace lighten::testing
