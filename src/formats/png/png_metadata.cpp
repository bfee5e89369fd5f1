#include "formats/png/png_metadata.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "codecs/deflate.h"
#include "codecs/exif.h"
#include "core/errors.h"

namespace lighten {
namespace {

bool is_text(const PngChunk& c) { return c.is("tEXt") || c.is("zTXt") || c.is("iTXt"); }

// A text chunk's keyword: its bytes up to the first NUL.
std::string_view keyword(const PngChunk& c) {
  const auto end = std::find(c.data.begin(), c.data.end(), uint8_t{0});
  return {reinterpret_cast<const char*>(c.data.data()), size_t(end - c.data.begin())};
}

// A text chunk's text, inflated where it is compressed; nullopt when it cannot be read.
std::optional<std::string> text_of(const PngChunk& c) {
  constexpr size_t kLongest = 16u << 20;  // XMP with previews runs to a few MB
  ByteView rest = c.data.subspan(std::min(c.data.size(), keyword(c).size() + 1));
  bool compressed = c.is("zTXt");
  if (c.is("iTXt")) {  // flag, method, language NUL, translated keyword NUL, text
    if (rest.size() < 2) return std::nullopt;
    compressed = rest[0] != 0;
    rest = rest.subspan(2);
    for (int field = 0; field < 2; ++field) {
      const auto nul = std::find(rest.begin(), rest.end(), uint8_t{0});
      if (nul == rest.end()) return std::nullopt;
      rest = rest.subspan(size_t(nul - rest.begin()) + 1);
    }
  } else if (compressed) {
    if (rest.empty()) return std::nullopt;
    rest = rest.subspan(1);  // the method
  }
  if (!compressed) return std::string(rest.begin(), rest.end());
  try {
    const Bytes text = inflate_bounded(rest, kLongest, DeflateWrapper::kZlib);
    return std::string(text.begin(), text.end());
  } catch (const FormatError&) {
    return std::nullopt;
  }
}

// Pillow turns a PNG by text too, where no eXIf gives an orientation: XMP's tiff:Orientation
// and ImageMagick's "Raw profile type exif" (EXIF in hexadecimal after three lines).
std::optional<int> text_orientation(const PngChunk& c) {
  if (!is_text(c)) return std::nullopt;
  const std::string_view key = keyword(c);
  if (key != "XML:com.adobe.xmp" && key != "Raw profile type exif") return std::nullopt;
  const std::optional<std::string> text = text_of(c);
  if (!text) return std::nullopt;
  if (key == "XML:com.adobe.xmp") {
    for (const std::string_view tag : {"tiff:Orientation=\"", "tiff:Orientation>"}) {
      const size_t at = text->find(tag);
      if (at != std::string::npos && at + tag.size() < text->size()) {
        const char digit = (*text)[at + tag.size()];
        if (digit >= '0' && digit <= '9') return digit - '0';
      }
    }
    return std::nullopt;
  }
  size_t at = 0;
  for (int line = 0; line < 3; ++line) {
    const size_t end = text->find('\n', at);
    if (end == std::string::npos) return std::nullopt;
    at = end + 1;
  }
  Bytes exif;
  int high = -1;
  for (size_t i = at; i < text->size(); ++i) {
    const char ch = (*text)[i];
    const int v = ch >= '0' && ch <= '9'   ? ch - '0'
                  : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                  : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                           : -1;
    if (v < 0) continue;
    if (high < 0) {
      high = v;
    } else {
      exif.push_back(uint8_t(high * 16 + v));
      high = -1;
    }
  }
  ByteView tiff(exif);
  if (starts_with(tiff, std::string_view("Exif\0\0", 6))) tiff = tiff.subspan(6);
  return tiff_orientation(tiff);
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
    // Text that turns the image in Pillow stays whole: an eXIf made from it would turn it in
    // every other reader too.
    const bool turns = policy == MetadataPolicy::kStrip && text_orientation(c).value_or(1) != 1;
    const bool kept = policy == MetadataPolicy::kSafe ? kept_in_safe(c) : kept_in_strip(c) || turns;
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
