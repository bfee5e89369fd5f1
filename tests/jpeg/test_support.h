// Helpers for the JPEG tests: a simple Context, and JPEGs made and decoded with libjpeg here,
// independently of the optimiser's code.
#pragma once

#include <algorithm>

// clang-format off
#include <cstdio>
#include <jpeglib.h>
// clang-format on

#include <csetjmp>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/smooth_chroma.h"

#include "core/context.h"

namespace lighten::testing {

class TestContext : public Context {
 public:
  explicit TestContext(Policy policy = {}) : policy_(std::move(policy)) {}
  const Policy& policy() const override { return policy_; }
  unsigned depth() const override { return 0; }
  bool out_of_time() const override { return false; }
  Outcome optimize_embedded_under(ByteView, std::string_view, const Policy&) override { return {}; }
  Verdict verify_embedded_under(ByteView, ByteView, const Policy&) override { return {}; }
  Policy& mutable_policy() { return policy_; }

 private:
  Policy policy_;
};

struct TestErrorMgr {
  jpeg_error_mgr pub;
  jmp_buf jump;
  int warnings = 0;
};
extern "C" inline void test_error_exit(j_common_ptr c) {
  longjmp(reinterpret_cast<TestErrorMgr*>(c->err)->jump, 1);
}
extern "C" inline void test_emit_message(j_common_ptr c, int level) {
  if (level < 0) ++reinterpret_cast<TestErrorMgr*>(c->err)->warnings;
}

struct EncodeOptions {
  int width = 67, height = 45;
  int components = 3;  // 1 gray, 3 YCbCr, 4 CMYK
  bool progressive = false;
  bool dc_only = false;             // a progressive file that never sends any AC coefficient
  bool scan_per_component = false;  // sequential, each component in a scan of its own
  int quality = 90;
  unsigned restart_interval = 0;
  unsigned restart_in_rows = 0;  // libjpeg's per-scan intervals (cjpeg -restart N)
  std::vector<std::pair<int, std::string>> markers;  // (marker code, payload) after SOI
  int luma_sampling = 2;  // the first component's factors: 2 is 4:2:0 (libjpeg's default), 1 4:4:4
  int luma_v_sampling = 0;     // its vertical factor when not luma_sampling (2 and 1: 4:2:2)
  bool smooth_chroma = false;  // smooth_chroma_pixels (the default pattern has sharp chroma edges)
  int cr_quality = 0;          // the third component's own table at this quality (0: the second's)
  std::vector<int> component_ids = {};  // the frame's identifiers when not libjpeg's 1, 2, 3
  std::vector<uint8_t> pixels = {};     // interleaved samples to encode instead of the pattern
  // The frame's colour space when not libjpeg's default for the components: JCS_RGB (RGB-coded,
  // Adobe transform 0) or JCS_YCCK (Adobe transform 2) take the first component's sampling too.
  J_COLOR_SPACE color_space = JCS_UNKNOWN;
  bool adobe_marker =
      true;  // false: libjpeg's Adobe segment left out (RGB known by its 'R', 'G', 'B')
  bool write_jfif = true;  // false: libjpeg's JFIF segment left out (the test writes its own)
};

// Writes a small JPEG of a smooth pattern with noise, so that the coefficients are not trivial.
inline std::vector<uint8_t> make_jpeg(const EncodeOptions& o) {
  struct State {
    jpeg_compress_struct c;
    TestErrorMgr err;
    unsigned char* buf = nullptr;
    unsigned long size = 0;
  } s{};
  std::vector<uint8_t> pixels(size_t(o.width) * o.height * o.components);
  uint32_t seed = 12345;
  for (size_t i = 0; i < pixels.size(); ++i) {
    seed = seed * 1103515245u + 12345u;
    size_t x = (i / o.components) % o.width, y = (i / o.components) / o.width;
    pixels[i] = uint8_t((x * 3 + y * 2 + (i % o.components) * 40 + (seed >> 27)) & 255);
  }
  if (o.smooth_chroma && o.components == 3) pixels = smooth_chroma_pixels(o.width, o.height);
  if (!o.pixels.empty()) {
    if (o.pixels.size() != pixels.size()) return {};
    pixels = o.pixels;
  }
  s.c.err = jpeg_std_error(&s.err.pub);
  s.err.pub.error_exit = test_error_exit;
  if (setjmp(s.err.jump)) {
    jpeg_destroy_compress(&s.c);
    std::free(s.buf);
    return {};
  }
  jpeg_create_compress(&s.c);
  jpeg_mem_dest(&s.c, &s.buf, &s.size);
  s.c.image_width = JDIMENSION(o.width);
  s.c.image_height = JDIMENSION(o.height);
  s.c.input_components = o.components;
  s.c.in_color_space = o.components == 1 ? JCS_GRAYSCALE : o.components == 4 ? JCS_CMYK : JCS_RGB;
  jpeg_set_defaults(&s.c);
  unsigned int cr_table[DCTSIZE2] = {};
  if (o.cr_quality > 0) {  // libjpeg's chroma table at that quality, kept for slot 2
    jpeg_set_quality(&s.c, o.cr_quality, TRUE);
    for (int k = 0; k < DCTSIZE2; ++k) cr_table[k] = s.c.quant_tbl_ptrs[1]->quantval[k];
  }
  jpeg_set_quality(&s.c, o.quality, TRUE);
  s.c.restart_interval = o.restart_interval;
  s.c.restart_in_rows = int(o.restart_in_rows);
  if (o.color_space != JCS_UNKNOWN) jpeg_set_colorspace(&s.c, o.color_space);
  if (!o.adobe_marker) s.c.write_Adobe_marker = FALSE;
  if (!o.write_jfif) s.c.write_JFIF_header = FALSE;
  if (o.components == 3 || o.color_space == JCS_YCCK) {
    s.c.comp_info[0].h_samp_factor = o.luma_sampling;
    s.c.comp_info[0].v_samp_factor = o.luma_v_sampling ? o.luma_v_sampling : o.luma_sampling;
  }
  if (o.cr_quality > 0 && o.components == 3) {
    jpeg_add_quant_table(&s.c, 2, cr_table, 100, TRUE);
    s.c.comp_info[2].quant_tbl_no = 2;
  }
  for (size_t ci = 0; ci < o.component_ids.size() && ci < size_t(o.components); ++ci)
    s.c.comp_info[ci].component_id = o.component_ids[ci];
  if (o.progressive) jpeg_simple_progression(&s.c);
  jpeg_scan_info dc_scan{};
  std::vector<jpeg_scan_info> own_scans(size_t(o.components));
  if (o.scan_per_component) {
    for (int ci = 0; ci < o.components; ++ci) {
      own_scans[size_t(ci)].comps_in_scan = 1;
      own_scans[size_t(ci)].component_index[0] = ci;
      own_scans[size_t(ci)].Se = 63;
    }
    s.c.scan_info = own_scans.data();
    s.c.num_scans = o.components;
  }
  if (o.dc_only) {
    dc_scan.comps_in_scan = o.components;
    for (int ci = 0; ci < o.components; ++ci) dc_scan.component_index[ci] = ci;
    s.c.scan_info = &dc_scan;
    s.c.num_scans = 1;
  }
  jpeg_start_compress(&s.c, TRUE);
  for (const auto& [code, payload] : o.markers)
    jpeg_write_marker(&s.c, code, reinterpret_cast<const JOCTET*>(payload.data()),
                      unsigned(payload.size()));
  while (s.c.next_scanline < s.c.image_height) {
    JSAMPROW row = pixels.data() + size_t(s.c.next_scanline) * o.width * o.components;
    jpeg_write_scanlines(&s.c, &row, 1);
  }
  jpeg_finish_compress(&s.c);
  std::vector<uint8_t> out(s.buf, s.buf + s.size);
  jpeg_destroy_compress(&s.c);
  std::free(s.buf);
  return out;
}

struct Decoded {
  bool ok = false;
  int warnings = 0;
  unsigned width = 0, height = 0, components = 0;
  std::vector<uint8_t> samples;
};

// Full decode with libjpeg's default settings (RGB, gray or CMYK samples).
inline Decoded decode(const std::vector<uint8_t>& jpeg) {
  struct State {
    jpeg_decompress_struct d;
    TestErrorMgr err;
  };
  auto s = std::make_unique<State>();
  Decoded out;
  s->d.err = jpeg_std_error(&s->err.pub);
  s->err.pub.error_exit = test_error_exit;
  s->err.pub.emit_message = test_emit_message;
  if (setjmp(s->err.jump)) {
    jpeg_destroy_decompress(&s->d);
    out.ok = false;
    return out;
  }
  jpeg_create_decompress(&s->d);
  jpeg_mem_src(&s->d, jpeg.data(), static_cast<unsigned long>(jpeg.size()));
  jpeg_read_header(&s->d, TRUE);
  jpeg_start_decompress(&s->d);
  out.width = s->d.output_width;
  out.height = s->d.output_height;
  out.components = unsigned(s->d.output_components);
  size_t stride = size_t(out.width) * out.components;
  out.samples.resize(stride * out.height);
  while (s->d.output_scanline < s->d.output_height) {
    JSAMPROW row = out.samples.data() + stride * s->d.output_scanline;
    jpeg_read_scanlines(&s->d, &row, 1);
  }
  jpeg_finish_decompress(&s->d);
  jpeg_destroy_decompress(&s->d);
  out.warnings = s->err.warnings;
  out.ok = true;
  return out;
}

}  // namespace lighten::testing
