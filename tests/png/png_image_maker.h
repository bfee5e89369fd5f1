// PNGs with chosen pixels and chunks, written by libpng, and an RGBA16 decode by libpng: the
// form in which a reduced image must equal its input.
#pragma once

#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <cstdint>
#include <string>
#include <vector>

#include "codecs/deflate.h"
#include "core/bytes.h"
#include "formats/png/png_chunks.h"
#include "support/png_maker.h"

namespace lighten::testing {

struct PngPicture {
  uint32_t width = 0, height = 0;
  int color_type = PNG_COLOR_TYPE_RGB;
  int bit_depth = 8;
  bool interlaced = false;
  // Samples of each pixel, row by row, at the bit depth (one per sample, not packed).
  std::vector<uint16_t> samples;
  std::vector<png_color> palette;
  std::vector<uint8_t> palette_alpha;  // tRNS of a palette image
  std::vector<uint16_t> colour_key;    // tRNS of a grey (1 value) or RGB (3 values) image
  std::vector<uint16_t> background;    // bKGD: index, grey, or RGB as the colour type wants
  std::vector<uint8_t> significant;    // sBIT: r, g, b, grey, alpha as the colour type has
  std::string text = "a tEXt chunk";
};

inline std::vector<uint8_t> write_picture(const PngPicture& p) {
  std::vector<uint8_t> out;
  png_structp png = nullptr;
  png_infop info = nullptr;
  start_png_in_memory(out, png, info);
  png_set_IHDR(png, info, p.width, p.height, p.bit_depth, p.color_type,
               p.interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(png, 1);
  if (!p.palette.empty()) png_set_PLTE(png, info, p.palette.data(), int(p.palette.size()));
  png_color_16 key{};
  if (!p.palette_alpha.empty())
    png_set_tRNS(png, info, p.palette_alpha.data(), int(p.palette_alpha.size()), nullptr);
  if (!p.colour_key.empty()) {
    key.gray = p.colour_key[0];
    if (p.colour_key.size() == 3) key = {0, p.colour_key[0], p.colour_key[1], p.colour_key[2], 0};
    png_set_tRNS(png, info, nullptr, 0, &key);
  }
  png_color_16 bkgd{};
  if (p.background.size() == 1) {
    bkgd.index = png_byte(p.background[0]);
    bkgd.gray = p.background[0];
  } else if (p.background.size() == 3) {
    bkgd = {0, p.background[0], p.background[1], p.background[2], 0};
  }
  if (!p.background.empty()) png_set_bKGD(png, info, &bkgd);
  if (!p.significant.empty()) {
    png_color_8 sbit{};
    sbit.red = sbit.gray = p.significant[0];
    if (p.significant.size() >= 3) {
      sbit.green = p.significant[1];
      sbit.blue = p.significant[2];
    }
    sbit.alpha = p.significant.back();
    png_set_sBIT(png, info, &sbit);
  }
  png_text text{};
  if (!p.text.empty()) {
    text.compression = PNG_TEXT_COMPRESSION_NONE;
    text.key = const_cast<char*>("Comment");
    text.text = const_cast<char*>(p.text.c_str());
    png_set_text(png, info, &text, 1);
  }
  png_write_info(png, info);
  const int channels = png_get_channels(png, info);
  const size_t row_bytes = png_get_rowbytes(png, info);
  std::vector<std::vector<uint8_t>> rows(p.height, std::vector<uint8_t>(row_bytes, 0));
  for (uint32_t y = 0; y < p.height; ++y)
    for (size_t i = 0; i < size_t(p.width) * channels; ++i) {
      const uint16_t v = p.samples[y * size_t(p.width) * channels + i];
      uint8_t* row = rows[y].data();
      if (p.bit_depth == 16) {
        row[2 * i] = uint8_t(v >> 8);
        row[2 * i + 1] = uint8_t(v);
      } else if (p.bit_depth == 8) {
        row[i] = uint8_t(v);
      } else {
        row[i * p.bit_depth / 8] |= uint8_t(v << (8 - p.bit_depth - i * p.bit_depth % 8));
      }
    }
  std::vector<png_bytep> pointers;
  for (auto& r : rows) pointers.push_back(r.data());
  png_write_image(png, pointers.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

// The file with one more chunk right after IHDR.
inline std::vector<uint8_t> with_chunk_after_header(const std::vector<uint8_t>& png,
                                                    const char* type, ByteView data) {
  std::vector<uint8_t> out(png.begin(), png.begin() + 33);
  append_png_chunk(out, type, data);
  out.insert(out.end(), png.begin() + 33, png.end());
  return out;
}

// An iCCP chunk's data holding a minimal profile header of colour space `space` ("RGB ").
inline std::vector<uint8_t> icc_chunk_data(const char* space) {
  std::vector<uint8_t> profile(132, 0);
  profile[3] = 132;
  std::copy_n("mntr", 4, profile.begin() + 12);
  std::copy_n(space, 4, profile.begin() + 16);
  std::copy_n("XYZ ", 4, profile.begin() + 20);
  std::copy_n("acsp", 4, profile.begin() + 36);
  std::vector<uint8_t> data = {'t', 'e', 's', 't', 0, 0};
  const Bytes packed = deflate_at_level(profile, 6, DeflateWrapper::kZlib);
  data.insert(data.end(), packed.begin(), packed.end());
  return data;
}

// Every pixel as RGBA with 16-bit samples (palette, grey, low depths and tRNS expanded); empty
// when libpng cannot decode the file.
inline std::vector<uint8_t> decode_rgba16(const std::vector<uint8_t>& bytes) {
  struct Source {
    const std::vector<uint8_t>* bytes;
    size_t pos = 0;
  } source{&bytes};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr,
                                           [](png_structp, png_const_charp) {});
  png_infop info = png_create_info_struct(png);
  std::vector<uint8_t> pixels;
  std::vector<png_bytep> rows;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return {};
  }
  png_set_read_fn(png, &source, [](png_structp s, png_bytep out, size_t n) {
    auto* src = static_cast<Source*>(png_get_io_ptr(s));
    if (n > src->bytes->size() - src->pos) png_error(s, "truncated");
    std::copy_n(src->bytes->data() + src->pos, n, out);
    src->pos += n;
  });
  png_read_info(png, info);
  png_set_expand(png);
  png_set_expand_16(png);
  png_set_gray_to_rgb(png);
  png_set_add_alpha(png, 0xFFFF, PNG_FILLER_AFTER);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  const size_t row = png_get_rowbytes(png, info);
  const uint32_t height = png_get_image_height(png, info);
  pixels.resize(row * height);
  for (uint32_t y = 0; y < height; ++y) rows.push_back(pixels.data() + y * row);
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return pixels;
}

}  // namespace lighten::testing
