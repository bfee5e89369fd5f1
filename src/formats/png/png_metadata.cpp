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

// XMP's tiff:Orientation as Pillow finds it: the first "tiff:Orientation" followed by '="' or
// '>' and a digit.
std::optional<int> xmp_orientation(std::string_view text) {
  constexpr std::string_view kTag = "tiff:Orientation";
  for (size_t at = text.find(kTag); at != std::string_view::npos; at = text.find(kTag, at + 1)) {
    const std::string_view rest = text.substr(at + kTag.size());
    const size_t digit = rest.starts_with("=\"") ? 2 : rest.starts_with(">") ? 1 : 0;
    if (digit && digit < rest.size() && rest[digit] >= '0' && rest[digit] <= '9')
      return rest[digit] - '0';
  }
  return std::nullopt;
}

// ImageMagick's "Raw profile type exif": EXIF in hexadecimal after three lines.
std::optional<int> raw_profile_orientation(std::string_view text) {
  size_t at = 0;
  for (int line = 0; line < 3; ++line) {
    const size_t end = text.find('\n', at);
    if (end == std::string_view::npos) return std::nullopt;
    at = end + 1;
  }
  Bytes exif;
  int high = -1;
  for (const char ch : text.substr(at)) {
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

// The text chunk Pillow turns the image by, where that turns it (orientation other than 1);
// nullptr otherwise. In a file without eXIf, Pillow takes the last raw EXIF profile's
// orientation, or where that gives none the last XMP's. Beside an eXIf none is kept: whether
// Pillow reads text after the image data then depends on whether its caller loaded the pixels
// first, and the eXIf is what every other reader goes by.
const PngChunk* turning_text(const PngFile& png) {
  const PngChunk *exif = nullptr, *raw = nullptr, *xmp = nullptr;
  for (const PngChunk& c : png.chunks) {
    if (c.is("eXIf")) exif = &c;
    if (is_text(c) && keyword(c) == "Raw profile type exif") raw = &c;
    if (is_text(c) && keyword(c) == "XML:com.adobe.xmp") xmp = &c;
  }
  auto text_gives = [](const PngChunk* c, auto orientation_in) -> std::optional<int> {
    if (!c) return std::nullopt;
    const std::optional<std::string> text = text_of(*c);
    return text ? orientation_in(*text) : std::nullopt;
  };
  if (exif) return nullptr;
  const PngChunk* source = nullptr;
  std::optional<int> orientation = text_gives(raw, raw_profile_orientation);
  if (orientation) source = raw;
  if (!orientation && (orientation = text_gives(xmp, xmp_orientation))) source = xmp;
  return source && orientation != 1 ? source : nullptr;
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
  // Text that turns the image in Pillow stays whole: an eXIf made from it would turn it in every
  // other reader too.
  const PngChunk* turning = policy == MetadataPolicy::kStrip ? turning_text(png) : nullptr;
  for (const PngChunk& c : png.chunks) {
    if (is_image_data_index(c)) continue;
    if (policy == MetadataPolicy::kKeep) {
      out.chunks.push_back(c);
      continue;
    }
    const bool kept =
        policy == MetadataPolicy::kSafe ? kept_in_safe(c) : kept_in_strip(c) || &c == turning;
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
