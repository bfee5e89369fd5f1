#include "formats/jpeg/secondary_images.h"

#include <fmt/format.h>

#include <algorithm>

namespace lighten::jpeg {
namespace {

// MP Types (DC-007 5.2.3.3.1, the attribute's low 24 bits) that are views of the scene.
constexpr uint32_t kLargeThumbnailVga = 0x010001, kLargeThumbnailFullHd = 0x010002;
constexpr uint32_t kPanorama = 0x020001, kDisparity = 0x020002, kMultiAngle = 0x020003;

}  // namespace

Policy secondary_image_policy(uint32_t attribute, const Policy& policy) {
  const uint32_t type = attribute & 0xFFFFFF;
  const bool jpeg_data = ((attribute >> 24) & 0x7) == 0;
  const bool view = type == kLargeThumbnailVga || type == kLargeThumbnailFullHd ||
                    type == kPanorama || type == kDisparity || type == kMultiAngle;
  Policy own = policy;
  own.jpeg_shown_through.reset();  // a container's colour space is the primary image's
  // Scans as they are: a camera shows its previews on playback, and DC-007 readers may decode
  // nothing but the baseline the images were written in.
  own.jpeg_scans = ScanMode::kKeep;
  if (!view || !jpeg_data) own.mode = Mode::kLossless;
  return own;
}

std::optional<RewrittenTrailing> optimise_secondary_images(ByteView input, const Layout& layout,
                                                           const MpfIndex& mpf, Context& context) {
  const auto located = locate_secondary_images(input, layout, mpf);
  if (!located) return std::nullopt;
  RewrittenTrailing out;
  auto append = [&](ByteView b) { out.bytes.insert(out.bytes.end(), b.begin(), b.end()); };
  size_t previous = layout.image_end;
  for (const SecondaryImage& image : *located) {
    append(input.subspan(previous, image.begin - previous));
    const ByteView original = input.subspan(image.begin, image.end - image.begin);
    const Policy policy =
        secondary_image_policy(mpf.entries[image.entry].attribute, context.policy());
    const Outcome item = context.optimize_embedded_under(
        original, fmt::format("secondary image {} (MPF)", image.entry + 1), policy);
    const size_t begin = out.bytes.size();
    if (item.replaced() && item.output().size() < original.size()) {
      append(item.output());
      ++out.optimised;
      out.saved += original.size() - item.output().size();
    } else {
      append(original);
    }
    out.images.push_back({image.entry, begin, out.bytes.size()});
    previous = image.end;
  }
  append(input.subspan(previous));
  if (out.optimised == 0) return std::nullopt;
  return out;
}

std::optional<std::string> compare_secondary_images(ByteView in, const Layout& li,
                                                    const MpfIndex& a, ByteView out,
                                                    const Layout& lo, const MpfIndex& b,
                                                    const Policy& policy, Context* context,
                                                    bool& pixels_identical) {
  if (auto why = compare_mpf_entries(a, b)) return why;
  const auto from = locate_secondary_images(in, li, a);
  const auto to = locate_secondary_images(out, lo, b);
  if (!from) return "the input's MPF index does not locate its secondary images";
  if (!to || to->size() != from->size())
    return "the output's MPF index does not point at its secondary images";
  size_t at_in = li.image_end, at_out = lo.image_end;
  for (size_t k = 0; k < from->size(); ++k) {
    const SecondaryImage& x = (*from)[k];
    const SecondaryImage& y = (*to)[k];
    const std::string which = "secondary image " + std::to_string(x.entry + 1);
    if (x.entry != y.entry) return "secondary images changed order";
    if (!same_bytes(in.subspan(at_in, x.begin - at_in), out.subspan(at_out, y.begin - at_out)))
      return "data before " + which + " differs";
    const ByteView u = in.subspan(x.begin, x.end - x.begin);
    const ByteView v = out.subspan(y.begin, y.end - y.begin);
    at_in = x.end, at_out = y.end;
    if (same_bytes(u, v)) continue;
    if (!context) return which + " changed";
    const Verdict verdict = context->verify_embedded_under(
        u, v, secondary_image_policy(a.entries[x.entry].attribute, policy));
    if (!verdict.ok) return which + ": " + verdict.problem;
    pixels_identical = pixels_identical && verdict.quality.pixels_identical;
  }
  if (!same_bytes(in.subspan(at_in), out.subspan(at_out)))
    return "data after the last secondary image differs";
  return std::nullopt;
}

}  // namespace lighten::jpeg
