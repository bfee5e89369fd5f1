// libFuzzer target: optimise, verify and describe arbitrary bytes as a JPEG. Anything but a
// FormatError escaping, a crash, a leak or a hang is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "core/context.h"
#include "core/errors.h"
#include "formats/jpeg/jpeg_format.h"

namespace {

class FuzzContext : public lighten::Context {
 public:
  explicit FuzzContext(lighten::Policy policy) : policy_(policy) {}
  const lighten::Policy& policy() const override { return policy_; }
  unsigned depth() const override { return 0; }
  bool out_of_time() const override { return false; }
  lighten::Outcome optimize_embedded_under(lighten::ByteView, std::string_view,
                                           const lighten::Policy&) override {
    return {};
  }
  lighten::Verdict verify_embedded_under(lighten::ByteView, lighten::ByteView,
                                         const lighten::Policy&) override {
    return {};
  }

 private:
  lighten::Policy policy_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lighten::ByteView input(data, size);
  lighten::Policy policy;
  // Lower limits than the defaults so the fuzzer finds logic bugs, not slow huge images.
  policy.limits.max_pixels = 4'000'000;
  // The last byte picks the scan mode and policies, so every path gets fuzzed.
  const uint8_t pick = size > 0 ? data[size - 1] : 0;
  policy.jpeg_scans = static_cast<lighten::ScanMode>(pick % 4);
  policy.metadata = static_cast<lighten::MetadataPolicy>((pick / 4) % 3);
  policy.jpeg_restarts =
      (pick & 0x20) ? lighten::RestartPolicy::kDrop : lighten::RestartPolicy::kKeep;
  policy.verify =
      (pick & 0x40) ? lighten::VerifyLevel::kPixels : lighten::VerifyLevel::kCoefficients;
  policy.effort = (pick & 0x80) ? 5 : 3;  // 5 runs the band search
  FuzzContext context(policy);
  try {
    lighten::Outcome out = lighten::optimize_jpeg(input, context);
    lighten::Verdict v = lighten::verify_jpeg(input, out.bytes, policy);
    // Whatever the optimiser writes must verify against its own input.
    if (!v.ok) {
      std::fprintf(stderr, "output does not verify: %s\n", v.problem.c_str());
      __builtin_trap();
    }
  } catch (const lighten::FormatError&) {
  }
  try {
    lighten::FileInfo info;
    lighten::describe_jpeg(input, info);
  } catch (const lighten::FormatError&) {
  }
  return 0;
}
