// Requantisation and the trellis on small blocks, and the tables they use.
#include <gtest/gtest.h>

#include <algorithm>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "formats/jpeg/requantize.h"
#include "formats/jpeg/zigzag.h"

namespace lighten::jpeg {
namespace {

constexpr int kZigzag63 = 63;  // natural index of the last zig-zag position

TEST(Requantize, IjgTablesAndQualityEstimate) {
  const QuantTable q50 = ijg_table(50, false);
  EXPECT_EQ(q50[0], 16);
  EXPECT_EQ(q50[63], 99);
  EXPECT_EQ(ijg_table(100, true)[0], 1);
  for (int q : {30, 50, 75, 85, 92, 97})
    for (bool chroma : {false, true})
      EXPECT_EQ(estimate_quality(ijg_table(q, chroma), chroma), q) << q << chroma;
  // Half-quality steps sit between whole qualities.
  EXPECT_GE(ijg_table_scaled(31, false)[5], ijg_table(85, false)[5]);
  EXPECT_LE(ijg_table_scaled(31, false)[5], ijg_table(84, false)[5]);
}

// Plain encoders' tables (IJG's at any quality, Robidoux's as mozjpeg scales it) are known as
// such, so that one that falls on lighten's target (mozjpeg's quality 50) is not taken for
// lighten's own; lighten's targets are not.
TEST(Requantize, PlainEncodersTablesAreKnown) {
  constexpr uint16_t kRobidouxBase[64] = {
      16, 16, 16, 18,  25,  37,  56,  85,  16, 17, 20,  27,  34,  40,  53,  75,
      16, 20, 24, 31,  43,  62,  91,  135, 18, 27, 31,  40,  53,  74,  106, 156,
      25, 34, 43, 53,  69,  94,  131, 189, 37, 40, 62,  74,  94,  124, 169, 238,
      56, 53, 91, 106, 131, 169, 226, 311, 85, 75, 135, 156, 189, 238, 311, 418};
  for (const int q : {10, 25, 50, 75}) {
    const int scale = q < 50 ? 5000 / q : 200 - 2 * q;
    QuantTable mozjpeg{};
    for (int k = 0; k < 64; ++k)
      mozjpeg[k] = uint16_t(std::clamp((kRobidouxBase[k] * scale + 50) / 100, 1, 255));
    EXPECT_TRUE(is_plain_encoder_table(mozjpeg)) << q;
    for (int k = 0; k < 64; ++k)  // 16-bit tables (cjpeg without -baseline) keep 311 and 418
      mozjpeg[k] = uint16_t(std::clamp((kRobidouxBase[k] * scale + 50) / 100, 1, 32767));
    EXPECT_TRUE(is_plain_encoder_table(mozjpeg)) << q;
    EXPECT_TRUE(is_plain_encoder_table(ijg_table(q, false))) << q;
    EXPECT_TRUE(is_plain_encoder_table(ijg_table(q, true))) << q;
  }
  for (const int permille : {400, 1000, 1500})
    EXPECT_FALSE(is_plain_encoder_table(target_table(permille))) << permille;
}

// Quality 50 (permille 1000) is Robidoux's table itself except for the finer low frequencies.
TEST(Requantize, TargetTablesKeepBlockMeansAndLowestFrequenciesFine) {
  const QuantTable q50 = target_table(1000);
  EXPECT_EQ(q50[0], 8);     // Robidoux 16, halved
  EXPECT_EQ(q50[1], 13);    // 16 x 0.8 (u + v = 1)
  EXPECT_EQ(q50[9], 13);    // 17 x 0.8 = 13.6, rounded at its dither offset (u + v = 2)
  EXPECT_EQ(q50[3], 18);    // u + v = 3: Robidoux's own
  EXPECT_EQ(q50[63], 255);  // 418, capped to 8 bits
  QuantTable previous{};
  for (int permille = 50; permille <= 5000; permille += 25) {
    const QuantTable t = target_table(permille);
    // Block means within half a grey level however coarse the rest, and never coarser than
    // the first AC entries at fine levels either.
    EXPECT_LE(t[0], 8) << permille;
    EXPECT_LE(t[0], std::max<int>(1, (16 * permille / 2 + 500) / 1000)) << permille;
    for (int k = 0; k < 64; ++k) EXPECT_GE(t[k], previous[k]) << permille << " entry " << k;
    previous = t;
  }
}

TEST(Requantize, SameTablesWithoutRdoChangeNothing) {
  JCOEF src[64], dst[64];
  uint16_t q[64];
  for (int k = 0; k < 64; ++k) src[k] = JCOEF((k * 37 % 23) - 11), q[k] = uint16_t(1 + k % 7);
  EXPECT_EQ(requantize_block(src, q, q, nullptr, {}, dst), 0.0);
  for (int k = 0; k < 64; ++k) EXPECT_EQ(dst[k], src[k]);
}

TEST(Requantize, CoarserTablesRoundToNearest) {
  JCOEF src[64] = {}, dst[64];
  uint16_t q_old[64], q_new[64];
  for (int k = 0; k < 64; ++k) q_old[k] = 2, q_new[k] = 6;
  src[0] = 100;  // 200 / 6 = 33.3
  src[1] = -5;   // -10 / 6 = -1.67
  src[8] = 4;    // 8 / 6 = 1.33
  src[9] = 1;    // 2 / 6 = 0.33
  const double err = requantize_block(src, q_old, q_new, nullptr, {}, dst);
  EXPECT_EQ(dst[0], 33);
  EXPECT_EQ(dst[1], -2);
  EXPECT_EQ(dst[8], 1);
  EXPECT_EQ(dst[9], 0);
  EXPECT_DOUBLE_EQ(err, 2.0 * 2 + 2.0 * 2 + 2.0 * 2 + 2.0 * 2);
}

RateModel flat_rate() {
  uint32_t freq[256];
  for (auto& f : freq) f = 1;
  return RateModel::from_frequencies(freq);
}

TEST(Trellis, DropsALoneCostlyCoefficientAtTheEnd) {
  JCOEF src[64] = {}, plain[64], rdo[64];
  uint16_t q[64];
  for (auto& v : q) v = 1;
  src[0] = 50;
  src[1] = 40;
  src[kZigzag63] = 1;  // rounds to 1 but costs a long run, a symbol and an EOB saving
  const RateModel rate = flat_rate();
  requantize_block(src, q, q, nullptr, {}, plain);
  requantize_block(src, q, q, &rate, {}, rdo);
  EXPECT_EQ(plain[kZigzag63], 1);
  EXPECT_EQ(rdo[kZigzag63], 0);
  EXPECT_EQ(rdo[0], 50);
  EXPECT_EQ(rdo[1], 40);  // large coefficients stay
}

TEST(Trellis, NeverGrowsAMagnitudeAndKeepsStrongBlocks) {
  uint16_t q_old[64], q_new[64];
  for (int k = 0; k < 64; ++k) q_old[k] = 2, q_new[k] = uint16_t(3 + k / 8);
  const RateModel rate = flat_rate();
  uint32_t seed = 7;
  for (int trial = 0; trial < 200; ++trial) {
    JCOEF src[64], plain[64], rdo[64];
    for (int k = 0; k < 64; ++k) {
      seed = seed * 1103515245u + 12345u;
      const int range = k == 0 ? 400 : 60 / (1 + k / 4);
      src[k] = JCOEF(int(seed >> 16) % (2 * range + 1) - range);
    }
    requantize_block(src, q_old, q_new, nullptr, {}, plain);
    requantize_block(src, q_old, q_new, &rate, {}, rdo);
    for (int k = 0; k < 64; ++k) {
      EXPECT_LE(std::abs(rdo[k]), std::abs(plain[k]));
      EXPECT_TRUE(rdo[k] == 0 || std::abs(plain[k]) - std::abs(rdo[k]) <= 1);
      EXPECT_TRUE(rdo[k] == 0 || (rdo[k] > 0) == (plain[k] > 0));
    }
    EXPECT_EQ(rdo[0], plain[0]);  // DC is rounded, never traded
  }
}

TEST(Trellis, DroppingHopelessEndsChangesNothing) {
  // Rate models against themselves with a bound too wide for any end to be dropped: every block
  // comes out the same. A skewed one (cheap common symbols, dearer with the run), and random
  // ones, where a longer run's symbol is often the cheaper.
  std::vector<RateModel> models;
  uint32_t freq[256] = {};
  for (int s = 0; s < 256; ++s) freq[s] = (s & 15) <= 2 ? 5000u / (1 + (s >> 4)) : 1u;
  models.push_back(RateModel::from_frequencies(freq));
  // Dearer with the run, a longer run saves nothing but what a ZRL costs less than the symbols
  // it stands in for.
  EXPECT_LT(models[0].longer_run_advantage, 3.0f);
  uint32_t seed = 11;
  auto next = [&] { return (seed = seed * 1103515245u + 12345u) >> 16; };
  for (int m = 0; m < 3; ++m) {
    for (uint32_t& f : freq) f = next() % (m == 0 ? 4 : m == 1 ? 100 : 5000);
    models.push_back(RateModel::from_frequencies(freq));
    EXPECT_LE(models.back().longer_run_advantage, 16.0f);
  }
  uint16_t q_old[64], q_new[64];
  for (int k = 0; k < 64; ++k) q_old[k] = uint16_t(1 + k / 16), q_new[k] = uint16_t(2 + k / 6);
  for (const RateModel& pruned : models) {
    RateModel full = pruned;
    full.longer_run_advantage = 1e9f;
    for (int trial = 0; trial < 500; ++trial) {
      JCOEF src[64], a[64], b[64];
      for (int k = 0; k < 64; ++k) {
        const int range = k == 0 ? 900 : (trial % 4 + 1) * 90 / (1 + k / 3);
        src[k] = JCOEF(int(next()) % (2 * range + 1) - range);
      }
      for (double strength : {0.25, 0.5, 2.0}) {
        const double ea = requantize_block(src, q_old, q_new, &pruned, {strength}, a);
        const double eb = requantize_block(src, q_old, q_new, &full, {strength}, b);
        EXPECT_EQ(ea, eb) << trial;
        for (int k = 0; k < 64; ++k) ASSERT_EQ(a[k], b[k]) << trial << " coefficient " << k;
      }
    }
  }
}

// The trellis against every choice of each non-zero coefficient (dropped, rounded, or one less)
// on blocks of up to six: it must find the cheapest coding under its cost (bits of the rate model
// plus the block's weight times the squared error in new steps), runs of 16 and more included.
TEST(Trellis, FindsTheCheapestCodingOfSmallBlocks) {
  uint32_t freq[256] = {};
  for (int s = 0; s < 256; ++s) freq[s] = (s & 15) <= 3 ? 4000u / (1 + (s >> 4)) : 2u;
  const RateModel rate = RateModel::from_frequencies(freq);
  uint32_t seed = 7;
  auto next = [&](uint32_t n) {
    return ((seed = seed * 1103515245u + 12345u) >> 8 & 0xFFFFFF) % n;
  };
  for (int trial = 0; trial < 400; ++trial) {
    uint16_t q_old[64], q_new[64];
    for (int k = 0; k < 64; ++k)
      q_old[k] = uint16_t(1 + next(3)), q_new[k] = uint16_t(q_old[k] * (1 + next(4)) + next(3));
    JCOEF src[64] = {};
    src[0] = JCOEF(int(next(200)) - 100);
    std::vector<int> positions;  // zig-zag, ascending
    const int count = 1 + int(next(6));
    for (int i = 1; i < 64 && int(positions.size()) < count; ++i)
      if (next(64 - i) < uint32_t(count - int(positions.size())) * 2) positions.push_back(i);
    for (int i : positions) src[kZigzag[i]] = JCOEF((next(2) ? 1 : -1) * int(1 + next(40)));
    const double strength = trial % 3 == 0 ? 0.25 : trial % 3 == 1 ? 0.5 : 2.0;
    // The block's weight, as requantize.cpp computes it (mozjpeg's masking rule).
    double energy = 0;
    for (int k = 1; k < 64; ++k) energy += double(src[k] * q_old[k]) * (src[k] * q_old[k]);
    const double w = strength * 64.0 * std::exp2(14.75) / (std::exp2(16.5) + 64.0 * energy / 63.0);
    auto cost = [&](const std::vector<int>& values) {
      double bits = 0, distortion = 0;
      int previous = 0;
      for (size_t m = 0; m < positions.size(); ++m) {
        const int k = kZigzag[positions[m]];
        const double ax = std::fabs(double(src[k]) * q_old[k] / q_new[k]);
        distortion += (ax - values[m]) * (ax - values[m]);
        if (values[m] == 0) continue;
        const int run = positions[m] - previous - 1, size = std::bit_width(unsigned(values[m]));
        bits += (run >> 4) * rate.zrl_bits + rate.ac_bits[((run & 15) << 4) | size] + size;
        previous = positions[m];
      }
      if (previous < 63) bits += rate.eob_bits;
      return bits + w * distortion;
    };
    JCOEF dst[64];
    requantize_block(src, q_old, q_new, &rate, {strength}, dst);
    std::vector<int> chosen;
    for (int i : positions) chosen.push_back(std::abs(dst[kZigzag[i]]));
    // Every combination of {0, rounded, rounded - 1} per coefficient.
    std::vector<int> choice(positions.size(), 0), values(positions.size());
    double cheapest = INFINITY;
    for (bool more = true; more;) {
      for (size_t m = 0; m < positions.size(); ++m) {
        const int k = kZigzag[positions[m]];
        const int c = int(std::fabs(double(src[k]) * q_old[k] / q_new[k]) + 0.5);
        values[m] = choice[m] == 0 ? 0 : choice[m] == 1 ? c : std::max(c - 1, 0);
      }
      cheapest = std::min(cheapest, cost(values));
      more = false;
      for (size_t m = 0; m < choice.size() && !more; ++m) {
        if (++choice[m] < 3)
          more = true;
        else
          choice[m] = 0;
      }
    }
    EXPECT_LE(cost(chosen), cheapest + 1e-9 * std::max(1.0, cheapest)) << trial;
  }
}

TEST(Trellis, BusyBlocksHideMoreThanSmoothOnes) {
  // The same small coefficient, alone in a smooth block and among strong texture.
  uint16_t q[64];
  for (auto& v : q) v = 4;
  const RateModel rate = flat_rate();
  JCOEF smooth[64] = {}, busy[64] = {}, out_smooth[64], out_busy[64];
  smooth[20] = busy[20] = 2;  // 0.7 .. 2 steps: worth keeping only where error shows
  smooth[0] = busy[0] = 10;
  for (int k : {1, 8, 9, 2, 16}) busy[k] = 400;  // heavy low-frequency texture
  int kept_smooth = 0, kept_busy = 0;
  for (int step = 0; step < 8; ++step) {
    uint16_t q_new[64];
    for (int k = 0; k < 64; ++k) q_new[k] = uint16_t(4 + step);
    requantize_block(smooth, q, q_new, &rate, {}, out_smooth);
    requantize_block(busy, q, q_new, &rate, {}, out_busy);
    kept_smooth += out_smooth[20] != 0;
    kept_busy += out_busy[20] != 0;
  }
  EXPECT_GT(kept_smooth, kept_busy);
}

}  // namespace
}  // namespace lighten::jpeg
