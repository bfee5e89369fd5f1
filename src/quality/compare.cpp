// compare_images: decode with the field's reference decoders, then SSIMULACRA2.
#include "lighten/compare.h"

// clang-format off
#include <cstddef>
#include <cstdio>
#include <jpeglib.h>
// clang-format on
#include <png.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codecs/deflate.h"
#include "codecs/libjpeg_warnings.h"
#include "quality/butteraugli.h"
#include "quality/colour_profile.h"
#include "quality/floor_score.h"
#include "quality/image.h"

namespace lighten {
namespace {

constexpr uint64_t kMaxPixels = 500'000'000;
// What libjxl 0.7's butteraugli holds per pixel (measured: 1.58 GB at 6 MP, 15.4 GB at 64 MP;
// images read through a profile add 24 bytes of linear floats).
constexpr double kButteraugliBytesPerPixel = 240;

struct JpegErr {
  jpeg_error_mgr pub;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {};
  char warning[JMSG_LENGTH_MAX] = {};  // the first warning about damaged image data
};

extern "C" void compare_error_exit(j_common_ptr c) {
  auto* e = reinterpret_cast<JpegErr*>(c->err);
  (*c->err->format_message)(c, e->message);
  longjmp(e->jump, 1);
}

// libjpeg decodes damaged or truncated data with a warning and makes up the rest (a file cut
// after its scan header scored -254, and 100 against itself): such data is an error here, as
// everywhere else in lighten. Warnings about the markers alone (an odd JFIF version or Adobe
// transform, a malformed ICC chunk, bytes between markers) are not, as the pixels are whole.
extern "C" void compare_emit_message(j_common_ptr c, int level) {
  if (level >= 0) return;  // trace messages
  const int code = c->err->msg_code;
  if (libjpeg_marker_warning(code) || code == JWRN_EXTRANEOUS_DATA) return;
  auto* e = reinterpret_cast<JpegErr*>(c->err);
  if (e->warning[0] == '\0') (*c->err->format_message)(c, e->warning);
}

struct JpegDecoder {
  jpeg_decompress_struct info;
  JpegErr err;
  JOCTET* icc = nullptr;  // the ICC profile libjpeg joined from the APP2 chunks, malloc'd
  unsigned int icc_size = 0;
};

// Plain C data only between setjmp and longjmp; the output vector is sized before.
bool decode_jpeg_raw(JpegDecoder* d, std::span<const uint8_t> bytes, ImageRgb8* out) {
  if (setjmp(d->err.jump)) return false;
  jpeg_create_decompress(&d->info);
  jpeg_mem_src(&d->info, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_save_markers(&d->info, JPEG_APP0 + 2, 0xFFFF);
  jpeg_read_header(&d->info, TRUE);
  jpeg_read_icc_profile(&d->info, &d->icc, &d->icc_size);
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
  return true;
}

// An image decoded and the ICC profile it carries (empty without one).
struct Decoded {
  ImageRgb8 image;
  Bytes icc;
  std::vector<uint8_t> alpha;  // a PNG's opacity, one sample a pixel; empty when it has none
};

Decoded decode_jpeg(std::span<const uint8_t> bytes) {
  auto d = std::make_unique<JpegDecoder>();
  d->info.err = jpeg_std_error(&d->err.pub);
  d->err.pub.error_exit = compare_error_exit;
  d->err.pub.emit_message = compare_emit_message;
  Decoded out;
  const bool ok = decode_jpeg_raw(d.get(), bytes, &out.image);
  jpeg_destroy_decompress(&d->info);
  if (d->icc) {
    out.icc.assign(d->icc, d->icc + d->icc_size);
    std::free(d->icc);
  }
  if (!ok) throw std::runtime_error(std::string("JPEG: ") + d->err.message);
  if (d->err.warning[0] != '\0')
    throw std::runtime_error(std::string("JPEG: damaged image data (") + d->err.warning + ")");
  return out;
}

// The profile of a PNG's iCCP chunk (before its image data), inflated; empty without one or
// when it does not inflate (readers then show the samples as sRGB).
Bytes png_icc_profile(std::span<const uint8_t> png) {
  constexpr size_t kMaxProfile = 16 << 20;
  for (size_t at = 8; at + 12 <= png.size();) {
    const size_t length = size_t(png[at]) << 24 | size_t(png[at + 1]) << 16 |
                          size_t(png[at + 2]) << 8 | size_t(png[at + 3]);
    if (length > png.size() - at - 12) break;
    const std::string_view type(reinterpret_cast<const char*>(png.data() + at + 4), 4);
    const ByteView data = png.subspan(at + 8, length);
    if (type == "IDAT" || type == "IEND") break;
    if (type == "iCCP") {
      // A name of 1-79 bytes, its NUL, the compression method (0: zlib), the stream.
      const auto name_end = std::find(data.begin(), data.end(), uint8_t(0));
      const size_t stream = size_t(name_end - data.begin()) + 2;
      if (stream > data.size() || data[stream - 1] != 0) return {};
      try {
        return inflate_bounded(data.subspan(stream), kMaxProfile, DeflateWrapper::kZlib);
      } catch (const std::exception&) {
        return {};
      }
    }
    at += 12 + length;
  }
  return {};
}

// A PNG's bytes without its gAMA, cHRM and sRGB chunks when it carries an ICC profile: the
// profile overrides them (PNG 1.2, 11.3.3.3), and libpng would otherwise apply gAMA to samples the
// profile's own curves then read again.
Bytes without_colour_chunks_under_icc(std::span<const uint8_t> png) {
  bool icc = false;
  std::vector<std::pair<size_t, size_t>> dropped;  // [begin, end) of each chunk left out
  for (size_t at = 8; at + 12 <= png.size();) {
    const size_t length = size_t(png[at]) << 24 | size_t(png[at + 1]) << 16 |
                          size_t(png[at + 2]) << 8 | size_t(png[at + 3]);
    if (length > png.size() - at - 12) break;
    const std::string_view type(reinterpret_cast<const char*>(png.data() + at + 4), 4);
    if (type == "IDAT" || type == "IEND") break;
    if (type == "iCCP") icc = true;
    if (type == "gAMA" || type == "cHRM" || type == "sRGB")
      dropped.emplace_back(at, at + 12 + length);
    at += 12 + length;
  }
  if (!icc || dropped.empty()) return Bytes(png.begin(), png.end());
  Bytes out;
  out.reserve(png.size());
  size_t from = 0;
  for (const auto& [begin, end] : dropped) {
    out.insert(out.end(), png.begin() + long(from), png.begin() + long(begin));
    from = end;
  }
  out.insert(out.end(), png.begin() + long(from), png.end());
  return out;
}

// 8-bit samples in sRGB's coding (16-bit ones without gAMA taken as sRGB too, as viewers take
// them, not as linear light, libpng's assumption), and the alpha apart when there is one.
Decoded decode_png(std::span<const uint8_t> file) {
  const Bytes bytes = without_colour_chunks_under_icc(file);
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()))
    throw std::runtime_error(std::string("PNG: ") + image.message);
  const bool gray = (image.format & PNG_FORMAT_FLAG_COLOR) == 0;
  const bool alpha = (image.format & PNG_FORMAT_FLAG_ALPHA) != 0;
  image.format = (gray ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB) | (alpha ? PNG_FORMAT_FLAG_ALPHA : 0);
  image.flags |= PNG_IMAGE_FLAG_16BIT_sRGB;
  if (uint64_t(image.width) * image.height > kMaxPixels) {
    png_image_free(&image);
    throw std::runtime_error("PNG: image too large");
  }
  SampleBuffer samples(
      PNG_IMAGE_SIZE(image));  // every byte written: the alpha is read, not blended
  if (!png_image_finish_read(&image, nullptr, samples.data(), 0, nullptr))
    throw std::runtime_error(std::string("PNG: ") + image.message);
  Decoded out;
  out.image.width = image.width;
  out.image.height = image.height;
  out.image.channels = gray ? 1 : 3;
  if (!alpha) {
    out.image.samples = std::move(samples);
    return out;
  }
  const size_t pixels = size_t(image.width) * image.height, colours = out.image.channels;
  out.image.samples.resize(pixels * colours);
  out.alpha.resize(pixels);
  for (size_t i = 0; i < pixels; ++i) {
    std::copy_n(samples.begin() + long(i * (colours + 1)), colours,
                out.image.samples.begin() + long(i * colours));
    out.alpha[i] = samples[i * (colours + 1) + colours];
  }
  return out;
}

// `image` over a plain background of `level` (0-1 in the samples' coding) through `alpha`, as
// the reference tool blends it; the image itself when it has no alpha.
ImageRgb8 over_background(const ImageRgb8& image, const std::vector<uint8_t>& alpha, double level) {
  if (alpha.empty()) return image;
  ImageRgb8 out = image;
  const double background = 255.0 * level;
  for (size_t i = 0; i < out.samples.size(); ++i) {
    const double a = alpha[i / image.channels] / 255.0;
    out.samples[i] = uint8_t(std::lround(a * image.samples[i] + (1.0 - a) * background));
  }
  return out;
}

Decoded decode_any(std::span<const uint8_t> bytes) {
  if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF)
    return decode_jpeg(bytes);
  if (bytes.size() >= 8 && bytes[0] == 0x89 && bytes[1] == 'P' && bytes[2] == 'N' &&
      bytes[3] == 'G') {
    Decoded d = decode_png(bytes);
    d.icc = png_icc_profile(bytes);
    return d;
  }
  throw std::runtime_error("not a JPEG or PNG image");
}

