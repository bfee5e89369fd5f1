#include "formats/pdf/pdf_predictors.h"

#include <cstdint>
#include <limits>

#include "codecs/deflate.h"
#include "formats/png/png_filters.h"

namespace lighten::pdf {
namespace {

constexpr int kEntropyTrialEffort = 7;

// Samples per pixel of a colour space, 0 when unknown or not a plain sample layout.
int colors_of(QPDFObjectHandle space) {
  if (space.isName()) {
    const std::string n = space.getName();
    if (n == "/DeviceGray" || n == "/CalGray" || n == "/G") return 1;
    if (n == "/DeviceRGB" || n == "/CalRGB" || n == "/RGB") return 3;
    if (n == "/DeviceCMYK" || n == "/CMYK") return 4;
    return 0;
  }
  if (!space.isArray() || space.getArrayNItems() < 1 || !space.getArrayItem(0).isName()) return 0;
  const std::string family = space.getArrayItem(0).getName();
  if (family == "/CalGray" || family == "/Indexed" || family == "/I" || family == "/Separation")
    return 1;
  if (family == "/CalRGB" || family == "/Lab") return 3;
  if (family == "/ICCBased" && space.getArrayNItems() >= 2) {
    QPDFObjectHandle profile = space.getArrayItem(1);
    if (!profile.isStream()) return 0;
    QPDFObjectHandle n = profile.getDict().getKey("/N");
    return n.isInteger() && n.getIntValue() >= 1 && n.getIntValue() <= 4 ? int(n.getIntValue()) : 0;
  }
  if (family == "/DeviceN" && space.getArrayNItems() >= 2 && space.getArrayItem(1).isArray())
    return space.getArrayItem(1).getArrayNItems();
  return 0;
}

long long int_or(QPDFObjectHandle dict, const char* key, long long fallback) {
  QPDFObjectHandle v = dict.getKey(key);
  return v.isInteger() ? v.getIntValue() : v.isNull() ? fallback : -1;
}

// TIFF predictor 2 stores each sample as the difference to the same sample of the pixel before.
void undo_tiff_predictor(Bytes& data, const ImageRows& layout) {
  const size_t row_bytes = layout.row_bytes();
  const size_t pixel_bytes = size_t(layout.colors) * size_t(layout.bits / 8);
  for (size_t row = 0; row < layout.rows; ++row) {
    uint8_t* r = data.data() + row * row_bytes;
    if (layout.bits == 8) {
      for (size_t i = pixel_bytes; i < row_bytes; ++i) r[i] = uint8_t(r[i] + r[i - pixel_bytes]);
    } else {
      for (size_t i = pixel_bytes; i + 1 < row_bytes; i += 2) {
        const unsigned prev = unsigned(r[i - pixel_bytes]) << 8 | r[i - pixel_bytes + 1];
        const unsigned sum = ((unsigned(r[i]) << 8 | r[i + 1]) + prev) & 0xffff;
        r[i] = uint8_t(sum >> 8);
        r[i + 1] = uint8_t(sum);
      }
    }
  }
}

}  // namespace

std::optional<ImageRows> predictable_image(QPDFObjectHandle image) {
  QPDFObjectHandle dict = image.getDict();
  if (dict.getKey("/ImageMask").isBool() && dict.getKey("/ImageMask").getBoolValue())
    return std::nullopt;
  ImageRows layout;
  layout.colors = colors_of(dict.getKey("/ColorSpace"));
  const long long bits = int_or(dict, "/BitsPerComponent", -1);
  const long long width = int_or(dict, "/Width", -1), height = int_or(dict, "/Height", -1);
  if (layout.colors < 1 || layout.colors > 4 || (bits != 8 && bits != 16) || width < 1 ||
      height < 1 || width > std::numeric_limits<uint32_t>::max() / 8 ||
      height > std::numeric_limits<uint32_t>::max())
    return std::nullopt;
  layout.bits = int(bits);
  layout.columns = uint32_t(width);
  layout.rows = uint32_t(height);
  QPDFObjectHandle parms = dict.getKey("/DecodeParms");
  if (parms.isNull()) return layout;
  if (!parms.isDictionary()) return std::nullopt;
  const long long predictor = int_or(parms, "/Predictor", 1);
  if (predictor == 1 && parms.getKeys().size() == 1) return layout;
  // The TIFF predictor's own parameters must describe the image's rows, or the samples differ.
  if (predictor != 2 || int_or(parms, "/Colors", 1) != layout.colors ||
      int_or(parms, "/BitsPerComponent", 8) != bits || int_or(parms, "/Columns", 1) != width)
    return std::nullopt;
  for (const std::string& key : parms.getKeys())
    if (key != "/Predictor" && key != "/Colors" && key != "/BitsPerComponent" && key != "/Columns")
      return std::nullopt;
  layout.tiff_predictor = true;
  return layout;
}

std::optional<Bytes> png_predicted(const Bytes& decoded, const ImageRows& layout, int effort,
                                   const OutOfTime& out_of_time) {
  const size_t row_bytes = layout.row_bytes();
  if (row_bytes == 0 || decoded.size() / row_bytes != layout.rows ||
      decoded.size() % row_bytes != 0)
    return std::nullopt;
  // A copy only where the TIFF predictor must be undone: the image may be hundreds of megabytes.
  Bytes undone;
  if (layout.tiff_predictor) {
    undone = decoded;
    undo_tiff_predictor(undone, layout);
  }
  const Bytes& samples = layout.tiff_predictor ? undone : decoded;
  // PNG's filters look back one whole pixel, as the PDF predictor does: any colour type with the
  // same bytes per pixel filters the same way.
  static constexpr uint8_t kColorTypeOfColors[] = {0, 0, 4, 2, 6};
  PngHeader header;
  header.width = layout.columns;
  header.height = layout.rows;
  header.bit_depth = uint8_t(layout.bits);
  header.color_type = kColorTypeOfColors[layout.colors];
  Bytes rows;
  rows.reserve(samples.size() + layout.rows);
  for (size_t row = 0; row < layout.rows; ++row) {
    rows.push_back(0);
    rows.insert(rows.end(), samples.begin() + row * row_bytes,
                samples.begin() + (row + 1) * row_bytes);
  }
  Bytes best = deflate_bytes(png_filter(rows, header, PngFilterStrategy::kMinSum), effort,
                             DeflateWrapper::kZlib, out_of_time);
  // At high effort, the entropy heuristic as well: it wins on some photographic rows.
  if (effort >= kEntropyTrialEffort) {
    Bytes entropy = deflate_bytes(png_filter(rows, header, PngFilterStrategy::kEntropy), effort,
                                  DeflateWrapper::kZlib, out_of_time);
    if (entropy.size() < best.size()) best = std::move(entropy);
  }
  return best;
}

QPDFObjectHandle png_decode_parms(const ImageRows& layout) {
  QPDFObjectHandle parms = QPDFObjectHandle::newDictionary();
  parms.replaceKey("/Predictor", QPDFObjectHandle::newInteger(15));
  parms.replaceKey("/Colors", QPDFObjectHandle::newInteger(layout.colors));
  parms.replaceKey("/BitsPerComponent", QPDFObjectHandle::newInteger(layout.bits));
  parms.replaceKey("/Columns", QPDFObjectHandle::newInteger(layout.columns));
  return parms;
}

}  // namespace lighten::pdf
