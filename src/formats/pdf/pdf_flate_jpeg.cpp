#include "formats/pdf/pdf_flate_jpeg.h"

// clang-format off
#include <cstdio>   // jpeglib.h needs FILE
#include <jpeglib.h>
// clang-format on

#include <csetjmp>
#include <cstdlib>

#include "core/errors.h"
#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/metadata.h"
#include "formats/jpeg/perceptual.h"
#include "quality/floor_score.h"

namespace lighten::pdf {
namespace {

// Smaller images are icons and rules more often than photographs, and gain little.
constexpr long long kMinPixels = 128 * 128;
constexpr long long kMaxSide = 1 << 15;  // libjpeg's limit is 65500
// A 12000x12000 grey page took 1.03 GB and 89 s from a 978 kB file: larger images are only
// re-deflated.
constexpr long long kMaxPixels = 64'000'000;
// The quality search range: below 30 blocks show whatever the metric says.
constexpr int kLowestQuality = 30, kHighestQuality = 95;

int components_of(QPDFObjectHandle image) {
  QPDFObjectHandle space = image.getDict().getKey("/ColorSpace");
  return space.isNameAndEquals("/DeviceRGB") ? 3 : space.isNameAndEquals("/DeviceGray") ? 1 : 0;
}

struct EncodeError {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
};

extern "C" void on_encode_error(j_common_ptr c) {
  std::longjmp(reinterpret_cast<EncodeError*>(c->err)->jump, 1);
}
extern "C" void on_encode_message(j_common_ptr) {}

// libjpeg reports errors by longjmp: no C++ object with a destructor lives in this frame.
bool encode_rows(const uint8_t* samples, JDIMENSION width, JDIMENSION height, int components,
                 int quality, const uint8_t* marker, unsigned marker_size, unsigned char** out,
                 unsigned long* out_size) {
  jpeg_compress_struct c;
  EncodeError err;
  c.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = on_encode_error;
  err.pub.output_message = on_encode_message;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&c);
    return false;
  }
  jpeg_create_compress(&c);
  jpeg_mem_dest(&c, out, out_size);
  c.image_width = width;
  c.image_height = height;
  c.input_components = components;
  c.in_color_space = components == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, quality, TRUE);
  c.optimize_coding = TRUE;
  c.write_JFIF_header = FALSE;  // PDF says what the samples mean; JFIF would only add bytes
  jpeg_start_compress(&c, TRUE);
  jpeg_write_marker(&c, JPEG_APP0 + 15, marker, marker_size);
  const size_t stride = size_t(width) * size_t(components);
  while (c.next_scanline < c.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(samples + stride * c.next_scanline);
    jpeg_write_scanlines(&c, &row, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  return true;
}

std::optional<Bytes> encode(const Bytes& samples, uint32_t width, uint32_t height, int components,
                            int quality, double floor) {
  // The marker carries the floor; the score is not known before encoding, so it says the floor.
  const Bytes segment = jpeg::quality_marker_segment(floor, floor);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  const bool ok = encode_rows(samples.data(), width, height, components, quality,
                              segment.data() + 4, unsigned(segment.size() - 4), &out, &size);
  std::optional<Bytes> jpeg;
  if (ok && out != nullptr) jpeg = Bytes(out, out + size);
  std::free(out);
  return jpeg;
}

struct Score {
  double whole = 0, worst_tile = 0;
};

std::optional<Score> score_of(const ImageRgb8& reference, ByteView jpeg) {
  std::optional<ImageRgb8> decoded = jpeg::to_metric_image(jpeg::decode_pixels(jpeg), nullptr);
  if (!decoded || decoded->width != reference.width || decoded->height != reference.height ||
      decoded->channels != reference.channels)
    return std::nullopt;
  const Ssimulacra2Result r = floor_score(reference, *decoded);
  return Score{r.score, r.worst_tile_score};
}

bool meets(const Score& s, double floor) {
  return s.whole >= floor && s.worst_tile >= floor - jpeg::kWorstTileMargin;
}

std::optional<ImageRgb8> reference_of(QPDFObjectHandle image, const Bytes& samples) {
  QPDFObjectHandle dict = image.getDict();
  const int components = components_of(image);
  if (components == 0 || !dict.getKey("/Width").isInteger() || !dict.getKey("/Height").isInteger())
    return std::nullopt;
  const long long w = dict.getKey("/Width").getIntValue(), h = dict.getKey("/Height").getIntValue();
  if (w < 8 || h < 8 || w > kMaxSide || h > kMaxSide ||
      samples.size() != size_t(w) * size_t(h) * size_t(components))
    return std::nullopt;
  return ImageRgb8{uint32_t(w), uint32_t(h), uint32_t(components),
                   SampleBuffer(samples.begin(), samples.end())};
}

}  // namespace

