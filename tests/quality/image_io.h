#pragma once

// Test and benchmark helpers: decode PNG (libpng) and JPEG (libjpeg, default settings: islow
// IDCT, fancy upsampling) files into ImageRgb8. Throw std::runtime_error on failure.

#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <jpeglib.h>

#include "quality/image.h"

namespace lighten::test {

inline std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline ImageRgb8 decode_png(const std::vector<uint8_t>& bytes) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) {
    throw std::runtime_error(std::string("png: ") + image.message);
  }
  const bool gray = (image.format & PNG_FORMAT_FLAG_COLOR) == 0;
  image.format = gray ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  ImageRgb8 out;
  out.width = image.width;
  out.height = image.height;
  out.channels = gray ? 1 : 3;
  out.samples.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.samples.data(), 0, nullptr)) {
    throw std::runtime_error(std::string("png: ") + image.message);
  }
  return out;
}

namespace detail {
struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
};
inline void jpeg_error_exit(j_common_ptr cinfo) {
  std::longjmp(reinterpret_cast<JpegError*>(cinfo->err)->jump, 1);
}
}  // namespace detail

inline ImageRgb8 decode_jpeg(const std::vector<uint8_t>& bytes) {
  jpeg_decompress_struct cinfo{};
  detail::JpegError error{};
  cinfo.err = jpeg_std_error(&error.mgr);
  error.mgr.error_exit = detail::jpeg_error_exit;
  ImageRgb8 out;
  if (setjmp(error.jump)) {
    jpeg_destroy_decompress(&cinfo);
    throw std::runtime_error("jpeg: decode failed");
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.jpeg_color_space != JCS_GRAYSCALE) cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  out.width = cinfo.output_width;
  out.height = cinfo.output_height;
  out.channels = static_cast<uint32_t>(cinfo.output_components);
  out.samples.resize(static_cast<size_t>(out.width) * out.height * out.channels);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row =
        out.samples.data() + static_cast<size_t>(cinfo.output_scanline) * out.width * out.channels;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return out;
}

// Decodes a PNG or JPEG file, chosen by its first bytes.
inline ImageRgb8 load_image(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  if (bytes.size() >= 2 && bytes[0] == 0xFF && bytes[1] == 0xD8) return decode_jpeg(bytes);
  if (bytes.size() >= 8 && bytes[0] == 0x89 && bytes[1] == 'P') return decode_png(bytes);
  throw std::runtime_error(path + ": neither PNG nor JPEG");
}

}  // namespace lighten::test
