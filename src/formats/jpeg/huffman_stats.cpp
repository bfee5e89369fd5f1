#include "formats/jpeg/huffman_stats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "formats/jpeg/zigzag.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace lighten::jpeg {
namespace {

// 8-bit JPEG: DC differences need at most 11 bits, AC coefficients 10 (ITU T.81 F.1.2).
constexpr int kMaxDcBits = 11;
constexpr int kMaxAcBits = 10;
constexpr int kMaxBlocksInMcu = 10;  // libjpeg's C_MAX_BLOCKS_IN_MCU

// Zig-zag position of each natural (row-major) index: the inverse of kZigzag.
constexpr std::array<uint8_t, 64> kZigzagPosition = [] {
  std::array<uint8_t, 64> position{};
  for (int k = 0; k < 64; ++k) position[size_t(kZigzag[k])] = uint8_t(k);
  return position;
}();

// Bit k set when the coefficient at zig-zag position k (1..63) is not zero. The block is
// scanned in natural order, eight coefficients at a time where SSE2 is there, and only its
// non-zero coefficients (a handful in most blocks) are moved to their zig-zag bit.
uint64_t nonzero_ac_in_zigzag(const JCOEF* block) {
  uint64_t natural = 0;
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  for (int i = 0; i < 64; i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + i + 8));
    const __m128i zeros = _mm_packs_epi16(_mm_cmpeq_epi16(a, zero), _mm_cmpeq_epi16(b, zero));
    natural |= uint64_t(uint16_t(~_mm_movemask_epi8(zeros))) << i;
  }
#else
  for (int i = 0; i < 64; ++i) natural |= uint64_t(block[i] != 0) << i;
#endif
  natural &= ~uint64_t(1);  // the DC coefficient is coded apart
  uint64_t zigzag = 0;
  for (; natural; natural &= natural - 1)
    zigzag |= uint64_t(1) << kZigzagPosition[size_t(std::countr_zero(natural))];
  return zigzag;
}

int magnitude_bits(int value) {
  const unsigned magnitude = unsigned(std::abs(value));
  return magnitude == 0 ? 0 : std::bit_width(magnitude);
}

// Counts one block's symbols; false when a coefficient is out of range.
class BlockCounter {
 public:
  BlockCounter(std::array<uint64_t, 256>& dc, std::array<uint64_t, 256>& ac) : dc_(dc), ac_(ac) {}

  bool count(const JCOEF* block, int& last_dc) {
    const int dc_bits = magnitude_bits(block[0] - last_dc);
    if (dc_bits > kMaxDcBits) return false;
    ++dc_[size_t(dc_bits)];
    last_dc = block[0];
    // Runs of zeros fall out of the gaps between the non-zero positions.
    uint64_t nonzero = nonzero_ac_in_zigzag(block);
    int previous = 0;
    while (nonzero) {
      const int k = std::countr_zero(nonzero);
      nonzero &= nonzero - 1;
      int run = k - previous - 1;
      for (; run > 15; run -= 16) ++ac_[0xF0];  // ZRL: sixteen zeros
      const int bits = magnitude_bits(block[kZigzag[k]]);
      if (bits > kMaxAcBits) return false;
      ++ac_[size_t(run << 4 | bits)];
      previous = k;
    }
    if (previous != 63) ++ac_[0x00];  // EOB
    return true;
  }

  // A padding block libjpeg adds to complete an edge MCU: the DC of the block before it (a
  // zero difference) and no AC coefficients.
  void count_padding() {
    ++dc_[0];
    ++ac_[0x00];
  }

 private:
  std::array<uint64_t, 256>& dc_;
  std::array<uint64_t, 256>& ac_;
};

// Blocks in coding order for a scan of one component: MCU = one block, no padding.
bool count_single_component(CoefficientImage& image, unsigned restart_interval,
                            SymbolCounts& counts) {
  const jpeg_component_info& c = image.info().comp_info[0];
  BlockCounter counter(counts.dc[0], counts.ac[0]);
  int last_dc = 0;
  unsigned to_restart = restart_interval;
  for (JDIMENSION row = 0; row < c.height_in_blocks; ++row) {
    const JBLOCK* blocks = image.block_row(0, row);
    for (JDIMENSION col = 0; col < c.width_in_blocks; ++col) {
      if (restart_interval && to_restart-- == 0) {
        to_restart = restart_interval - 1;
        last_dc = 0;
      }
      if (!counter.count(blocks[col], last_dc)) return false;
    }
  }
  return true;
}

