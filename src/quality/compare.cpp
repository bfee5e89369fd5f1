// compare_images: decode with the field's reference decoders, then SSIMULACRA2.
#include "lighten/compare.h"

// clang-format off
#include <cstddef>
#include <cstdio>
#include <jpeglib.h>
// clang-format on
#include <png.h>

#include <fmt/format.h>

#include <cmath>
#include <csetjmp>
#include <memory>
#include <string>

#include "quality/butteraugli.h"
#include "quality/floor_score.h"
#include "quality/image.h"

namespace lighten {
namespace {

constexpr uint64_t kMaxPixels = 500'000'000;
// What libjxl 0.7's butteraugli holds per pixel (measured: 1.58 GB at 6 MP, 15.4 GB at 64 MP).
constexpr double kButteraugliBytesPerPixel = 240;

struct JpegErr {
  jpeg_error_mgr pub;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {};
};

extern "C" void compare_error_exit(j_common_ptr c) {
  auto* e = reinterpret_cast<JpegErr*>(c->err);
  (*c->err->format_message)(c, e->message);
  longjmp(e->jump, 1);
}

struct JpegDecoder {
  jpeg_decompress_struct info;
  JpegErr err;
};

// Plain C data only between setjmp and longjmp; the output vector is sized before.
bool decode_jpeg_raw(JpegDecoder* d, std::span<const uint8_t> bytes, ImageRgb8* out) {
  if (setjmp(d->err.jump)) return false;
  jpeg_create_decompress(&d->info);
  jpeg_mem_src(&d->info, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&d->info, TRUE);
  // What libjpeg decodes to: gray, RGB (from YCbCr or RGB) or CMYK (from CMYK or YCCK).
  const J_COLOR_SPACE space = d->info.out_color_space;
  const bool cmyk = space == JCS_CMYK;
  if (space != JCS_GRAYSCALE && space != JCS_RGB && !cmyk) {
    std::snprintf(d->err.message, sizeof(d->err.message),
                  "only gray, colour and CMYK JPEGs are compared");
    return false;
  }
  jpeg_start_decompress(&d->info);
  if (uint64_t(d->info.output_width) * d->info.output_height > kMaxPixels) {
    std::snprintf(d->err.message, sizeof(d->err.message), "image too large");
    return false;
  }
  out->width = d->info.output_width;
  out->height = d->info.output_height;
  out->channels = uint32_t(d->info.output_components);
  const size_t stride = size_t(out->width) * out->channels;
  out->samples.resize(stride * out->height);
  while (d->info.output_scanline < d->info.output_height) {
    JSAMPROW row = out->samples.data() + stride * d->info.output_scanline;
    jpeg_read_scanlines(&d->info, &row, 1);
  }
  jpeg_finish_decompress(&d->info);
  if (cmyk) {
    rgb_from_cmyk(out->samples);
    out->channels = 3;
  }
  return true;
}

ImageRgb8 decode_jpeg(std::span<const uint8_t> bytes) {
  auto d = std::make_unique<JpegDecoder>();
  d->info.err = jpeg_std_error(&d->err.pub);
  d->err.pub.error_exit = compare_error_exit;
  ImageRgb8 img;
  const bool ok = decode_jpeg_raw(d.get(), bytes, &img);
  jpeg_destroy_decompress(&d->info);
  if (!ok) throw std::runtime_error(std::string("JPEG: ") + d->err.message);
  return img;
}

ImageRgb8 decode_png(std::span<const uint8_t> bytes) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()))
    throw std::runtime_error(std::string("PNG: ") + image.message);
  const bool gray = (image.format & PNG_FORMAT_FLAG_COLOR) == 0;
  image.format = gray ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  if (uint64_t(image.width) * image.height > kMaxPixels) {
    png_image_free(&image);
    throw std::runtime_error("PNG: image too large");
  }
  ImageRgb8 out;
  out.width = image.width;
  out.height = image.height;
  out.channels = gray ? 1 : 3;
  out.samples.resize(PNG_IMAGE_SIZE(image));
  // Composited on black when the PNG has alpha (both sides get the same treatment).
  if (!png_image_finish_read(&image, nullptr, out.samples.data(), 0, nullptr))
    throw std::runtime_error(std::string("PNG: ") + image.message);
  return out;
}

ImageRgb8 decode_any(std::span<const uint8_t> bytes) {
  if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF)
    return decode_jpeg(bytes);
  if (bytes.size() >= 8 && bytes[0] == 0x89 && bytes[1] == 'P' && bytes[2] == 'N' &&
      bytes[3] == 'G')
    return decode_png(bytes);
  throw std::runtime_error("not a JPEG or PNG image");
}

}  // namespace

ImageScores compare_images(std::span<const uint8_t> reference, std::span<const uint8_t> distorted,
                           bool with_butteraugli, uint64_t butteraugli_max_pixels) {
  const ImageRgb8 a = decode_any(reference);
  const ImageRgb8 b = decode_any(distorted);
  if (a.width != b.width || a.height != b.height)
    throw std::runtime_error("the images differ in size (" + std::to_string(a.width) + "x" +
                             std::to_string(a.height) + " and " + std::to_string(b.width) + "x" +
                             std::to_string(b.height) + ")");
  ImageScores s;
  const Ssimulacra2Result r = ssimulacra2(a, b);
  const bool scored = r.scales > 0;
  if (scored) {
    s.ssimulacra2 = r.score;
    s.ssimulacra2_worst_tile = r.worst_tile_score;
  }
  s.floor_score = floor_score(r, a, b).score;
  if (!with_butteraugli) return s;
  const uint64_t pixels = uint64_t(a.width) * a.height;
  if (!scored) {
    s.butteraugli_note = "not computed: the image is under 8 px on a side";
  } else if (pixels > butteraugli_max_pixels) {
    s.butteraugli_note = fmt::format(
        "not computed: {:.1f} MP would take about {:.0f} GB (--butteraugli-max-mp raises the "
        "limit of {:.1f} MP)",
        pixels / 1e6, std::ceil(pixels * kButteraugliBytesPerPixel / 1e9),
        butteraugli_max_pixels / 1e6);
  } else {
    s.butteraugli = butteraugli_distance(a, b);
    if (!s.butteraugli) s.butteraugli_note = "not computed: this build has no libjxl";
  }
  return s;
}

}  // namespace lighten
