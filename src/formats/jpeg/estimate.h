// Size estimates of progressive scans without writing them: the symbol statistics libjpeg's
// progressive Huffman encoder (jcphuff.c) would gather, coded with the optimal table it would
// build. Lets the scan search try many scripts for the price of one pass each over the
// non-zero coefficients, and write only the winner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "formats/jpeg/coefficients.h"

namespace lighten::jpeg {

struct ScanBand {
  int ss, se, ah, al;
};

// One component's coefficients, indexed for fast scans over their non-zero positions.
class ComponentIndex {
 public:
  // `row_step` > 1 indexes only every row_step-th block row: estimates then rank the
  // candidates from a sample, for a fraction of the time.
  ComponentIndex(CoefficientImage& image, int component, unsigned row_step = 1);
  // Bytes a single-component AC scan would take: entropy data, its DHT segment, the SOS
  // header and restart markers. `restart_interval` is in MCUs (one block per MCU here).
  size_t estimate(const ScanBand& band, unsigned restart_interval) const;
  // estimate({ss, ends[j], 0, al}) for every end (ascending, ss..63) in one pass over the
  // blocks: the band search costs every split of a progression this way.
  std::vector<size_t> estimate_first_scans(int ss, const std::vector<int>& ends, int al,
                                           unsigned restart_interval) const;

 private:
  static constexpr int kMaxAl = 4;
  JDIMENSION width_ = 0, height_ = 0;
  double scale_ = 1;  // all block rows / indexed block rows
  std::vector<const JBLOCK*> rows_;
  std::vector<uint64_t> masks_;  // kMaxAl masks per block: bit k set when |coef[zigzag k]| >> al
};

// Bits of `freq`'s symbols under libjpeg's optimal Huffman code for them (optimal_huffman_code);
// returns the total bits and the symbol count.
uint64_t huffman_bits(const uint32_t (&freq)[256], int* symbols);

}  // namespace lighten::jpeg
