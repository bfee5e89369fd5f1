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

// Embedded items (the secondary images of an MPF index) go through optimize_jpeg and
// verify_jpeg one level deeper, as the engine would send them, so that their paths are fuzzed
// too; a second level is left alone.
class FuzzContext : public lighten::Context {
 public:
  explicit FuzzContext(lighten::Policy policy, unsigned depth = 0)
      : policy_(policy), depth_(depth) {}
  const lighten::Policy& policy() const override { return policy_; }
  unsigned depth() const override { return depth_; }
  bool out_of_time() const override { return false; }
  lighten::Outcome optimize_embedded_under(lighten::ByteView bytes, std::string_view,
                                           const lighten::Policy& policy) override {
    lighten::Outcome kept;
    if (depth_ >= 1) return kept;
    FuzzContext child(policy, depth_ + 1);
    try {
      lighten::Outcome out = lighten::optimize_jpeg(bytes, child);
      // The engine keeps an item only when its own verifier accepts it.
      if (out.replaced() &&
          !lighten::verify_jpeg(bytes, out.bytes, policy, std::nullopt, std::nullopt, &child).ok)
        return kept;
      return out;
    } catch (const lighten::FormatError&) {
      return kept;
    }
  }
  lighten::Verdict verify_embedded_under(lighten::ByteView original, lighten::ByteView output,
                                         const lighten::Policy& policy) override {
    FuzzContext child(policy, depth_ + 1);
    return lighten::verify_jpeg(original, output, policy, std::nullopt, std::nullopt, &child);
  }

 private:
  lighten::Policy policy_;
  unsigned depth_;
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
  // The byte before it and the size pick the mode (well-formed files all end FF D9), so the
  // perceptual search (requantisation, trellis, the metric, the 4:2:0 re-encode) is fuzzed as
  // well as the lossless path, on smaller images so that an input takes milliseconds.
  const size_t mode_pick = size > 1 ? data[size - 2] + size : 0;
  policy.mode = static_cast<lighten::Mode>(mode_pick % 4);
  if (policy.mode != lighten::Mode::kLossless) policy.limits.max_pixels = 300'000;
  FuzzContext context(policy);
  try {
    lighten::Outcome out = lighten::optimize_jpeg(input, context);
    lighten::Verdict v =
        lighten::verify_jpeg(input, out.bytes, policy, std::nullopt, std::nullopt, &context);
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
