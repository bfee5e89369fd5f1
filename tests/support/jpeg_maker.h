// Makes small JPEGs with libjpeg for tests, so tests need no files of their own.
#pragma once

#include <algorithm>
#include <cmath>

#include <jpeglib.h>

#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "support/smooth_chroma.h"

namespace lighten::testing {

struct JpegRecipe {
  int width = 64;
  int height = 48;
  int components = 3;  // 1 gray, 3 YCbCr, 4 CMYK
  int quality = 90;
  bool progressive = false;
  bool optimize = false;
  unsigned restart_interval = 0;
  // Sampling of the first component (the others are 1x1); 0 keeps libjpeg's default.
  int h_samp = 0, v_samp = 0;
  bool smooth_chroma = false;     // smooth_chroma_pixels (3 components only)
  bool rgb_coded = false;         // 3 components stored as RGB planes (Adobe segment, transform 0)
  std::vector<uint8_t> pixels{};  // interleaved, width x height x components; empty: the gradient
};

// A smooth gradient with a little texture: realistic enough for Huffman statistics.
inline std::vector<uint8_t> make_jpeg(const JpegRecipe& recipe) {
  if (!recipe.pixels.empty() && recipe.pixels.size() != size_t(recipe.width) *
                                                            size_t(recipe.height) *
                                                            size_t(recipe.components))
    return {};
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr jerr{};
  cinfo.err = jpeg_std_error(&jerr);
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = JDIMENSION(recipe.width);
  cinfo.image_height = JDIMENSION(recipe.height);
  cinfo.input_components = recipe.components;
  cinfo.in_color_space = recipe.components == 1   ? JCS_GRAYSCALE
                         : recipe.components == 4 ? JCS_CMYK
                                                  : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, recipe.quality, TRUE);
  if (recipe.rgb_coded && recipe.components == 3) jpeg_set_colorspace(&cinfo, JCS_RGB);
  if (recipe.h_samp > 0) {
    for (int ci = 0; ci < recipe.components; ++ci) {
      cinfo.comp_info[ci].h_samp_factor = ci == 0 ? recipe.h_samp : 1;
      cinfo.comp_info[ci].v_samp_factor = ci == 0 ? recipe.v_samp : 1;
    }
  }
  if (recipe.progressive) jpeg_simple_progression(&cinfo);
  cinfo.optimize_coding = recipe.optimize ? TRUE : FALSE;
  cinfo.restart_interval = recipe.restart_interval;
  jpeg_start_compress(&cinfo, TRUE);
  std::vector<uint8_t> row(size_t(recipe.width) * size_t(recipe.components));
  uint32_t noise = 12345;
  const std::vector<uint8_t> given = !recipe.pixels.empty() ? recipe.pixels
                                     : recipe.smooth_chroma && recipe.components == 3
                                         ? smooth_chroma_pixels(recipe.width, recipe.height)
                                         : std::vector<uint8_t>{};
  while (cinfo.next_scanline < cinfo.image_height) {
    const int y = int(cinfo.next_scanline);
    if (!given.empty()) {
      JSAMPROW rows[1] = {const_cast<JSAMPROW>(given.data() + size_t(y) * row.size())};
      jpeg_write_scanlines(&cinfo, rows, 1);
      continue;
    }
    for (int x = 0; x < recipe.width; ++x) {
      for (int c = 0; c < recipe.components; ++c) {
        noise = noise * 1103515245u + 12345u;
        const int v = (x * 255 / recipe.width + y * 2 + c * 40 + int(noise >> 28)) & 0xFF;
        row[size_t(x * recipe.components + c)] = uint8_t(v);
      }
    }
    JSAMPROW rows[1] = {row.data()};
    jpeg_write_scanlines(&cinfo, rows, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::vector<uint8_t> out(buffer, buffer + size);
  jpeg_destroy_compress(&cinfo);
  std::free(buffer);
  return out;
}

// Decodes to interleaved samples with libjpeg's defaults; empty on any error or corrupt-data
// warning. setjmp/longjmp, not exceptions: libjpeg's C frames have no unwind tables.
struct DecodeErrorManager {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
};

inline std::vector<uint8_t> decode_jpeg_pixels(const std::vector<uint8_t>& bytes) {
  jpeg_decompress_struct dinfo{};
  DecodeErrorManager err{};
  dinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = [](j_common_ptr c) {
    std::longjmp(reinterpret_cast<DecodeErrorManager*>(c->err)->jump, 1);
  };
  err.mgr.emit_message = [](j_common_ptr c, int level) {
    if (level < 0) std::longjmp(reinterpret_cast<DecodeErrorManager*>(c->err)->jump, 1);
  };
  // On the heap: only the pointer lives across setjmp, and it never changes.
  auto pixels = std::make_unique<std::vector<uint8_t>>();
  jpeg_create_decompress(&dinfo);
  if (setjmp(err.jump) != 0) {
    jpeg_destroy_decompress(&dinfo);
    return {};
  }
  jpeg_mem_src(&dinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&dinfo, TRUE);
  jpeg_start_decompress(&dinfo);
  const size_t stride = size_t(dinfo.output_width) * size_t(dinfo.output_components);
  pixels->resize(stride * dinfo.output_height);
  while (dinfo.output_scanline < dinfo.output_height) {
    JSAMPROW row = pixels->data() + stride * dinfo.output_scanline;
    jpeg_read_scanlines(&dinfo, &row, 1);
  }
  jpeg_finish_decompress(&dinfo);
  jpeg_destroy_decompress(&dinfo);
  return std::move(*pixels);
}

// 320x240 RGB samples of broad hues, a ripple and noise in every channel: like a photo, its
// errors at the floor lie mostly in colour, which a wide gamut shows larger.
inline std::vector<uint8_t> colourful_pixels() {
  std::vector<uint8_t> pixels(320 * 240 * 3);
  uint32_t seed = 99;
  for (size_t i = 0; i < pixels.size(); ++i) {
    seed = seed * 1103515245u + 12345u;
    const double x = double(i / 3 % 320), y = double(i / 3 / 320);
    const double v = 100 + 80 * std::sin(x / 60 + double(i % 3) * 2.1) +
                     30 * std::sin(x * y / 900) + 30 * (double(seed >> 24) / 255 - 0.5);
    pixels[i] = uint8_t(std::clamp(v, 0.0, 255.0));
  }
  return pixels;
}

}  // namespace lighten::testing
