// The counted Huffman tables give exactly the bytes libjpeg's own optimize_coding pass gives,
// for every sampling, size, component count and restart interval: the reference here is
// libjpeg writing the same coefficients with its statistics pass.
#include <gtest/gtest.h>

// clang-format off
#include <cstdio>
#include <jpeglib.h>
// clang-format on

// libjpeg's Annex K table builder: exported by libjpeg-turbo, declared only in its private
// jchuff.h.
extern "C" void jpeg_gen_optimal_table(j_compress_ptr cinfo, JHUFF_TBL* htbl, long freq[]);

#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/huffman_stats.h"
#include "support/corpus.h"
#include "support/jpeg_maker.h"

namespace lighten::jpeg {
namespace {

using testing::JpegRecipe;

std::string describe(const JpegRecipe& r) {
  return std::to_string(r.width) + "x" + std::to_string(r.height) + " c" +
         std::to_string(r.components) + " " + std::to_string(r.h_samp) + "x" +
         std::to_string(r.v_samp) + " restart " + std::to_string(r.restart_interval);
}

// libjpeg's own way: the coefficients written with optimize_coding (its statistics pass).
std::vector<uint8_t> libjpeg_optimized(const std::vector<uint8_t>& jpeg, unsigned restart) {
  jpeg_decompress_struct d{};
  jpeg_error_mgr derr{};
  d.err = jpeg_std_error(&derr);
  jpeg_create_decompress(&d);
  jpeg_mem_src(&d, jpeg.data(), static_cast<unsigned long>(jpeg.size()));
  jpeg_read_header(&d, TRUE);
  jvirt_barray_ptr* arrays = jpeg_read_coefficients(&d);
  jpeg_compress_struct c{};
  jpeg_error_mgr cerr{};
  c.err = jpeg_std_error(&cerr);
  jpeg_create_compress(&c);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buffer, &size);
  jpeg_copy_critical_parameters(&d, &c);
  c.write_JFIF_header = FALSE;
  c.write_Adobe_marker = FALSE;
  c.optimize_coding = TRUE;
  c.restart_interval = restart;
  jpeg_write_coefficients(&c, arrays);
  jpeg_finish_compress(&c);
  std::vector<uint8_t> out(buffer, buffer + size);
  jpeg_destroy_compress(&c);
  std::free(buffer);
  jpeg_finish_decompress(&d);
  jpeg_destroy_decompress(&d);
  return out;
}

std::vector<uint8_t> ours(const std::vector<uint8_t>& jpeg, unsigned restart) {
  CoefficientImage image(jpeg, nullptr);
  EXPECT_TRUE(count_sequential_symbols(image, restart).has_value());
  WriteOptions o;
  o.restart_interval = restart;
  return write_coefficients(image, o);
}

TEST(HuffmanStats, SameBytesAsLibjpegsStatisticsPass) {
  // Widths and heights off the MCU grid (padding blocks), every sampling libjpeg takes,
  // grey, CMYK, restart intervals in the source and in the output.
  auto shape = [](int w, int h, int components, int hs, int vs, unsigned restart) {
    return JpegRecipe{.width = w,
                      .height = h,
                      .components = components,
                      .quality = 88,
                      .restart_interval = restart,
                      .h_samp = hs,
                      .v_samp = vs};
  };
  const std::vector<JpegRecipe> shapes = {
      shape(64, 48, 3, 2, 2, 0),   shape(97, 61, 3, 2, 2, 0), shape(97, 61, 3, 2, 1, 3),
      shape(33, 70, 3, 1, 2, 0),   shape(45, 17, 3, 1, 1, 5), shape(130, 9, 3, 4, 1, 0),
      shape(200, 150, 3, 2, 2, 7), shape(71, 53, 1, 1, 1, 0), shape(71, 53, 1, 1, 1, 6),
      shape(59, 41, 4, 2, 2, 2),   shape(8, 8, 3, 2, 2, 1),   shape(1, 1, 1, 1, 1, 0),
  };
  for (const JpegRecipe& s : shapes) {
    const std::vector<uint8_t> jpeg = testing::make_jpeg(s);
    for (unsigned restart : {0u, 1u, s.restart_interval + 2}) {
      EXPECT_EQ(ours(jpeg, restart), libjpeg_optimized(jpeg, restart))
          << describe(s) << ", written with restart interval " << restart;
    }
  }
}

TEST(HuffmanStats, SameBytesOnCorpusPhotos) {
  const auto files = testing::corpus_files("jpeg");
  if (files.empty()) GTEST_SKIP() << "../shared/corpus/jpeg not found";
  int checked = 0;
  for (const auto& path : files) {
    const std::string name = path.filename().string();
    if (name != "canon_lr_22mp.jpg" && name != "fuji_f40fd.jpg" && name != "jolla.jpg" &&
        name != "lumia800.jpg")
      continue;
    const auto bytes = testing::read_file(path);
    CoefficientImage probe(bytes, nullptr);
    const unsigned restart = probe.info().restart_interval;
    EXPECT_EQ(ours(bytes, restart), libjpeg_optimized(bytes, restart)) << name;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(HuffmanStats, OptimalCodeFollowsAnnexK) {
  std::array<uint64_t, 256> freq{};
  EXPECT_FALSE(optimal_huffman_code(freq).has_value());
  freq[0x00] = 10;
  auto one = optimal_huffman_code(freq);
  ASSERT_TRUE(one.has_value());
  // One symbol and the reserved point share a 1-bit pair; the reserved one is dropped.
  EXPECT_EQ(one->bits[1], 1);
  EXPECT_EQ(one->values, std::vector<uint8_t>{0x00});
  // Skewed frequencies need more than 16 bits before the adjustment: every length ends <= 16,
  // and the code stays complete minus the reserved point (Kraft sum 1 - 2^-16 or less).
  uint64_t f = 1;
  for (size_t s = 0; s < 40; ++s, f = f * 3 / 2 + 1) freq[s] = f;
  auto skewed = optimal_huffman_code(freq);
  ASSERT_TRUE(skewed.has_value());
  double kraft = 0;
  size_t symbols = 0;
  for (int len = 1; len <= 16; ++len) {
    kraft += skewed->bits[size_t(len)] / double(1 << len);
    symbols += skewed->bits[size_t(len)];
  }
  EXPECT_EQ(symbols, 40u);
  EXPECT_EQ(skewed->values.size(), 40u);
  EXPECT_LE(kraft, 1.0 - 1.0 / 65536 + 1e-12);
}

TEST(HuffmanStats, OptimalCodeBreaksTiesAsLibjpeg) {
  // Many equal frequencies make the order of merging decide the code; libjpeg's own table
  // builder (exported as jpeg_gen_optimal_table) is the reference.
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  uint32_t state = 12345;
  auto next = [&] { return state = state * 1103515245u + 12345u, state >> 16; };
  for (int round = 0; round < 300; ++round) {
    std::array<uint64_t, 256> freq{};
    long theirs[257] = {};
    const unsigned range = round % 3 == 0 ? 3 : round % 3 == 1 ? 50 : 100000;
    const unsigned used = 1 + next() % 256;
    for (unsigned i = 0; i < used; ++i) {
      const size_t s = next() % 256;
      freq[s] = 1 + next() % range;
      theirs[s] = long(freq[s]);
    }
    JHUFF_TBL table{};
    jpeg_gen_optimal_table(&c, &table, theirs);
    const auto ours = optimal_huffman_code(freq);
    ASSERT_TRUE(ours.has_value());
    for (int len = 1; len <= 16; ++len)
      EXPECT_EQ(ours->bits[size_t(len)], table.bits[len]) << round;
    for (size_t k = 0; k < ours->values.size(); ++k)
      EXPECT_EQ(ours->values[k], table.huffval[k]) << round << " value " << k;
  }
  jpeg_destroy_compress(&c);
}

}  // namespace
}  // namespace lighten::jpeg
