#include "batch/memory_estimate.h"

#include <algorithm>
#include <optional>

namespace lighten::batch {
namespace {

// Peak resident memory, measured with /usr/bin/time -f %M over `lighten optimize --jobs 1`
// (process base included) on 8-40 MP photos with 1.5 to 4 DCT coefficients a pixel (4:2:0,
// 4:2:2, 4:4:4, RGB-coded, CMYK): JPEG lossless 4.1-15.1 bytes a pixel, perceptual 16.3-33.9,
// growing with the coefficients (the coefficient arrays and their copies) as well as with the
// pixels (decodes and the metric). Priced in sixteenths of a byte, rounded up to bound every
// one of them, the input's and output's bytes (kImagePerFileByte) included: lossless 4 bytes a
// pixel and 2.75 a coefficient, perceptual 16 and 5.5 (a 22 MP 4:4:4 photo searched both at
// its own sampling and as 4:2:0 took 31.7 a pixel, a 12 MP CMYK one 33.9). PNG 35-41 bytes per
// pixel of 8-bit RGB, about 13 times its raw samples.
struct JpegPrice {
  uint64_t per_pixel, per_coefficient;  // in sixteenths of a byte
};
constexpr JpegPrice kJpegLossless{4 * 16, 44}, kJpegPerceptual{16 * 16, 88};
constexpr uint64_t kPngPerRawByte = 14;
// The metric works in bands whose rows span the whole width: about 2.7 kB a column over its six
// scales, whatever the height, so a 65535-pixel-wide strip takes 180 MB that its pixels do not
// account for. Perceptual modes only.
constexpr uint64_t kMetricPerColumn = 4096;
// Everything else, and images whose header lies beyond the head: a multiple of the file size.
constexpr uint64_t kPerFileByte = 16;
// The input, the output and the mirror's copy besides the decoded planes.
constexpr uint64_t kImagePerFileByte = 4;
constexpr uint64_t kMinEstimate = 1 << 20;

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}
uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

uint32_t be16(ByteView b, size_t at) { return uint32_t(b[at]) << 8 | b[at + 1]; }
uint32_t be32(ByteView b, size_t at) { return be16(b, at) << 16 | be16(b, at + 2); }

struct JpegFrame {
  std::optional<uint64_t> pixels;  // width times height
  uint64_t width = 0;
  // DCT coefficients a pixel, in sixteenths: each component's share of the largest sampling
  // factors, summed (24 for 4:2:0, 48 for 4:4:4, 64 for CMYK; 64 when the components lie past
  // the bytes given or do not parse).
  uint64_t coefficients_16 = 64;
  bool beyond = false;  // a JPEG whose frame header lies past the bytes given
};

// The components' share of the pixels from a frame header's component list at `at` (Nf, then
// three bytes a component, at most libjpeg's 10), in sixteenths; nullopt when it lies past `b`
// or does not parse.
std::optional<uint64_t> coefficients_16_of(ByteView b, size_t at) {
  if (at >= b.size()) return std::nullopt;
  const size_t n = b[at];
  if (n == 0 || n > 10 || at + 1 + 3 * n > b.size()) return std::nullopt;
  uint64_t h_max = 0, v_max = 0, sum = 0;
  for (size_t c = 0; c < n; ++c) {
    const uint8_t factors = b[at + 1 + 3 * c + 1];
    const uint64_t h = factors >> 4, v = factors & 15;
    if (h == 0 || v == 0 || h > 4 || v > 4) return std::nullopt;
    h_max = std::max(h_max, h);
    v_max = std::max(v_max, v);
    sum += h * v;
  }
  return (16 * sum + h_max * v_max - 1) / (h_max * v_max);
}

// The first frame header (SOF0-SOF15 but DHT, JPG and DAC), walking the segments before it.
JpegFrame jpeg_frame(ByteView b) {
  JpegFrame out;
  if (b.size() < 4 || b[0] != 0xFF || b[1] != 0xD8) return out;
  size_t at = 2;
  for (;;) {
    if (at + 4 > b.size()) {
      out.beyond = true;
      return out;
    }
    if (b[at] != 0xFF) return out;
    const uint8_t marker = b[at + 1];
    if (marker == 0xFF) {  // fill byte
      ++at;
      continue;
    }
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) {  // no length
      at += 2;
      continue;
    }
    if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
      if (at + 9 > b.size()) {
        out.beyond = true;
        return out;
      }
      out.pixels = uint64_t(be16(b, at + 5)) * be16(b, at + 7);
      out.width = be16(b, at + 7);
      out.coefficients_16 = coefficients_16_of(b, at + 9).value_or(out.coefficients_16);
      return out;
    }
    if (marker == 0xDA || marker == 0xD9) return out;  // no frame before the scan
    const uint32_t length = be16(b, at + 2);
    if (length < 2) return out;
    at += 2 + length;
  }
}

struct PngImage {
  uint64_t pixels = 0;
  uint64_t raw_bytes = 0;  // width x height x channels x bytes per sample
};

std::optional<PngImage> png_image(ByteView b) {
  static constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (b.size() < 8 + 8 + 13 || !std::equal(kSignature, kSignature + 8, b.begin())) return {};
  if (!(b[12] == 'I' && b[13] == 'H' && b[14] == 'D' && b[15] == 'R')) return std::nullopt;
  const uint64_t pixels = uint64_t(be32(b, 16)) * be32(b, 20);
  const uint8_t depth = b[24], colour = b[25];
  const uint64_t channels = colour == 2 ? 3 : colour == 4 ? 2 : colour == 6 ? 4 : 1;
  return PngImage{pixels, saturating_mul(pixels, channels * (depth > 8 ? 2 : 1))};
}

}  // namespace

bool frame_header_beyond(ByteView head) { return jpeg_frame(head).beyond; }

bool streamed_unread(uint64_t file_size, ByteView head) {
  return file_size > kStreamedAbove && !head.empty() && !may_optimize(head);
}

uint64_t memory_estimate(uint64_t file_size, ByteView head, const Policy& policy) {
  if (streamed_unread(file_size, head)) return kMinEstimate;
  uint64_t estimate = saturating_mul(file_size, kPerFileByte);
  const uint64_t around = saturating_mul(file_size, kImagePerFileByte);
  // Frames over the pixel limit are refused before they are decoded: priced by size.
  const uint64_t limit = policy.limits.max_pixels;
  if (const JpegFrame frame = jpeg_frame(head); frame.pixels && *frame.pixels <= limit) {
    const JpegPrice price = policy.mode == Mode::kLossless ? kJpegLossless : kJpegPerceptual;
    const uint64_t per_pixel_16 =
        price.per_pixel + (price.per_coefficient * frame.coefficients_16 + 15) / 16;
    const uint64_t image_16 = saturating_mul(*frame.pixels, per_pixel_16);
    uint64_t image = image_16 / 16 + (image_16 % 16 != 0);
    if (policy.mode != Mode::kLossless) image += frame.width * kMetricPerColumn;
    estimate = std::max(estimate, saturating_add(image, around));
  } else if (const std::optional<PngImage> png = png_image(head); png && png->pixels <= limit) {
    estimate =
        std::max(estimate, saturating_add(saturating_mul(png->raw_bytes, kPngPerRawByte), around));
  }
  return std::max(estimate, kMinEstimate);
}

uint64_t ItemGate::admit(std::span<const uint8_t> item, const Policy& policy) {
  const uint64_t need = memory_estimate(item.size(), item, policy);
  scheduler_.reserve(need);
  return need;
}

}  // namespace lighten::batch
