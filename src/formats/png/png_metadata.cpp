#include "formats/png/png_metadata.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "codecs/exif.h"

namespace lighten {
namespace {

bool is_text(const PngChunk& c) { return c.is("tEXt") || c.is("zTXt") || c.is("iTXt"); }

// A text chunk's keyword: its bytes up to the first NUL.
std::string_view keyword(const PngChunk& c) {
  const auto end = std::find(c.data.begin(), c.data.end(), uint8_t{0});
  return {reinterpret_cast<const char*>(c.data.data()), size_t(end - c.data.begin())};
}

bool kept_in_safe(const PngChunk& c) {
  return !c.is("tIME") && !(is_text(c) && keyword(c) == "Comment");
}

bool kept_in_strip(const PngChunk& c) {
  // Colour, transparency and size; HDR mastering and light levels under their final names and
  // the earlier ones encoders wrote (mDCv, cLLi); a stereo pair (sTER); what sample values and
  // pixels measure (pCAL, sCAL, oFFs).
  static constexpr const char* kDisplay[] = {"tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "cICP",
                                             "mDCV", "cLLI", "mDCv", "cLLi", "sBIT", "bKGD",
                                             "pHYs", "sTER", "pCAL", "sCAL", "oFFs"};
  return c.critical() || std::any_of(std::begin(kDisplay), std::end(kDisplay),
                                     [&](const char* t) { return c.is(t); });
}

}  // namespace

bool is_image_data_index(const PngChunk& c) { return c.is("iDOT"); }

PngFile png_chunks_kept(const PngFile& png, MetadataPolicy policy, Bytes& storage,
                        size_t& dropped) {
  dropped = 0;
  PngFile out{png.header, {}, png.trailing};
  bool exif_seen = false;  // readers (libpng) take the first eXIf and ignore any other
  for (const PngChunk& c : png.chunks) {
    if (is_image_data_index(c)) continue;
    if (policy == MetadataPolicy::kKeep) {
      out.chunks.push_back(c);
      continue;
    }
    const bool kept = policy == MetadataPolicy::kSafe ? kept_in_safe(c) : kept_in_strip(c);
    if (kept) {
      out.chunks.push_back(c);
      continue;
    }
    ++dropped;
    if (!c.is("eXIf") || std::exchange(exif_seen, true)) continue;
    const std::optional<int> orientation = tiff_orientation(c.data);
    if (!orientation || *orientation == 1) continue;
    // `storage` is written once, so the views into it stay valid.
    storage.clear();
    append_png_chunk(storage, "eXIf", orientation_only_tiff(*orientation));
    PngChunk made = c;
    made.whole = ByteView(storage);
    made.data = made.whole.subspan(8, storage.size() - 12);
    out.chunks.push_back(made);
  }
  return out;
}

}  // namespace lighten
