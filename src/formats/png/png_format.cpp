#include "formats/png/png_format.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "codecs/deflate.h"
#include "core/policy_names.h"
#include "formats/png/png_chunks.h"
#include "formats/png/png_filters.h"
#include "formats/png/png_metadata.h"
#include "formats/png/png_pack.h"
#include "formats/png/png_reduce.h"

namespace lighten {
namespace {

void refuse_variants(const PngFile& png, const Policy& policy) {
  for (const PngChunk& c : png.chunks) {
    if (c.is("acTL"))
      throw FormatError(Reason::kUnsupportedVariant, 0, "animated PNG (APNG) is left as it is");
    if (c.is("CgBI"))
      throw FormatError(Reason::kUnsupportedVariant, 0,
                        "Apple CgBI PNG (not a standard PNG) is left as it is");
    if (c.is("caBX"))
      throw FormatError(Reason::kSigned, 0,
                        "C2PA Content Credentials (caBX) sign the file's bytes: any rewrite "
                        "would break them");
    if (c.is("dSIG"))
      throw FormatError(Reason::kSigned, 0,
                        "a digital signature (dSIG chunks) covers the chunks between its two "
                        "halves: any rewrite would break it");
    const bool known_critical = c.is("IHDR") || c.is("PLTE") || c.is("IDAT") || c.is("IEND");
    if (c.critical() && !known_critical)
      throw FormatError(Reason::kUnsupportedVariant, 0, "unknown critical chunk " + c.type_name());
  }
  if (uint64_t(png.header.width) * png.header.height > policy.limits.max_pixels)
    throw FormatError(Reason::kLimitExceeded, 16, "more pixels than --max-pixels");
}

Bytes image_data(const PngFile& png) {
  size_t total = 0;
  for (const PngChunk& c : png.chunks)
    if (c.is("IDAT")) total += c.data.size();
  Bytes idat;
  idat.reserve(total);
  for (const PngChunk& c : png.chunks)
    if (c.is("IDAT")) idat.insert(idat.end(), c.data.begin(), c.data.end());
  return idat;
}

}  // namespace

Outcome optimize_png(ByteView input, Context& context) {
  const Policy& policy = context.policy();
  const PngFile png = read_png_chunks(input);
  refuse_variants(png, policy);
  Bytes made_chunk;  // an orientation-only eXIf under --metadata strip
  size_t dropped = 0;
  const PngFile kept = png_chunks_kept(png, policy.metadata, made_chunk, dropped);
  const Bytes idat = image_data(png);
  const uint64_t size =
      png_data_size(png.header, std::min<uint64_t>(policy.limits.max_expanded_bytes, 1ull << 34));
  Bytes original_filtered;
  try {
    original_filtered = inflate_exact(idat, size_t(size), DeflateWrapper::kZlib);
  } catch (const FormatError& e) {
    // The "recorded size" the inflater speaks of is what the header's rows need.
    std::string what = e.what();
    const std::string_view recorded = "its recorded size";
    if (const size_t at = what.find(recorded); at != std::string::npos)
      what.replace(at, recorded.size(), "what the rows need");
    throw FormatError(e.reason(), e.offset(),
                      "image data for " + std::to_string(png.header.width) + "x" +
                          std::to_string(png.header.height) + " pixels: " + what);
  }
  Bytes raw = original_filtered;
  png_unfilter(raw, png.header);

  std::vector<PngLayout> layouts;
  if (policy.png_reduce) layouts = reduced_png_layouts(kept, raw);
  layouts.insert(layouts.begin(), original_png_layout(kept, std::move(raw)));
  PngPacked best = pack_png_layouts(layouts, std::move(original_filtered), idat, context);
  Outcome outcome;
  outcome.kind = Kind::kPng;
  outcome.bytes_in = input.size();
  const bool had_index = std::any_of(png.chunks.begin(), png.chunks.end(), is_image_data_index);
  const std::string dropped_text =
      (dropped ? ", " + std::to_string(dropped) + " metadata chunk" + (dropped > 1 ? "s" : "") +
                     " dropped (--metadata " +
                     std::string(kMetadataNames[size_t(policy.metadata)]) + ")"
               : "") +
      (had_index ? ", Apple's iDOT dropped (its offsets would point into the new image data)" : "");
  if (dropped && (best.idat.empty() || best.idat.size() >= idat.size())) {
    // No trial packs the image data tighter, but chunks go: the data is kept as it was.
    outcome.bytes = assemble_png(layouts[0], idat);
    outcome.action = Action::kReplaced;
    outcome.detail = "image data kept as it was" + dropped_text;
    return outcome;
  }
  if (best.idat.empty()) {
    outcome.action = Action::kKept;
    outcome.reason = Reason::kNoGain;
    outcome.message =
        "the image data is already packed far tighter than a quick trial; a full pass is left to "
        "--effort 7";
    return outcome;
  }
  outcome.bytes = assemble_png(layouts[best.layout], best.idat);
  outcome.action = Action::kReplaced;
  outcome.detail = "re-deflated, " + best.description + dropped_text;
  return outcome;
}

void describe_png(ByteView input, FileInfo& info) {
  const PngFile png = read_png_chunks(input);
  static constexpr const char* kColorTypes[] = {"gray",       "?", "RGB", "palette",
                                                "gray+alpha", "?", "RGBA"};
  const PngHeader& h = png.header;
  info.properties.emplace_back("width", std::to_string(h.width));
  info.properties.emplace_back("height", std::to_string(h.height));
  info.properties.emplace_back("colour", std::string(kColorTypes[h.color_type]) + ", " +
                                             std::to_string(h.bit_depth) + "-bit");
  info.properties.emplace_back("interlaced", h.interlace ? "Adam7" : "no");
  size_t idat_chunks = 0, idat_bytes = 0;
  std::string others;
  for (const PngChunk& c : png.chunks) {
    if (c.is("IDAT")) {
      ++idat_chunks;
      idat_bytes += c.data.size();
    } else if (!c.is("IHDR") && !c.is("IEND")) {
      others += (others.empty() ? "" : ", ") + c.type_name() + " " + std::to_string(c.data.size());
    }
  }
  info.properties.emplace_back("image data", std::to_string(idat_bytes) + " bytes in " +
                                                 std::to_string(idat_chunks) + " IDAT chunks");
  info.properties.emplace_back("other chunks", others.empty() ? "none" : others);
  if (!png.trailing.empty())
    info.properties.emplace_back("after IEND", std::to_string(png.trailing.size()) + " bytes");
}

}  // namespace lighten