bool may_become_jpeg(QPDFObjectHandle image, const Policy& policy, const ImageFacts& facts) {
  if (policy.mode != Mode::kCompact || policy.quality_marker != QualityMarker::kWrite) return false;
  QPDFObjectHandle dict = image.getDict();
  if (facts.used_as_mask(image) || facts.in_redefined_space(image) || components_of(image) == 0 ||
      !dict.getKey("/BitsPerComponent").isInteger() ||
      dict.getKey("/BitsPerComponent").getIntValue() != 8)
    return false;
  for (const char* key : {"/Decode", "/Mask", "/SMaskInData", "/ImageMask", "/Alternates"})
    if (dict.hasKey(key)) return false;
  QPDFObjectHandle w = dict.getKey("/Width"), h = dict.getKey("/Height");
  if (!w.isInteger() || !h.isInteger() || w.getIntValue() <= 0 || h.getIntValue() <= 0 ||
      w.getIntValue() > kMaxSide || h.getIntValue() > kMaxSide)
    return false;
  const long long pixels = w.getIntValue() * h.getIntValue();
  return pixels >= kMinPixels && pixels <= kMaxPixels &&
         uint64_t(pixels) <= policy.limits.max_pixels;
}

std::optional<Bytes> photo_as_jpeg(QPDFObjectHandle image, const Bytes& samples,
                                   const Policy& policy, const OutOfTime& out_of_time) {
  const std::optional<ImageRgb8> reference = reference_of(image, samples);
  if (!reference) return std::nullopt;
  const double floor = quality_floor(policy);
  // The score falls as the quality does: search for the lowest quality that meets the floor.
  int low = kLowestQuality, high = kHighestQuality;
  std::optional<Bytes> best;
  while (low <= high) {
    if (out_of_time && out_of_time())
      throw FormatError(Reason::kLimitExceeded, 0,
                        "time budget spent turning a Flate image into a JPEG");
    const int quality = (low + high) / 2;
    std::optional<Bytes> jpeg = encode(samples, reference->width, reference->height,
                                       int(reference->channels), quality, floor);
    if (!jpeg) return best;
    const std::optional<Score> score = score_of(*reference, *jpeg);
    if (score && meets(*score, floor)) {
      best = std::move(jpeg);
      high = quality - 1;
    } else {
      low = quality + 1;
    }
  }
  return best;
}

std::string check_photo_jpeg(QPDFObjectHandle image, const Bytes& samples, ByteView jpeg,
                             const Policy& policy, double* score) {
  const double floor = quality_floor(policy);
  if (policy.mode != Mode::kCompact) return "a Flate image became a JPEG outside compact mode";
  const std::optional<ImageRgb8> reference = reference_of(image, samples);
  if (!reference) return "a Flate image that cannot become a JPEG became one";
  const std::optional<Score> s = score_of(*reference, jpeg);
  if (!s) return "a JPEG made from a Flate image has other dimensions";
  *score = s->whole;
  if (!meets(*s, floor))
    return "a JPEG made from a Flate image scores " + std::to_string(s->whole) + " (worst tile " +
           std::to_string(s->worst_tile) + "), under the floor";
  return {};
}

}  // namespace lighten::pdf
