#include "formats/png/png_filters.h"

#include <cmath>
#include <cstdlib>
#include <limits>

namespace lighten {
namespace {

uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return uint8_t(a);
  return uint8_t(pb <= pc ? b : c);
}

// Calls visit(row_start, row_bytes) for each row of each pass, in stream order.
template <typename Visit>
void for_each_pass(const PngHeader& h, Visit visit) {
  size_t pos = 0;
  for (const PngPass& pass : png_passes(h)) {
    if (pass.width == 0 || pass.height == 0) continue;
    const size_t row = size_t(h.row_bytes(pass.width));
    visit(pos, row, pass.height);
    pos += (row + 1) * pass.height;
  }
}

void filter_row(uint8_t type, const uint8_t* cur, const uint8_t* prev, size_t n, unsigned bpp,
                uint8_t* out) {
  for (size_t i = 0; i < n; ++i) {
    const int a = i >= bpp ? cur[i - bpp] : 0;
    const int b = prev ? prev[i] : 0;
    const int c = (prev && i >= bpp) ? prev[i - bpp] : 0;
    int pred = 0;
    switch (type) {
      case 1:
        pred = a;
        break;
      case 2:
        pred = b;
        break;
      case 3:
        pred = (a + b) >> 1;
        break;
      case 4:
        pred = paeth(a, b, c);
        break;
      default:
        break;
    }
    out[i] = uint8_t(cur[i] - pred);
  }
}

uint64_t signed_sum(const uint8_t* p, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; ++i) s += p[i] < 128 ? p[i] : 256 - p[i];
  return s;
}

// Entropy in bits of the row's byte histogram: a closer proxy for deflate's cost than sums.
double row_entropy(const uint8_t* p, size_t n) {
  uint32_t counts[256] = {};
  for (size_t i = 0; i < n; ++i) ++counts[p[i]];
  double bits = 0;
  for (uint32_t c : counts)
    if (c) bits -= double(c) * std::log2(double(c) / double(n));
  return bits;
}

}  // namespace

std::vector<PngPass> png_passes(const PngHeader& h) {
  if (h.interlace == 0) return {{h.width, h.height}};
  static constexpr uint32_t kStartX[7] = {0, 4, 0, 2, 0, 1, 0};
  static constexpr uint32_t kStartY[7] = {0, 0, 4, 0, 2, 0, 1};
  static constexpr uint32_t kStepX[7] = {8, 8, 4, 4, 2, 2, 1};
  static constexpr uint32_t kStepY[7] = {8, 8, 8, 4, 4, 2, 2};
  std::vector<PngPass> passes;
  for (int p = 0; p < 7; ++p) {
    const uint32_t w =
        h.width > kStartX[p] ? (h.width - kStartX[p] + kStepX[p] - 1) / kStepX[p] : 0;
    const uint32_t ht =
        h.height > kStartY[p] ? (h.height - kStartY[p] + kStepY[p] - 1) / kStepY[p] : 0;
    passes.push_back({w, ht});
  }
  return passes;
}

uint64_t png_data_size(const PngHeader& h, uint64_t limit) {
  uint64_t total = 0;
  for (const PngPass& pass : png_passes(h)) {
    if (pass.width == 0 || pass.height == 0) continue;
    total += (h.row_bytes(pass.width) + 1) * pass.height;
    if (total > limit)
      throw FormatError(Reason::kLimitExceeded, 8,
                        "image data would take more than " + std::to_string(limit) + " bytes");
  }
  return total;
}

void png_unfilter(Bytes& data, const PngHeader& h) {
  const unsigned bpp = h.filter_stride();
  for_each_pass(h, [&](size_t pos, size_t row, uint32_t rows) {
    for (uint32_t y = 0; y < rows; ++y) {
      const size_t at = pos + y * (row + 1);
      const uint8_t type = data[at];
      uint8_t* cur = data.data() + at + 1;
      const uint8_t* prev = y > 0 ? cur - (row + 1) : nullptr;
      switch (type) {
        case 0:
          break;
        case 1:
          for (size_t i = bpp; i < row; ++i) cur[i] = uint8_t(cur[i] + cur[i - bpp]);
          break;
        case 2:
          if (prev)
            for (size_t i = 0; i < row; ++i) cur[i] = uint8_t(cur[i] + prev[i]);
          break;
        case 3:
          for (size_t i = 0; i < row; ++i) {
            const int a = i >= bpp ? cur[i - bpp] : 0;
            const int b = prev ? prev[i] : 0;
            cur[i] = uint8_t(cur[i] + ((a + b) >> 1));
          }
          break;
        case 4:
          for (size_t i = 0; i < row; ++i) {
            const int a = i >= bpp ? cur[i - bpp] : 0;
            const int b = prev ? prev[i] : 0;
            const int c = (prev && i >= bpp) ? prev[i - bpp] : 0;
            cur[i] = uint8_t(cur[i] + paeth(a, b, c));
          }
          break;
        default:
          throw FormatError(Reason::kCorrupt, at,
                            "unknown PNG filter type " + std::to_string(type));
      }
      data[at] = 0;
    }
  });
}

Bytes png_filter(const Bytes& raw, const PngHeader& h, PngFilterStrategy strategy) {
  Bytes out(raw.size());
  const unsigned bpp = h.filter_stride();
  std::vector<uint8_t> trial;
  for_each_pass(h, [&](size_t pos, size_t row, uint32_t rows) {
    trial.resize(row);
    for (uint32_t y = 0; y < rows; ++y) {
      const size_t at = pos + y * (row + 1);
      const uint8_t* cur = raw.data() + at + 1;
      const uint8_t* prev = y > 0 ? cur - (row + 1) : nullptr;
      uint8_t* dst = out.data() + at + 1;
      const bool adaptive =
          strategy == PngFilterStrategy::kMinSum || strategy == PngFilterStrategy::kEntropy;
      if (!adaptive) {
        const auto type = static_cast<uint8_t>(strategy);
        out[at] = type;
        filter_row(type, cur, prev, row, bpp, dst);
        continue;
      }
      double best = std::numeric_limits<double>::max();
      for (uint8_t type = 0; type < 5; ++type) {
        filter_row(type, cur, prev, row, bpp, trial.data());
        const double sum = strategy == PngFilterStrategy::kMinSum
                               ? double(signed_sum(trial.data(), row))
                               : row_entropy(trial.data(), row);
        if (sum < best) {
          best = sum;
          out[at] = type;
          std::copy(trial.begin(), trial.end(), dst);
        }
      }
    }
  });
  return out;
}

}  // namespace lighten
