#include "formats/png/png_pack.h"

#include <algorithm>

#include "codecs/deflate.h"
#include "formats/png/png_filters.h"

namespace lighten {
namespace {

constexpr const char* kStrategyNames[] = {"none",  "sub",    "up",     "average",
                                          "paeth", "minsum", "entropy"};

struct Candidate {
  size_t layout = 0;
  std::string name;
  Bytes filtered;
  size_t trial_size = 0;
};

std::vector<PngFilterStrategy> strategies_for(int effort) {
  std::vector<PngFilterStrategy> s;
  if (effort <= 2)
    s = {PngFilterStrategy::kMinSum};
  else if (effort <= 4)
    s = {PngFilterStrategy::kNone, PngFilterStrategy::kMinSum};
  else
    s.assign(std::begin(kAllPngStrategies), std::end(kAllPngStrategies) - 1);
  if (effort >= 7) s.push_back(PngFilterStrategy::kEntropy);
  return s;
}

// Unfiltered image data up to this size counts as a small image: every trial is cheap there.
constexpr size_t kTinyImageBytes = 256 << 10;
constexpr size_t kSmallImageBytes = 1 << 20;
constexpr size_t kMediumImageBytes = 4 << 20;
// The quick trial against the input's image data above which the input is already packed.
constexpr double kAlreadyPackedRatio = 1.5;
// Unfiltered size against the quick trial above which an image is very compressible.
constexpr double kVeryCompressible = 12.0;

// The quick trial of a large image compresses one slice in four (slices longer than deflate's
// window, so each still sees its own context) and scales the size back up: it ranks strategies
// as the whole would, at a quarter of the cost.
size_t sampled_trial_size(const Bytes& filtered, int level) {
  constexpr size_t kSlice = 64 << 10, kStride = 4 * kSlice;
  Bytes sample;
  sample.reserve(filtered.size() / 4 + kSlice);
  for (size_t at = 0; at < filtered.size(); at += kStride)
    sample.insert(sample.end(), filtered.begin() + long(at),
                  filtered.begin() + long(std::min(filtered.size(), at + kSlice)));
  const size_t size = deflate_at_level(sample, level, DeflateWrapper::kZlib).size();
  return size_t(double(size) * double(filtered.size()) / double(sample.size()));
}

}  // namespace

PngPacked pack_png_layouts(const std::vector<PngLayout>& layouts, Bytes original_filtered,
                           ByteView input_idat, Context& context) {
  const Policy& policy = context.policy();
  const OutOfTime out_of_time = [&context] { return context.out_of_time(); };
  auto check_time = [&] {
    if (out_of_time()) throw FormatError(Reason::kLimitExceeded, 0, "the time budget ran out");
  };
  // Each layout on its own, so that a second run on this output meets the same trials again
  // and finds nothing more (idempotence).
  PngPacked best;
  size_t best_file = 0;  // the winner's whole file: layouts differ in PLTE, tRNS, sBIT, bKGD
  for (size_t i = 0; i < layouts.size(); ++i) {
    const PngLayout& layout = layouts[i];
    const size_t chunks = assemble_png(layout, {}).size();
    const size_t raw_size = layout.raw.size();
    const bool small = raw_size <= kSmallImageBytes;
    // Quick ranks are not always right: small images, and every image at high effort, give
    // their best three to the full compressor, medium ones their best two (the full pass costs
    // about as much as all the trials together).
    size_t finalists = 1;
    if (policy.effort >= 7 || (raw_size <= kTinyImageBytes && policy.effort >= 5))
      finalists = 3;
    else if (policy.effort >= 5 && raw_size <= kMediumImageBytes)
      finalists = 2;
    // Rank filterings by a quick compression, then compress the best at the policy's effort.
    // Small images rank with a middle level (cheap there, and closer to the final ranks); large
    // ones with level 1, which costs a fraction of the final pass.
    const int trial_level = small ? (policy.effort <= 4 ? 3 : 6) : policy.effort <= 6 ? 1 : 3;
    const bool sampled = raw_size > kMediumImageBytes && policy.effort <= 6;
    // Only the finalists keep their filtered data: a 12000 x 12000 RGBA 16-bit image holds
    // 1.15 GB of it per filtering, and all seven at once took 9.9 GB.
    std::vector<Candidate> candidates;  // the best so far by trial size, ties in trial order
    auto consider = [&](Candidate c) {
      check_time();
      c.trial_size = sampled
                         ? sampled_trial_size(c.filtered, trial_level)
                         : deflate_at_level(c.filtered, trial_level, DeflateWrapper::kZlib).size();
      const auto at = std::upper_bound(
          candidates.begin(), candidates.end(), c.trial_size,
          [](size_t size, const Candidate& kept) { return size < kept.trial_size; });
      if (size_t(at - candidates.begin()) >= finalists) return;
      candidates.insert(at, std::move(c));
      if (candidates.size() > finalists) candidates.pop_back();
    };
    if (i == 0) consider({0, "original filters", std::move(original_filtered), 0});
    const std::string prefix = layout.description.empty() ? "" : layout.description + ", ";
    for (PngFilterStrategy s : strategies_for(policy.effort))
      consider({i, prefix + kStrategyNames[int(s)], png_filter(layout.raw, layout.header, s), 0});
    if (candidates.empty()) continue;
    const size_t best_trial = candidates.front().trial_size;
    // An input whose image data is far smaller than the quick trial was packed by a strong
    // long-match encoder: the full pass (seconds on such data) almost never beats it by the
    // minimum gain. Below effort 7 it is not paid for.
    if (policy.effort <= 6 && !small &&
        double(best_trial) > kAlreadyPackedRatio * double(input_idat.size()))
      continue;
    // Very compressible large images (screenshots, sheets of icons) make libdeflate's level 12
    // slow for little more than level 11 gives.
    const bool level_11 = policy.effort >= 5 && policy.effort <= 6 && !small &&
                          double(raw_size) > kVeryCompressible * double(best_trial);
    for (const Candidate& c : candidates) {
      check_time();
      Bytes packed =
          level_11 ? deflate_at_level(c.filtered, 11, DeflateWrapper::kZlib)
                   : deflate_bytes(c.filtered, policy.effort, DeflateWrapper::kZlib, out_of_time);
      if (best.idat.empty() || chunks + packed.size() < best_file) {
        best_file = chunks + packed.size();
        best = {i, std::move(packed), c.name};
      }
    }
  }
  return best;
}

}  // namespace lighten
