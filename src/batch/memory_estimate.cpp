#include "batch/memory_estimate.h"

#include <algorithm>
#include <optional>

namespace lighten::batch {
namespace {

// Peak resident memory per pixel, measured with /usr/bin/time -f %M over `lighten optimize
// --jobs 1` (process base included): JPEG lossless 6.9-7.4 bytes (48 MP 4:4:4, 12 MP 4:2:0);
// perceptual 21.5-25.3 (the same, and a 22 MP 4:4:4 photo searched as 4:2:0 too); PNG 35-41
// bytes per pixel of 8-bit RGB, about 13 times its raw samples. Rounded up.
constexpr uint64_t kJpegLosslessPerPixel = 8;
constexpr uint64_t kJpegPerceptualPerPixel = 26;
constexpr uint64_t kPngPerRawByte = 14;
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
  bool beyond = false;             // a JPEG whose frame header lies past the bytes given
};

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

uint64_t memory_estimate(uint64_t file_size, ByteView head, const Policy& policy) {
  uint64_t estimate = saturating_mul(file_size, kPerFileByte);
  const uint64_t around = saturating_mul(file_size, kImagePerFileByte);
  // Frames over the pixel limit are refused before they are decoded: priced by size.
  const uint64_t limit = policy.limits.max_pixels;
  if (const std::optional<uint64_t> pixels = jpeg_frame(head).pixels; pixels && *pixels <= limit) {
    const uint64_t per_pixel =
        policy.mode == Mode::kLossless ? kJpegLosslessPerPixel : kJpegPerceptualPerPixel;
    estimate = std::max(estimate, saturating_add(saturating_mul(*pixels, per_pixel), around));
  } else if (const std::optional<PngImage> png = png_image(head); png && png->pixels <= limit) {
    estimate =
        std::max(estimate, saturating_add(saturating_mul(png->raw_bytes, kPngPerRawByte), around));
  }
  return std::max(estimate, kMinEstimate);
}

}  // namespace lighten::batch
