#include "formats/jpeg/estimate.h"
#include "formats/jpeg/huffman_stats.h"
#include "formats/jpeg/zigzag.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <optional>

namespace lighten::jpeg {
namespace {

constexpr int kMaxCorrectionBits = 1000;  // MAX_CORR_BITS in jcphuff.c

int bit_length(unsigned v) { return v ? 32 - std::countl_zero(v) : 0; }

uint64_t band_mask(int ss, int se) {
  uint64_t upto = se >= 63 ? ~0ull : (1ull << (se + 1)) - 1;
  return upto & ~((1ull << ss) - 1);
}

// Symbol statistics of one scan, as jcphuff.c gathers them.
struct Gather {
  uint32_t freq[256] = {};
  uint64_t raw_bits = 0;
  uint32_t eobrun = 0;
  uint32_t be = 0;  // buffered correction bits (refinement scans)

  void emit_eobrun() {
    if (eobrun == 0) return;
    int nbits = bit_length(eobrun) - 1;
    ++freq[nbits << 4];
    raw_bits += unsigned(nbits) + be;
    eobrun = 0;
    be = 0;
  }
  // `count` blocks with nothing in the band, as that many EOB-run increments (a run is sent
  // whenever it reaches its longest, 0x7FFF).
  void add_empty_blocks(uint64_t count) {
    uint64_t total = eobrun + count;
    while (total >= kLongestEobRun) {
      eobrun = kLongestEobRun;
      emit_eobrun();
      total -= kLongestEobRun;
    }
    eobrun = uint32_t(total);
  }
  static constexpr uint32_t kLongestEobRun = 0x7FFF;
};

// Restart markers of a single-component scan, one MCU (block) at a time.
struct RestartClock {
  unsigned interval = 0;  // in blocks; 0 = no markers
  unsigned to_go = interval;
  uint64_t restarts = 0;
  // Counts the block; true when a marker comes before it (an EOB run must end there).
  bool marker_before_block() {
    if (!interval) return false;
    const bool marker = to_go == 0;
    if (marker) {
      ++restarts;
      to_go = interval;
    }
    --to_go;
    return marker;
  }
};

// Bytes of one scan from its statistics: entropy data scaled from the sampled rows to all,
// restart markers, and the DHT and SOS segments.
size_t scan_bytes(const uint32_t (&freq)[256], uint64_t raw_bits, uint64_t restarts, double scale) {
  int symbols = 0;
  const uint64_t bits = huffman_bits(freq, &symbols) + raw_bits;
  // Data and restarts scale with the rows sampled; the table and header do not.
  double data = double((bits + 7) / 8) * (1 + 1.0 / 256);  // about one stuffed zero per 0xFF
  data += double(restarts) * 2.5;                          // RST markers and padding bits
  size_t bytes = size_t(data * scale);
  if (symbols) bytes += 4 + 1 + 16 + size_t(symbols);  // DHT
  bytes += 10;                                         // SOS with one component
  return bytes;
}

}  // namespace

uint64_t huffman_bits(const uint32_t (&freq_in)[256], int* symbols) {
  // The very table libjpeg builds for these counts (Annex K, as huffman_stats writes it).
  std::array<uint64_t, 256> freq{};
  for (size_t i = 0; i < 256; ++i) freq[i] = freq_in[i];
  const std::optional<HuffmanCode> code = optimal_huffman_code(freq);
  if (symbols) *symbols = code ? int(code->values.size()) : 0;
  if (!code) return 0;
  uint64_t total = 0;
  size_t k = 0;
  for (size_t len = 1; len <= 16; ++len)
    for (int c = 0; c < code->bits[len]; ++c, ++k) total += freq[code->values[k]] * len;
  return total;
}

ComponentIndex::ComponentIndex(CoefficientImage& image, int component, unsigned row_step) {
  const jpeg_component_info& c = image.info().comp_info[component];
  row_step = std::max(1u, row_step);
  width_ = c.width_in_blocks;
  height_ = (c.height_in_blocks + row_step - 1) / row_step;
  scale_ = height_ ? double(c.height_in_blocks) / height_ : 1;
  rows_.resize(height_);
  masks_.resize(size_t(width_) * height_ * kMaxAl);
  uint64_t* m = masks_.data();
  for (JDIMENSION r = 0; r < height_; ++r) {
    rows_[r] = image.block_row(component, r * row_step);
    for (JDIMENSION b = 0; b < width_; ++b) {
      const JCOEF* block = rows_[r][b];
      uint64_t m0 = 0, m1 = 0, m2 = 0, m3 = 0;
      for (int k = 1; k < 64; ++k) {
        unsigned a = unsigned(std::abs(block[kZigzag[k]]));
        m0 |= uint64_t(a != 0) << k;
        m1 |= uint64_t(a > 1) << k;
        m2 |= uint64_t(a > 3) << k;
        m3 |= uint64_t(a > 7) << k;
      }
      *m++ = m0;
      *m++ = m1;
      *m++ = m2;
      *m++ = m3;
    }
  }
}

size_t ComponentIndex::estimate(const ScanBand& band, unsigned restart_interval) const {
  const uint64_t in_band = band_mask(band.ss, band.se);
  const int al = band.al, ah = band.ah;
  if (al >= kMaxAl || ah >= kMaxAl) return SIZE_MAX;
  Gather g;
  RestartClock clock{restart_interval};
  const uint64_t* m = masks_.data();
  for (JDIMENSION r = 0; r < height_; ++r) {
    const JBLOCK* row = rows_[r];
    for (JDIMENSION b = 0; b < width_; ++b, m += kMaxAl) {
      if (clock.marker_before_block()) g.emit_eobrun();
      const JCOEF* block = row[b];
      uint64_t nonzero = m[al] & in_band;
      if (ah == 0) {  // first scan of this band (encode_mcu_AC_first)
        int prev = band.ss - 1;
        while (nonzero) {
          int k = std::countr_zero(nonzero);
          nonzero &= nonzero - 1;
          int run = k - prev - 1;
          prev = k;
          g.emit_eobrun();
          while (run > 15) {
            ++g.freq[0xF0];
            run -= 16;
          }
          int nbits = bit_length(unsigned(std::abs(block[kZigzag[k]])) >> al);
          ++g.freq[(run << 4) + nbits];
          g.raw_bits += unsigned(nbits);
        }
        if (prev < band.se && ++g.eobrun == 0x7FFF) g.emit_eobrun();
        continue;
      }
      // Refinement scan (encode_mcu_AC_refine): coefficients already non-zero at Ah only
      // send a correction bit; newly non-zero ones send a run/size symbol and a sign bit.
      const uint64_t previous = m[ah] & in_band;
      const uint64_t fresh = nonzero & ~previous;
      const int eob = fresh ? 63 - std::countl_zero(fresh) : -1;
      int prev = band.ss - 1;
      int run = 0;
      uint32_t br = 0;
      while (nonzero) {
        int k = std::countr_zero(nonzero);
        nonzero &= nonzero - 1;
        run += k - prev - 1;
        prev = k;
        while (run > 15 && k <= eob) {
          g.emit_eobrun();
          ++g.freq[0xF0];
          run -= 16;
          g.raw_bits += br;
          br = 0;
        }
        if (previous >> k & 1) {
          ++br;
          continue;
        }
        g.emit_eobrun();
        ++g.freq[(run << 4) + 1];
        g.raw_bits += 1 + br;
        br = 0;
        run = 0;
      }
      run += band.se - prev;
      if (run > 0 || br > 0) {
        ++g.eobrun;
        g.be += br;
        if (g.eobrun == 0x7FFF || g.be > kMaxCorrectionBits - 64 + 1) g.emit_eobrun();
      }
    }
  }
  g.emit_eobrun();
  return scan_bytes(g.freq, g.raw_bits, clock.restarts, scale_);
}

std::vector<size_t> ComponentIndex::estimate_first_scans(int ss, const std::vector<int>& ends,
                                                         int al, unsigned restart_interval) const {
  const size_t n = ends.size();
  if (n == 0) return {};
  if (al >= kMaxAl || ss < 1 || ends.back() > 63 || !std::is_sorted(ends.begin(), ends.end()) ||
      ends.front() < ss)
    return std::vector<size_t>(n, SIZE_MAX);
  // A band ss..ends[j] sends what ss..ends[j-1] sends plus the symbols of coefficients past
  // ends[j-1]: symbols are counted once, in the segment of their coefficient, and summed per
  // end at the close. EOB runs differ per end and are kept per end.
  std::array<uint8_t, 64> segment{};  // the first end at or after each position
  for (int k = ss, j = 0; k <= ends.back(); ++k) {
    while (ends[size_t(j)] < k) ++j;
    segment[size_t(k)] = uint8_t(j);
  }
  std::vector<Gather> end_state(n);
  std::vector<Gather> segment_symbols(n);  // freq and raw_bits only
  const uint64_t in_band = band_mask(ss, ends.back());
  uint64_t empty = 0;  // blocks empty for every end, not yet added to the runs
  auto settle_empty = [&] {
    if (empty == 0) return;
    for (Gather& g : end_state) g.add_empty_blocks(empty);
    empty = 0;
  };
  RestartClock clock{restart_interval};
  const uint64_t* m = masks_.data();
  for (JDIMENSION r = 0; r < height_; ++r) {
    const JBLOCK* row = rows_[r];
    for (JDIMENSION b = 0; b < width_; ++b, m += kMaxAl) {
      if (clock.marker_before_block()) {
        settle_empty();
        for (Gather& g : end_state) g.emit_eobrun();
      }
      uint64_t nonzero = m[al] & in_band;
      if (!nonzero) {
        ++empty;
        continue;
      }
      settle_empty();
      const size_t first = segment[size_t(std::countr_zero(nonzero))];
      for (size_t j = 0; j < first; ++j) end_state[j].add_empty_blocks(1);
      for (size_t j = first; j < n; ++j) {
        end_state[j].emit_eobrun();  // the block's first symbol follows
        if (!(nonzero >> ends[j] & 1)) end_state[j].add_empty_blocks(1);  // its EOB
      }
      const JCOEF* block = row[b];
      int prev = ss - 1;
      while (nonzero) {
        int k = std::countr_zero(nonzero);
        nonzero &= nonzero - 1;
        int run = k - prev - 1;
        prev = k;
        Gather& g = segment_symbols[segment[size_t(k)]];
        for (; run > 15; run -= 16) ++g.freq[0xF0];
        int nbits = bit_length(unsigned(std::abs(block[kZigzag[k]])) >> al);
        ++g.freq[(run << 4) + nbits];
        g.raw_bits += unsigned(nbits);
      }
    }
  }
  settle_empty();
  std::vector<size_t> bytes(n);
  uint32_t freq[256] = {};
  uint64_t raw_bits = 0;
  for (size_t j = 0; j < n; ++j) {
    Gather& g = end_state[j];
    g.emit_eobrun();
    raw_bits += segment_symbols[j].raw_bits;
    for (int s = 0; s < 256; ++s) {
      freq[s] += segment_symbols[j].freq[s];
      g.freq[s] += freq[s];
    }
    bytes[j] = scan_bytes(g.freq, g.raw_bits + raw_bits, clock.restarts, scale_);
  }
  return bytes;
}

}  // namespace lighten::jpeg