// One interleaved scan: each MCU holds h x v blocks of every component; at the right and
// bottom edges blocks past the component's width or height are padding (libjpeg's jctrans).
bool count_interleaved(CoefficientImage& image, unsigned restart_interval, SymbolCounts& counts) {
  const jpeg_decompress_struct& info = image.info();
  const int n = info.num_components;
  int max_h = 1, max_v = 1, blocks_in_mcu = 0;
  for (int ci = 0; ci < n; ++ci) {
    max_h = std::max(max_h, info.comp_info[ci].h_samp_factor);
    max_v = std::max(max_v, info.comp_info[ci].v_samp_factor);
    blocks_in_mcu += info.comp_info[ci].h_samp_factor * info.comp_info[ci].v_samp_factor;
  }
  if (blocks_in_mcu > kMaxBlocksInMcu) return false;
  const JDIMENSION mcu_cols =
      (info.image_width + JDIMENSION(max_h * 8) - 1) / JDIMENSION(max_h * 8);
  const JDIMENSION mcu_rows =
      (info.image_height + JDIMENSION(max_v * 8) - 1) / JDIMENSION(max_v * 8);
  std::vector<BlockCounter> counters;
  for (int ci = 0; ci < n; ++ci)
    counters.emplace_back(counts.dc[size_t(ci)], counts.ac[size_t(ci)]);
  std::vector<int> last_dc(size_t(n), 0);
  std::vector<const JBLOCK*> rows;
  unsigned to_restart = restart_interval;
  for (JDIMENSION my = 0; my < mcu_rows; ++my) {
    for (JDIMENSION mx = 0; mx < mcu_cols; ++mx) {
      if (restart_interval && to_restart-- == 0) {
        to_restart = restart_interval - 1;
        std::fill(last_dc.begin(), last_dc.end(), 0);
      }
      for (int ci = 0; ci < n; ++ci) {
        const jpeg_component_info& c = info.comp_info[ci];
        const JDIMENSION h = JDIMENSION(c.h_samp_factor), v = JDIMENSION(c.v_samp_factor);
        BlockCounter& counter = counters[size_t(ci)];
        for (JDIMENSION y = 0; y < v; ++y) {
          const JDIMENSION row = my * v + y;
          JDIMENSION real = 0;
          if (row < c.height_in_blocks) {
            const JDIMENSION first = mx * h;
            real = first >= c.width_in_blocks ? 0 : std::min(h, c.width_in_blocks - first);
            const JBLOCK* blocks = image.block_row(ci, row);
            for (JDIMENSION x = 0; x < real; ++x)
              if (!counter.count(blocks[first + x], last_dc[size_t(ci)])) return false;
          }
          for (JDIMENSION x = real; x < h; ++x) counter.count_padding();
        }
      }
    }
  }
  return true;
}

}  // namespace

std::optional<SymbolCounts> count_sequential_symbols(CoefficientImage& image,
                                                     unsigned restart_interval) {
  const jpeg_decompress_struct& info = image.info();
  const int n = info.num_components;
  if (n < 1 || n > MAX_COMPS_IN_SCAN || info.data_precision != 8) return std::nullopt;
  SymbolCounts counts;
  counts.dc.assign(size_t(n), {});
  counts.ac.assign(size_t(n), {});
  const bool ok = n == 1 ? count_single_component(image, restart_interval, counts)
                         : count_interleaved(image, restart_interval, counts);
  if (!ok) return std::nullopt;
  return counts;
}

