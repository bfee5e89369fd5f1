// Optimal Huffman tables for a sequential (baseline) JPEG, counted straight from the DCT
// coefficients. libjpeg's own optimize_coding pass gathers the same counts by running its
// encoder once without output, at several times the cost of the real encoding pass; counting
// here and handing libjpeg finished tables gives the same bytes in about a third of the time.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "formats/jpeg/coefficients.h"

namespace lighten::jpeg {

// How often each DC category (0..11) and each AC run/size symbol (0x00..0xFF) occurs per
// component, as libjpeg's single interleaved scan codes the image (MCU order, padding blocks
// at the right and bottom edges, DC prediction reset at every restart marker).
struct SymbolCounts {
  std::vector<std::array<uint64_t, 256>> dc, ac;  // one per component
};

// nullopt where libjpeg's gathering pass must decide: more than four components or ten
// blocks per MCU (libjpeg then writes several scans), or a coefficient outside what 8-bit
// Huffman coding can carry (libjpeg reports the error).
std::optional<SymbolCounts> count_sequential_symbols(CoefficientImage& image,
                                                     unsigned restart_interval);

// Fewest bytes any Huffman tables can code these counts in (the symbols' entropy plus their
// extra bits), whatever components share a table: the written scan is never smaller. Lets the
// scan search drop a baseline candidate that cannot win without writing it.
uint64_t sequential_bytes_lower_bound(const SymbolCounts& counts);

// A Huffman code as a DHT segment holds it: codes per length (bits[1..16]) and symbols in code
// order.
struct HuffmanCode {
  std::array<uint8_t, 17> bits{};
  std::vector<uint8_t> values;
};

// The code JPEG's Annex K.2 builds from symbol frequencies: a Huffman code with one code point
// reserved (no code of all ones), lengths limited to 16 bits by Annex K.3's adjustment, symbols
// ordered by length and value. nullopt when no symbol occurs or the frequencies are too skewed
// for 32-bit code lengths before the adjustment (libjpeg refuses those too).
std::optional<HuffmanCode> optimal_huffman_code(const std::array<uint64_t, 256>& frequencies);

}  // namespace lighten::jpeg
