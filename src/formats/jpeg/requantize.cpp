#include "formats/jpeg/requantize.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/errors.h"
#include "formats/jpeg/zigzag.h"

namespace lighten::jpeg {
namespace {

constexpr uint16_t kLuma[64] = {16,  11,  10,  16,  24, 40, 51,  61,  12,  12,  14,  19,  26,
                                58,  60,  55,  14,  13, 16, 24,  40,  57,  69,  56,  14,  17,
                                22,  29,  51,  87,  80, 62, 18,  22,  37,  56,  68,  109, 103,
                                77,  24,  35,  55,  64, 81, 104, 113, 92,  49,  64,  78,  87,
                                103, 121, 120, 101, 72, 92, 95,  98,  112, 100, 103, 99};
constexpr uint16_t kChroma[64] = {17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99,
                                  24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99,
                                  99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
                                  99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99};

// N. Robidoux's table for ImageMagick, mozjpeg's default for luma and chroma: flatter at low
// frequencies, steeper at high ones than Annex K.
constexpr uint16_t kRobidoux[64] = {16,  16,  16,  18,  25,  37,  56,  85,  16,  17,  20,  27, 34,
                                    40,  53,  75,  16,  20,  24,  31,  43,  62,  91,  135, 18, 27,
                                    31,  40,  53,  74,  106, 156, 25,  34,  43,  53,  69,  94, 131,
                                    189, 37,  40,  62,  74,  94,  124, 169, 238, 56,  53,  91, 106,
                                    131, 169, 226, 311, 85,  75,  135, 156, 189, 238, 311, 418};

// The shape of target tables below Robidoux's: block means (DC) and the lowest AC frequencies
// carry the smooth gradients where coarse steps show as blocks and bands, and SSIMULACRA2's
// coarse scales weigh them heavily. Measured on the 16 camera photos at each mode's floor: DC
// at half the scaled entry, capped at 8 (block means within half a grey level), and the five
// lowest AC entries at 0.8 saved 0.2 / 1.8 / 1.4 points more in visually-lossless / high /
// compact than Robidoux's own shape (a DC entry of 13 at q59 cost leica_t 9 points of score).
constexpr int kDcPermille = 500, kDcCap = 8;
constexpr int kLowFrequencyPermille = 800, kLowFrequencyDiagonals = 2;

int bit_size(int v) { return v ? 32 - std::countl_zero(unsigned(v)) : 0; }

// Baseline limits on quantised magnitudes (8-bit samples): DC 11 bits, AC 10 bits.
constexpr int kMaxDc = 2047, kMaxAc = 1023;
// Slack for rounding when the trellis drops an end that can no longer win.
constexpr double kPruneMargin = 1e-6;

int round_div(int64_t num, int64_t den) {  // nearest, halves away from zero
  const int64_t q = (std::llabs(num) * 2 + den) / (2 * den);
  return int(num < 0 ? -q : q);
}

// RDO weight of a block: mozjpeg's masking rule (lambda falls as the block's AC energy grows),
// expressed for squared error in quantisation steps and dequantised coefficients, from the
// block's non-zero AC coefficients (zig-zag positions).
double block_weight(const JCOEF* src, const uint16_t* q_old, const int* nonzero, int count,
                    double strength) {
  // Exact in integers (63 squares of at most 2^36 each), and without a chain of float adds.
  int64_t sum = 0;
  for (int m = 0; m < count; ++m) {
    const int k = kZigzag[nonzero[m]];
    const int64_t v = int64_t(src[k]) * q_old[k];
    sum += v * v;
  }
  const double energy = double(sum) / 63.0;
  // 64: mozjpeg's coefficients are 8 times ours, so its norm is 64 times ours.
  return strength * 64.0 * std::exp2(14.75) / (std::exp2(16.5) + 64.0 * energy);
}

}  // namespace

QuantTable ijg_table(int quality, bool chroma) {
  quality = std::clamp(quality, 1, 100);
  return ijg_table_scaled(quality < 50 ? 5000 / quality : 200 - 2 * quality, chroma);
}

QuantTable ijg_table_scaled(int scale, bool chroma) {
  scale = std::clamp(scale, 1, 5000);
  QuantTable t{};
  const uint16_t* base = chroma ? kChroma : kLuma;
  for (int k = 0; k < 64; ++k) t[k] = uint16_t(std::clamp((base[k] * scale + 50) / 100, 1, 255));
  return t;
}

bool is_plain_encoder_table(const QuantTable& table) {
  // Capped at 255 for baseline files or at 32767 for 16-bit tables (cjpeg without -baseline
  // keeps Robidoux's 311 and 418 at quality 50).
  for (const int cap : {255, 32767})
    for (int q = 1; q <= 100; ++q)
      for (const QuantTable& plain : plain_encoder_tables(q, cap))
        if (plain == table) return true;
  return false;
}

std::array<QuantTable, 3> plain_encoder_tables(int quality, int cap) {
  quality = std::clamp(quality, 1, 100);
  const int scale = quality < 50 ? 5000 / quality : 200 - 2 * quality;
  std::array<QuantTable, 3> out{};
  const uint16_t* bases[3] = {kLuma, kChroma, kRobidoux};
  for (size_t b = 0; b < 3; ++b)
    for (int k = 0; k < 64; ++k)
      out[b][size_t(k)] = uint16_t(std::clamp((bases[b][k] * scale + 50) / 100, 1, cap));
  return out;
}

QuantTable target_table(int permille) {
  permille = std::clamp(permille, 1, 50000);
  QuantTable t{};
  // Each entry rounds at its own offset (an ordered dither over the entries, 0.5 on average):
  // fine tables have many equal entries, and rounding them all at once would make the size and
  // score jump between neighbouring levels.
  for (int k = 0; k < 64; ++k) {
    const int offset = 8 + ((k * 37) % 64) * 1000 / 64;
    const bool low = k > 0 && k % 8 + k / 8 <= kLowFrequencyDiagonals;
    const int64_t scaled = int64_t(kRobidoux[k]) * permille * (low ? kLowFrequencyPermille : 1000);
    t[k] = uint16_t(std::clamp<int64_t>((scaled / 1000 + offset) / 1000, 1, 255));
  }
  t[0] = uint16_t(std::clamp(
      (int(int64_t(kRobidoux[0]) * permille * kDcPermille / 1000) + 500) / 1000, 1, kDcCap));
  return t;
}

double estimate_quality(const QuantTable& table, bool chroma) {
  double best = 100, best_err = std::numeric_limits<double>::infinity();
  for (int q = 1; q <= 100; ++q) {
    const QuantTable t = ijg_table(q, chroma);
    double err = 0;
    for (int k = 0; k < 64; ++k)
      err += std::fabs(std::log(double(std::max<uint16_t>(table[k], 1)) / t[k]));
    if (err < best_err) best_err = err, best = q;
  }
  return best;
}

RateModel RateModel::from_frequencies(const uint32_t (&freq)[256]) {
  RateModel m;
  double total = 0;
  for (uint32_t f : freq) total += f;
  for (int s = 0; s < 256; ++s) {
    // Code length ~ -log2 p, at least 1 and at most 16 bits; unseen symbols cost the most.
    const double p = (freq[s] + 0.5) / (total + 128.0);
    m.ac_bits[s] = float(std::clamp(-std::log2(p), 1.0, 16.0));
  }
  m.eob_bits = m.ac_bits[0x00];
  m.zrl_bits = m.ac_bits[0xF0];
  // Over every pair of runs a block can hold (at most 62 zeros), each size a coefficient can take.
  double advantage = 0;
  for (int size = 1; size <= 10; ++size) {
    double dearest_shorter = -std::numeric_limits<double>::infinity();
    for (int run = 0; run <= 62; ++run) {
      const double bits = (run >> 4) * double(m.zrl_bits) + m.ac_bits[((run & 15) << 4) | size];
      advantage = std::max(advantage, dearest_shorter - bits);
      dearest_shorter = std::max(dearest_shorter, bits);
    }
  }
  // Rounded up: a bound that fell short by a rounding could drop the end that wins.
  m.longer_run_advantage = std::nextafter(float(advantage), std::numeric_limits<float>::max());
  return m;
}

double requantize_block(const JCOEF* src, const uint16_t* q_old, const uint16_t* q_new,
                        const RateModel* rate, const RdoParams& rdo, JCOEF* dst) {
  double sq_error = 0;
  auto error_of = [&](int k, int v) {
    const double e = double(src[k]) * q_old[k] - double(v) * q_new[k];
    return e * e;
  };
  const int dc = std::clamp(round_div(int64_t(src[0]) * q_old[0], q_new[0]), -kMaxDc, kMaxDc);
  dst[0] = JCOEF(dc);
  sq_error += error_of(0, dc);
  if (!rate || rdo.strength <= 0) {
    for (int k = 1; k < 64; ++k) {
      // Most of a block is zero, and a division per coefficient was most of this loop's time.
      if (src[k] == 0) {
        dst[k] = 0;
        continue;
      }
      const int v = std::clamp(round_div(int64_t(src[k]) * q_old[k], q_new[k]), -kMaxAc, kMaxAc);
      dst[k] = JCOEF(v);
      sq_error += error_of(k, v);
    }
    return sq_error;
  }
  // Zig-zag positions of the source's non-zero AC coefficients, in order: most of a block is
  // zero, and only these need dividing, weighing and choosing.
  int nz[63];
  int n = 0;
  for (int i = 1; i < 64; ++i) nz[n] = i, n += src[kZigzag[i]] != 0;
  const double w = block_weight(src, q_old, nz, n, rdo.strength);
  // Per non-zero position m: its magnitude in new steps and the (at most two) magnitudes worth
  // trying. zeroed[t]: the cost of zeroing every position up to node t's (node 0 the DC, node
  // m + 1 the position nz[m]), which is also the cost up to just before node t + 1's: zero
  // coefficients cost nothing to keep zero.
  double ax[63], zeroed[64];
  int cand[63][2];
  // The running sum stays in a register: stored and reloaded per position, it made this loop a
  // chain of store-to-load forwards.
  double zeroing = 0;
  zeroed[0] = 0;
  for (int m = 0; m < n; ++m) {
    const int k = kZigzag[nz[m]];
    ax[m] = std::fabs(double(src[k]) * q_old[k] / q_new[k]);
    const int c = std::min(int(ax[m] + 0.5), kMaxAc);
    cand[m][0] = c;
    // c - 1 is never nearer to ax than c (ax rounded), so it can win only where its magnitude
    // class is one bit shorter: c a power of two. Elsewhere one pass over the ends suffices.
    cand[m][1] = c >= 2 && (c & (c - 1)) == 0 ? c - 1 : 0;
    zeroing += w * ax[m] * ax[m];
    zeroed[m + 1] = zeroing;
  }
  // Trellis over the zig-zag runs, on nodes: node 0 is the DC (position 0), node m + 1 the
  // non-zero position nz[m]. best[t] is the cheapest cost (bits + weight * squared error in
  // quantisation steps) of coding positions 1..pos[t] with pos[t] the last non-zero
  // coefficient; standing[t] that less the cost of zeroing up to there.
  double best[64], standing[64];
  int pos[64], from[64], value[64];
  int ends[64], n_ends = 0;
  best[0] = standing[0] = 0;
  pos[0] = 0;
  ends[n_ends++] = 0;
  for (int m = 0; m < n; ++m) {
    const int t = m + 1, i = nz[m];
    pos[t] = i;
    best[t] = std::numeric_limits<double>::infinity();
    if (cand[m][0] == 0) continue;
    for (int c = 0; c < 2; ++c) {
      const int v = cand[m][c];
      if (v == 0) continue;
      const int size = bit_size(v);
      const double d = w * (ax[m] - v) * (ax[m] - v);
      for (int e = 0; e < n_ends; ++e) {
        const int j = ends[e];
        const int run = i - pos[j] - 1;
        const double cost = best[j] + (zeroed[m] - zeroed[j]) + d + (run >> 4) * rate->zrl_bits +
                            rate->ac_bits[((run & 15) << 4) | size] + size;
        if (cost < best[t]) best[t] = cost, from[t] = j, value[t] = v;
      }
    }
    // An end whose cost so far (less the zeroing cost it saved) exceeds the new end's by more
    // than a longer run can save on the next symbol never wins again: every later step from it
    // runs longer, the steps after that cost both the same, and the EOB costs it no less.
    // Dropping it leaves the result as it was.
    standing[t] = best[t] - zeroed[t];
    const double reach = standing[t] + rate->longer_run_advantage + kPruneMargin;
    int kept = 0;
    for (int e = 0; e < n_ends; ++e)
      if (standing[ends[e]] <= reach) ends[kept++] = ends[e];
    n_ends = kept;
    ends[n_ends++] = t;
  }
  int last = 0;
  double total = std::numeric_limits<double>::infinity();
  for (int e = 0; e < n_ends; ++e) {
    const int j = ends[e];
    const double cost = best[j] + (zeroing - zeroed[j]) + (pos[j] < 63 ? rate->eob_bits : 0);
    if (cost < total) total = cost, last = j;
  }
  std::fill(dst + 1, dst + 64, JCOEF(0));
  for (int t = last; t > 0; t = from[t]) {
    const int k = kZigzag[pos[t]];
    dst[k] = JCOEF(src[k] < 0 ? -value[t] : value[t]);
  }
  for (int m = 0; m < n; ++m) sq_error += error_of(kZigzag[nz[m]], dst[kZigzag[nz[m]]]);
  return sq_error;
}

Requantizer::Requantizer(CoefficientImage& image, std::vector<QuantTable> finest) : image_(&image) {
  const auto& info = image.info();
  source_tables_.assign(NUM_QUANT_TBLS, QuantTable{});
  for (int ci = 0; ci < info.num_components; ++ci) {
    const jpeg_component_info& c = info.comp_info[ci];
    if (!c.quant_table)
      throw FormatError(Reason::kCorrupt, 0, "a component has no quantisation table");
    QuantTable& t = source_tables_.at(size_t(c.quant_tbl_no));
    for (int k = 0; k < 64; ++k) t[k] = std::max<uint16_t>(c.quant_table->quantval[k], 1);
    Component comp;
    comp.slot = c.quant_tbl_no;
    comp.width = c.width_in_blocks;
    comp.height = c.height_in_blocks;
    components_.push_back(std::move(comp));
  }
  finest_tables_ = source_tables_;
  if (!finest.empty()) {
    if (finest.size() != source_tables_.size())
      throw FormatError(Reason::kInternalError, 0, "bounding tables for another table count");
    for (const Component& c : components_) {
      const size_t slot = size_t(c.slot);
      for (int k = 0; k < 64; ++k)
        if (finest[slot][k] < source_tables_[slot][k])
          throw FormatError(Reason::kInternalError, 0,
                            "a bounding table finer than the image's own");
      finest_tables_[slot] = finest[slot];
    }
  }
  pixels_ = std::max<uint64_t>(uint64_t(info.image_width) * info.image_height, 1);
  const bool full_resolution_chroma =
      components_.size() == 3 && info.jpeg_color_space == JCS_YCbCr &&
      std::all_of(components_.begin() + 1, components_.end(), [&](const Component& c) {
        return c.width == components_[0].width && c.height == components_[0].height;
      });
  if (full_resolution_chroma) chroma_scale_ = kFullResolutionChromaScale;
}

void Requantizer::copy_source() const {
  if (copied_) return;
  for (size_t ci = 0; ci < components_.size(); ++ci) {
    const Component& c = components_[ci];
    c.coefs.resize(size_t(c.width) * c.height * 64);
    for (JDIMENSION row = 0; row < c.height; ++row)
      std::memcpy(c.coefs.data() + size_t(row) * c.width * 64, image_->block_row(int(ci), row),
                  sizeof(JBLOCK) * c.width);
  }
  copied_ = true;
}

void Requantizer::restore_source() const {
  if (copied_) {
    for (size_t ci = 0; ci < components_.size(); ++ci) {
      const Component& c = components_[ci];
      for (JDIMENSION row = 0; row < c.height; ++row)
        std::memcpy(image_->mutable_block_row(int(ci), row),
                    c.coefs.data() + size_t(row) * c.width * 64, sizeof(JBLOCK) * c.width);
    }
  }
  image_->set_output_tables({});
}

const JCOEF* Requantizer::source_row(size_t ci, JDIMENSION row) const {
  const Component& c = components_[ci];
  return copied_ ? c.coefs.data() + size_t(row) * c.width * 64 : image_->block_row(int(ci), row)[0];
}

std::vector<QuantTable> Requantizer::tables_for(int permille) const {
  std::vector<QuantTable> out = finest_tables_;
  for (size_t slot = 0; slot < out.size(); ++slot) {
    bool used = false;
    for (const auto& c : components_) used |= size_t(c.slot) == slot;
    if (!used) continue;
    const bool luma = size_t(components_.front().slot) == slot;
    const QuantTable target =
        target_table(luma ? permille : int(std::lround(permille * chroma_scale_)));
    for (int k = 0; k < 64; ++k) out[slot][k] = std::max(finest_tables_[slot][k], target[k]);
  }
  return out;
}

double Requantizer::source_quality() const {
  return components_.empty() ? 100
                             : estimate_quality(finest_tables_[size_t(components_[0].slot)], false);
}

Requantizer::DistortionEstimate Requantizer::distortion_estimate(unsigned row_step) const {
  DistortionEstimate estimate;
  estimate.source_tables_ = &source_tables_;
  estimate.pixels_ = pixels_;
  row_step = std::max(row_step, 1u);
  std::array<std::vector<uint16_t>, 64> values;  // per frequency, one pass over the blocks
  for (size_t ci = 0; ci < components_.size(); ++ci) {
    const Component& c = components_[ci];
    DistortionEstimate::Component& out = estimate.components_.emplace_back();
    out.slot = c.slot;
    JDIMENSION rows = 0;
    for (auto& v : values) v.clear();
    for (JDIMENSION row = 0; row < c.height; row += row_step, ++rows) {
      const JCOEF* block = source_row(ci, row);
      for (JDIMENSION b = 0; b < c.width; ++b, block += 64)
        for (int k = 0; k < 64; ++k)
          if (block[k] != 0) values[size_t(k)].push_back(uint16_t(std::abs(int(block[k]))));
    }
    out.row_scale = rows ? double(c.height) / rows : 0;
    for (int k = 0; k < 64; ++k) {
      std::vector<uint16_t>& v = values[size_t(k)];
      std::sort(v.begin(), v.end());
      auto& magnitudes = out.magnitudes[size_t(k)];
      for (size_t at = 0; at < v.size();) {
        size_t end = at;
        while (end < v.size() && v[end] == v[at]) ++end;
        magnitudes.push_back({v[at], uint32_t(end - at)});
        at = end;
      }
    }
  }
  return estimate;
}

double Requantizer::DistortionEstimate::operator()(const std::vector<QuantTable>& tables) const {
  double total = 0;
  for (size_t ci = 0; ci < components_.size(); ++ci) {
    const Component& c = components_[ci];
    const uint16_t* q_old = (*source_tables_)[size_t(c.slot)].data();
    const uint16_t* q_new = tables[size_t(c.slot)].data();
    // Errors weighed by visibility: the Annex K tables are visibility thresholds per frequency.
    const uint16_t* base = ci == 0 ? kLuma : kChroma;
    double sum = 0;
    for (int k = 0; k < 64; ++k) {
      if (q_new[k] == q_old[k]) continue;
      double frequency_sum = 0;
      for (const Magnitude& m : c.magnitudes[size_t(k)]) {
        // Rounding is symmetric about zero: a magnitude's error is its negative's, squared.
        const int64_t x = int64_t(m.value) * q_old[k];
        const double e = double(x) - double(round_div(x, q_new[k])) * q_new[k];
        frequency_sum += e * e * m.count;
      }
      sum += frequency_sum * 256.0 / (double(base[k]) * base[k]);
    }
    total += sum * c.row_scale;
  }
  return total / double(pixels_);
}

double Requantizer::apply(const std::vector<QuantTable>& tables, const RdoParams& rdo) const {
  copy_source();
  CoefficientImage& image = *image_;
  double total = 0;
  JCOEF scratch[64];
  for (size_t ci = 0; ci < components_.size(); ++ci) {
    const Component& c = components_[ci];
    const uint16_t* q_old = source_tables_[size_t(c.slot)].data();
    const uint16_t* q_new = tables[size_t(c.slot)].data();
    // Symbol statistics of plain rounding on a sample of rows give the trellis its bit costs.
    uint32_t freq[256] = {};
    for (JDIMENSION row = 0; row < c.height; row += 4) {
      for (JDIMENSION b = 0; b < c.width; ++b) {
        requantize_block(c.coefs.data() + (size_t(row) * c.width + b) * 64, q_old, q_new, nullptr,
                         {}, scratch);
        int run = 0;
        for (int i = 1; i < 64; ++i) {
          const int v = std::abs(scratch[kZigzag[i]]);
          if (v == 0) {
            ++run;
            continue;
          }
          for (; run > 15; run -= 16) ++freq[0xF0];
          ++freq[(run << 4) | bit_size(v)];
          run = 0;
        }
        if (run > 0) ++freq[0x00];
      }
    }
    const RateModel rate = RateModel::from_frequencies(freq);
    for (JDIMENSION row = 0; row < c.height; ++row) {
      JBLOCK* blocks = image.mutable_block_row(int(ci), row);
      for (JDIMENSION b = 0; b < c.width; ++b)
        total += requantize_block(c.coefs.data() + (size_t(row) * c.width + b) * 64, q_old, q_new,
                                  &rate, rdo, blocks[b]);
    }
  }
  image.set_output_tables(tables);
  return total;
}

}  // namespace lighten::jpeg