// How `d` reads as light: through its ICC profile where that is not sRGB's; CMYK without a
// CMYK profile is rendered as RGB here, as PIL renders it.
std::optional<ProfileColour> read_through(Decoded& d) {
  std::optional<ProfileColour> colour = ProfileColour::from_icc(d.icc, d.image.channels);
  if (d.image.channels == 4 && !colour) {
    rgb_from_cmyk(d.image.samples);
    d.image.channels = 3;
  }
  return colour;
}

// Both scores of one pair of images of the same size.
ImageScores scores_of(const ImageRgb8& a, const ImageRgb8& b, const Ssimulacra2Options& options,
                      bool with_butteraugli, uint64_t butteraugli_max_pixels) {
  ImageScores s;
  const Ssimulacra2Result r = ssimulacra2(a, b, options);
  const bool scored = r.scales > 0;
  if (scored) {
    s.ssimulacra2 = r.score;
    s.ssimulacra2_worst_tile = r.worst_tile_score;
  }
  s.floor_score = floor_score(r, a, b, options).score;
  if (!with_butteraugli) return s;
  const uint64_t pixels = uint64_t(a.width) * a.height;
  if (!scored) {
    s.butteraugli_note = "not computed: the image is under 8 px on a side";
  } else if (pixels > butteraugli_max_pixels) {
    // Small figures to two significant digits: a limit of 0.01 MP read as 0.0 with one decimal.
    const auto figure = [](double v) {
      return v >= 1 ? fmt::format("{:.1f}", v) : fmt::format("{:.2g}", v);
    };
    s.butteraugli_note = fmt::format(
        "not computed: {} MP would take about {} GB (--butteraugli-max-mp raises the limit of {} "
        "MP)",
        figure(pixels / 1e6), figure(pixels * kButteraugliBytesPerPixel / 1e9),
        figure(butteraugli_max_pixels / 1e6));
  } else {
    s.butteraugli = butteraugli_distance(a, b, options.reference_colour, options.distorted_colour);
    if (!s.butteraugli) s.butteraugli_note = "not computed: this build has no libjxl";
  }
  return s;
}

}  // namespace

