#include "formats/png/png_metadata.h"

#include <algorithm>
#include <optional>
#include <string_view>

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
  static constexpr const char* kDisplay[] = {"tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "cICP",
                                             "mDCV", "cLLI", "sBIT", "bKGD", "pHYs"};
  return c.critical() || std::any_of(std::begin(kDisplay), std::end(kDisplay),
                                     [&](const char* t) { return c.is(t); });
}

}  // namespace

bool is_image_data_index(const PngChunk& c) { return c.is("iDOT"); }

PngFile png_chunks_kept(const PngFile& png, MetadataPolicy policy, Bytes& storage,
                        size_t& dropped) {
  dropped = 0;
  PngFile out{png.header, {}, png.trailing};
  bool orientation_kept = false;
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
    if (!c.is("eXIf") || orientation_kept) continue;
    const std::optional<int> orientation = tiff_orientation(c.data);
    if (!orientation || *orientation == 1) continue;
    // `storage` is written once, so the views into it stay valid.
    storage.clear();
    append_png_chunk(storage, "eXIf", orientation_only_tiff(*orientation));
    PngChunk made = c;
    made.whole = ByteView(storage);
    made.data = made.whole.subspan(8, storage.size() - 12);
    out.chunks.push_back(made);
    orientation_kept = true;
  }
  return out;
}

}  // namespace lighten