uint64_t sequential_bytes_lower_bound(const SymbolCounts& counts) {
  // Shannon's bound per component: a table shared by several components costs at least the
  // sum of their own entropies.
  auto entropy_bits = [](const std::array<uint64_t, 256>& freq) {
    uint64_t total = 0;
    for (uint64_t f : freq) total += f;
    double bits = 0;
    for (uint64_t f : freq)
      if (f) bits += double(f) * std::log2(double(total) / double(f));
    return bits;
  };
  double bits = 0;
  for (size_t ci = 0; ci < counts.dc.size(); ++ci) {
    bits += entropy_bits(counts.dc[ci]) + entropy_bits(counts.ac[ci]);
    for (size_t s = 0; s < 256; ++s)  // a DC category or an AC symbol's low nibble: extra bits
      bits += double(counts.dc[ci][s] * (s & 15) + counts.ac[ci][s] * (s & 15));
  }
  const double bytes = bits / 8 * (1 - 1e-9);  // rounding of the sum must not lift the bound
  return bytes > 0 ? uint64_t(bytes) : 0;
}

std::optional<HuffmanCode> optimal_huffman_code(const std::array<uint64_t, 256>& frequencies) {
  // Symbol 256 is the reserved code point: it takes the longest code, which is then dropped.
  constexpr int kSymbols = 257;
  constexpr int kMaxLength = 32;
  // Live subtrees by (frequency, symbol): the two least frequent come first, and among equals
  // the higher symbol, as Annex K.2 and libjpeg choose (so the tables, and the bytes, match
  // libjpeg's own optimisation). A heap finds them in log time where libjpeg scans all 257.
  using Subtree = std::pair<uint64_t, int>;
  auto later = [](const Subtree& a, const Subtree& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  };
  std::array<Subtree, kSymbols> heap;
  size_t live = 0;
  for (int i = 0; i < 256; ++i)
    if (frequencies[size_t(i)]) heap[live++] = {frequencies[size_t(i)], i};
  if (live == 0) return std::nullopt;
  heap[live++] = {1, 256};
  std::make_heap(heap.begin(), heap.begin() + std::ptrdiff_t(live), later);
  auto pop = [&] {
    std::pop_heap(heap.begin(), heap.begin() + std::ptrdiff_t(live), later);
    return heap[--live];
  };
  std::array<int, kSymbols> length{};
  std::array<int, kSymbols> next_in_tree;  // the symbols merged into one subtree, as a chain
  next_in_tree.fill(-1);
  while (live > 1) {
    const auto [f1, first] = pop();
    const auto [f2, second] = pop();
    heap[live++] = {f1 + f2, first};
    std::push_heap(heap.begin(), heap.begin() + std::ptrdiff_t(live), later);
    int c1 = first, c2 = second;
    ++length[size_t(c1)];
    while (next_in_tree[size_t(c1)] >= 0) {
      c1 = next_in_tree[size_t(c1)];
      ++length[size_t(c1)];
    }
    next_in_tree[size_t(c1)] = c2;
    ++length[size_t(c2)];
    while (next_in_tree[size_t(c2)] >= 0) {
      c2 = next_in_tree[size_t(c2)];
      ++length[size_t(c2)];
    }
  }
  std::array<int, kMaxLength + 1> count{};
  for (int i = 0; i < kSymbols; ++i) {
    if (length[size_t(i)] > kMaxLength) return std::nullopt;
    if (length[size_t(i)]) ++count[size_t(length[size_t(i)])];
  }
  // Annex K.3: fold codes longer than 16 bits into shorter ones, pair by pair.
  for (int i = kMaxLength; i > 16; --i) {
    while (count[size_t(i)] > 0) {
      int j = i - 2;
      while (count[size_t(j)] == 0) --j;
      count[size_t(i)] -= 2;
      ++count[size_t(i - 1)];
      count[size_t(j + 1)] += 2;
      --count[size_t(j)];
    }
  }
  int longest = 16;
  while (count[size_t(longest)] == 0) --longest;
  --count[size_t(longest)];  // the reserved code point goes
  HuffmanCode code;
  for (int i = 1; i <= 16; ++i) code.bits[size_t(i)] = uint8_t(count[size_t(i)]);
  // Symbols in order of their unadjusted length, then value: the adjustment keeps that order.
  std::array<std::pair<int, int>, 256> order;  // (length, symbol)
  size_t used = 0;
  for (int s = 0; s < 256; ++s)
    if (length[size_t(s)]) order[used++] = {length[size_t(s)], s};
  std::sort(order.begin(), order.begin() + std::ptrdiff_t(used));
  code.values.reserve(used);
  for (size_t i = 0; i < used; ++i) code.values.push_back(uint8_t(order[i].second));
  return code;
}

}  // namespace lighten::jpeg