ImageScores compare_images(std::span<const uint8_t> reference, std::span<const uint8_t> distorted,
                           bool with_butteraugli, uint64_t butteraugli_max_pixels) {
  const auto decode = [](std::span<const uint8_t> bytes, bool is_distorted) {
    try {
      return decode_any(bytes);
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      throw ImageDecodeError(is_distorted, e.what());
    }
  };
  Decoded x = decode(reference, false), y = decode(distorted, true);
  // Each read through its ICC profile, as a colour-managed viewer shows it (colour_profile.h).
  const std::optional<ProfileColour> colour_a = read_through(x), colour_b = read_through(y);
  const ImageRgb8 &a = x.image, &b = y.image;
  if (a.width != b.width || a.height != b.height)
    throw std::runtime_error("the images differ in size (" + std::to_string(a.width) + "x" +
                             std::to_string(a.height) + " and " + std::to_string(b.width) + "x" +
                             std::to_string(b.height) +
                             " as stored; EXIF orientation is not "
                             "applied)");
  const Ssimulacra2Options options{.reference_colour = colour_a ? &*colour_a : nullptr,
                                   .distorted_colour = colour_b ? &*colour_b : nullptr};
  if (x.alpha.empty() && y.alpha.empty())
    return scores_of(a, b, options, with_butteraugli, butteraugli_max_pixels);
  // Transparent pixels show whatever lies behind them: as the reference tool, each image is seen
  // over a dark and over a light background, and the worse of the two counts.
  ImageScores worst;
  for (const double level : {0.1, 0.9}) {
    const ImageScores s =
        scores_of(over_background(a, x.alpha, level), over_background(b, y.alpha, level), options,
                  with_butteraugli, butteraugli_max_pixels);
    if (level == 0.1) {
      worst = s;
      continue;
    }
    if (s.ssimulacra2) worst.ssimulacra2 = std::min(*worst.ssimulacra2, *s.ssimulacra2);
    if (s.ssimulacra2_worst_tile)
      worst.ssimulacra2_worst_tile =
          std::min(*worst.ssimulacra2_worst_tile, *s.ssimulacra2_worst_tile);
    worst.floor_score = std::min(worst.floor_score, s.floor_score);
    if (s.butteraugli) worst.butteraugli = std::max(*worst.butteraugli, *s.butteraugli);
  }
  return worst;
}

}  // namespace lighten
