// Makes small PNGs with libpng for tests, and decodes PNGs to rows for comparisons.
#pragma once

#include <png.h>

#include <cstdint>
#include <string>
#include <vector>

namespace lighten::testing {

struct PngRecipe {
  uint32_t width = 96, height = 64;
  int color_type = PNG_COLOR_TYPE_RGB;
  int bit_depth = 8;
  bool interlaced = false;
  int zlib_level = 1;             // weak on purpose: leaves room for lighten
  std::string text;               // a tEXt chunk when not empty
  std::vector<uint8_t> icc = {};  // an iCCP chunk of this profile when not empty
};

// A libpng writer (`png`, `info`) that appends the file to `out`; the caller destroys it.
inline void start_png_in_memory(std::vector<uint8_t>& out, png_structp& png, png_infop& info) {
  png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  info = png_create_info_struct(png);
  png_set_write_fn(
      png, &out,
      [](png_structp p, png_bytep data, size_t n) {
        auto* v = static_cast<std::vector<uint8_t>*>(png_get_io_ptr(p));
        v->insert(v->end(), data, data + n);
      },
      nullptr);
}

inline std::vector<uint8_t> make_png(const PngRecipe& r) {
  std::vector<uint8_t> out;
  png_structp png = nullptr;
  png_infop info = nullptr;
  start_png_in_memory(out, png, info);
  png_set_IHDR(png, info, r.width, r.height, r.bit_depth, r.color_type,
               r.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(png, r.zlib_level);
  std::vector<png_color> palette(16);
  if (r.color_type == PNG_COLOR_TYPE_PALETTE) {
    for (int i = 0; i < 16; ++i)
      palette[size_t(i)] = {png_byte(i * 16), png_byte(255 - i * 16), 128};
    png_set_PLTE(png, info, palette.data(), 16);
  }
  if (!r.icc.empty())
    png_set_iCCP(png, info, "profile", PNG_COMPRESSION_TYPE_BASE, r.icc.data(),
                 png_uint_32(r.icc.size()));
  png_text text{};
  if (!r.text.empty()) {
    text.compression = PNG_TEXT_COMPRESSION_NONE;
    text.key = const_cast<char*>("Comment");
    text.text = const_cast<char*>(r.text.c_str());
    png_set_text(png, info, &text, 1);
  }
  png_write_info(png, info);
  png_set_interlace_handling(png);
  const int channels = png_get_channels(png, info);
  const size_t row_bytes = png_get_rowbytes(png, info);
  std::vector<uint8_t> row(row_bytes);
  const int passes = r.interlaced ? 7 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    for (uint32_t y = 0; y < r.height; ++y) {
      for (size_t i = 0; i < row_bytes; ++i) {
        const uint32_t x = uint32_t(i) / uint32_t(std::max(1, channels * r.bit_depth / 8));
        row[i] = r.color_type == PNG_COLOR_TYPE_PALETTE
                     ? uint8_t(((x / 8 + y / 8) % 16) * (r.bit_depth == 8 ? 1 : 17))
                     : uint8_t(x * 3 + y * 2 + (i % 3) * 40);
      }
      png_write_row(png, row.data());
    }
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

// A PNG of the given samples (`channels` a pixel, each 0-65535, written as 8 or 16 bits), with a
// gAMA chunk when `gamma` is not 0 and an iCCP chunk when `icc` is not empty.
inline std::vector<uint8_t> png_of_samples(uint32_t width, uint32_t height, int channels,
                                           int bit_depth, const std::vector<uint16_t>& samples,
                                           double gamma = 0, const std::vector<uint8_t>& icc = {}) {
  static constexpr int kTypes[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                    PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
  std::vector<uint8_t> out;
  png_structp png = nullptr;
  png_infop info = nullptr;
  start_png_in_memory(out, png, info);
  png_set_IHDR(png, info, width, height, bit_depth, kTypes[channels], PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (gamma != 0) png_set_gAMA(png, info, gamma);
  if (!icc.empty())
    png_set_iCCP(png, info, "profile", PNG_COMPRESSION_TYPE_BASE, icc.data(),
                 png_uint_32(icc.size()));
  png_write_info(png, info);
  const size_t per_row = size_t(width) * size_t(channels);
  std::vector<uint8_t> row(per_row * size_t(bit_depth / 8));
  for (uint32_t y = 0; y < height; ++y) {
    for (size_t i = 0; i < per_row; ++i) {
      const uint16_t v = samples[y * per_row + i];
      if (bit_depth == 16) {
        row[2 * i] = uint8_t(v >> 8);
        row[2 * i + 1] = uint8_t(v);
      } else {
        row[i] = uint8_t(v);
      }
    }
    png_write_row(png, row.data());
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

// Decodes with libpng's simplified API to RGBA (16-bit linear for 16-bit inputs); empty on error.
inline std::vector<uint8_t> decode_png_pixels(const std::vector<uint8_t>& bytes) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) return {};
  const bool wide = (image.format & PNG_FORMAT_FLAG_LINEAR) != 0;
  image.format = wide ? PNG_FORMAT_LINEAR_RGB_ALPHA : PNG_FORMAT_RGBA;
  std::vector<uint8_t> pixels(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr)) pixels.clear();
  png_image_free(&image);
  return pixels;
}

}  // namespace lighten::testing
