// SSIMULACRA 2.1, streamed.
//
// The published algorithm (libjxl tools/ssimulacra2.cc) holds a dozen full float planes per
// image: 1.7 GB for a 12 MP pair. Every step of it is local, though: sRGB to XYB is per pixel,
// the 2x2 box downscale (done in linear RGB) needs two rows, and the recursive Gaussian is a
// 9-tap FIR with zero padding (see gaussian_blur.h). So each scale here is a pipeline that takes
// one row of linear RGB at a time, blurs it horizontally, keeps a ring of the last 11 such rows
// per quantity and the state of the vertical recursion per column, emits the blurred row 4 rows
// behind, turns it into the SSIM and edge maps, and pools their 1- and 4-norms per tile. Every
// second input row is averaged with the previous one and pushed into the next scale's pipeline, so
// all six scales advance together and the whole computation lives in a few MB. The result is the
// same maths as the reference, up to float rounding.

#include "quality/ssimulacra2.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "quality/gaussian_blur.h"
#include "quality/simd.h"
#include "quality/xyb.h"

namespace lighten {
namespace {

using simd::V8;

constexpr int kNumScales = 6;
constexpr int kRadius = 5;              // of the sigma 1.5 recursive Gaussian
constexpr int kRing = 2 * kRadius + 1;  // the vertical step reads rows n - 6 and n + 4
constexpr size_t kPad = simd::kLanes;   // slack each side of a padded row
constexpr float kC2 = 0.0009f;
constexpr int kNumSums = 6;  // per channel: ssim, ssim^4, artifact, artifact^4, detail, detail^4

size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

// Tiles in full-resolution pixels; at scale s a tile spans (t * size) >> s .. ((t + 1) * size) >> s
// (exact, as size is a multiple of 32), the last one running to the edge.
struct TileGrid {
  uint32_t size = 0;
  uint32_t nx = 1, ny = 1;

  uint32_t begin(uint32_t t, int scale) const { return (t * size) >> scale; }
  uint32_t end(uint32_t t, uint32_t n, uint32_t extent, int scale) const {
    return t + 1 == n ? extent : ((t + 1) * size) >> scale;
  }
  uint32_t row_of(uint32_t y, int scale) const {
    return size == 0 ? 0 : std::min((y << scale) / size, ny - 1);
  }
};

// One scale of the computation (see the file comment). Rows are planar float rows, wp_ wide.
class ScalePipeline {
 public:
  ScalePipeline(int scale, int num_scales, double negligible_weight, uint32_t width,
                uint32_t height, const TileGrid& grid, double* sums, ScalePipeline* next)
      : scale_(scale),
        width_(width),
        height_(height),
        wp_(round_up(width, simd::kLanes)),
        stride_(wp_ + 2 * kPad),
        grid_(grid),
        sums_(sums),
        next_(next),
        rg_(ssimulacra2_gaussian()) {
    if (rg_.radius != kRadius) throw std::logic_error("ssimulacra2: unexpected blur radius");
    for (int c = 0; c < 3; ++c) {
      need_ssim_[c] = ssimulacra2_map_weighted(num_scales, scale, c, 0, negligible_weight);
      need_edge_[c] = ssimulacra2_map_weighted(num_scales, scale, c, 1, negligible_weight) ||
                      ssimulacra2_map_weighted(num_scales, scale, c, 2, negligible_weight);
    }
    const size_t next_wp = next_ ? next_->wp_ : 0;
    // Padded rows: xyb ring (2 images x 3 channels x kRing) and three product rows per channel.
    const size_t padded_rows = 2 * 3 * kRing + 3 * 3;
    // Plain rows: blurred rings and vertical states (3 channels x 5 quantities x (kRing + 6)),
    // and 5 vertical outputs; then two sets of the next scale's linear rows (see downscale).
    const size_t plain_rows = 3 * 5 * (kRing + 6) + 5;
    storage_.assign(padded_rows * stride_ + plain_rows * wp_ + 2 * 2 * 3 * next_wp, 0.0f);
    float* p = storage_.data();
    for (auto& image : xyb_) {
      for (auto& channel : image) {
        for (float*& row : channel) {
          row = p + kPad;
          p += stride_;
        }
      }
    }
    for (auto& channel : products_) {
      for (float*& row : channel) {
        row = p + kPad;
        p += stride_;
      }
    }
    for (auto& channel : blurred_) {
      for (auto& quantity : channel) {
        for (float*& row : quantity) {
          row = p;
          p += wp_;
        }
      }
    }
    for (auto& channel : state_) {
      for (auto& quantity : channel) {
        for (float*& row : quantity) {
          row = p;
          p += wp_;
        }
      }
    }
    for (float*& row : vertical_) {
      row = p;
      p += wp_;
    }
    for (auto& set : next_linear_) {
      for (auto& image : set) {
        for (float*& row : image) {
          row = p;
          p += next_wp;
        }
      }
    }
  }

  // Takes the next row of linear RGB of both images (3 rows of wp_ floats each). An even row's
  // buffers must stay as they are until the next row has been pushed (the downscale reads them
  // then): callers alternate between two sets.
  void push_row(const float* const* linear1, const float* const* linear2) {
    const uint32_t y = rows_in_++;
    const int slot = static_cast<int>(y % kRing);
    const float* const* linear[2] = {linear1, linear2};
    for (int i = 0; i < 2; ++i) {
      float* const(*out)[kRing] = xyb_[i];
      // B' only where one of its maps is weighed (not at full resolution for the search).
      linear_to_positive_xyb(linear[i][0], linear[i][1], linear[i][2], out[0][slot], out[1][slot],
                             need_ssim_[2] || need_edge_[2] ? out[2][slot] : nullptr, wp_);
      for (int c = 0; c < 3; ++c) std::fill(out[c][slot] + width_, out[c][slot] + wp_, 0.0f);
    }
    blur_inputs(slot);
    if (next_) downscale(y, linear);
    vertical_step(static_cast<int64_t>(y) - kRadius + 1);
  }

  // Emits the last rows once all input rows have been pushed.
  void finish() {
    if (next_ && height_ % 2 == 1) {
      // Odd height: the last row pairs with itself, as libjxl clamps at the edge.
      downscale_pair(previous_linear_, previous_linear_);
    }
    // Steps 1 - N .. height - N ran as rows came in; the rest have no bottom input.
    for (int64_t n = static_cast<int64_t>(height_) - kRadius + 1; n < height_; ++n) {
      vertical_step(n);
    }
    if (next_) next_->finish();
  }

 private:
  // Blurs, for every channel with a weighted map, the new row of both images and (for SSIM)
  // their products, in one call: the horizontal pass keeps several rows in flight, so batching
  // all channels' rows wastes fewer lanes than five rows at a time.
  void blur_inputs(int slot) {
    const float* in[15];
    float* out[15];
    int count = 0;
    for (int c = 0; c < 3; ++c) {
      if (!need_ssim_[c] && !need_edge_[c]) continue;
      const float* x1 = xyb_[0][c][slot];
      const float* x2 = xyb_[1][c][slot];
      const int quantities = need_ssim_[c] ? 5 : 2;
      if (need_ssim_[c]) {
        float* const* prod = products_[c];
        for (size_t x = 0; x < wp_; x += simd::kLanes) {
          const V8 a = simd::load(x1 + x), b = simd::load(x2 + x);
          simd::store(prod[0] + x, a * a);
          simd::store(prod[1] + x, b * b);
          simd::store(prod[2] + x, a * b);
        }
      }
      const float* rows[5] = {x1, x2, products_[c][0], products_[c][1], products_[c][2]};
      for (int q = 0; q < quantities; ++q) {
        in[count] = rows[q];
        out[count++] = blurred_[c][q][slot];
      }
    }
    if (count > 0) gaussian_blur_rows(rg_, in, out, count, width_);
  }

  void downscale(uint32_t y, const float* const* const* linear) {
    if (y % 2 == 0) {
      previous_linear_[0] = linear[0];
      previous_linear_[1] = linear[1];
      return;
    }
    downscale_pair(previous_linear_, linear);
  }

  // Averages 2x2 blocks of two rows (libjxl's summation order) and pushes the result.
  LIGHTEN_MULTIVERSION_NO_FMA
  void downscale_pair(const float* const* const* top, const float* const* const* bottom) {
    const uint32_t out_width = next_->width_;
    float* const(*next)[3] = next_linear_[rows_out_++ % 2];
    for (int i = 0; i < 2; ++i) {
      for (int c = 0; c < 3; ++c) {
        const float* r0 = top[i][c];
        const float* r1 = bottom[i][c];
        float* out = next[i][c];
        uint32_t ox = 0;
        // Whole pairs eight outputs at a time (the same additions in the same order).
        for (; 2 * (ox + simd::kLanes) <= width_; ox += simd::kLanes) {
          const V8 a0 = simd::load(r0 + 2 * ox), a1 = simd::load(r0 + 2 * ox + simd::kLanes);
          const V8 b0 = simd::load(r1 + 2 * ox), b1 = simd::load(r1 + 2 * ox + simd::kLanes);
          const V8 even0 = __builtin_shufflevector(a0, a1, 0, 2, 4, 6, 8, 10, 12, 14);
          const V8 odd0 = __builtin_shufflevector(a0, a1, 1, 3, 5, 7, 9, 11, 13, 15);
          const V8 even1 = __builtin_shufflevector(b0, b1, 0, 2, 4, 6, 8, 10, 12, 14);
          const V8 odd1 = __builtin_shufflevector(b0, b1, 1, 3, 5, 7, 9, 11, 13, 15);
          simd::store(out + ox, (even0 + odd0 + even1 + odd1) * 0.25f);
        }
        for (; ox < out_width; ++ox) {
          const uint32_t x0 = 2 * ox, x1 = std::min(x0 + 1, width_ - 1);
          out[ox] = (r0[x0] + r0[x1] + r1[x0] + r1[x1]) * 0.25f;
        }
      }
    }
    next_->push_row(next[0], next[1]);
  }

  // Step n of the vertical recursion (libjxl's order: input rows n - N - 1 and n + N - 1);
  // from n = 0 on, it yields blurred row n, which is turned into maps and pooled.
  void vertical_step(int64_t n) {
    const int64_t top = n - kRadius - 1, bottom = n + kRadius - 1;
    const uint32_t tile_row = n >= 0 ? grid_.row_of(static_cast<uint32_t>(n), scale_) : 0;
    for (int c = 0; c < 3; ++c) {
      if (!need_ssim_[c] && !need_edge_[c]) continue;
      const int num_quantities = need_ssim_[c] ? 5 : 2;
      for (int q = 0; q < num_quantities; ++q) {
        const float* top_row = top >= 0 ? blurred_[c][q][top % kRing] : nullptr;
        const float* bottom_row = bottom < height_ ? blurred_[c][q][bottom % kRing] : nullptr;
        gaussian_vertical_step(rg_, top_row, bottom_row, state_[c][q],
                               n >= 0 ? vertical_[q] : nullptr, wp_);
      }
      if (n < 0) continue;
      const int slot = static_cast<int>(n % kRing);
      for (uint32_t tx = 0; tx < grid_.nx; ++tx) {
        const uint32_t x0 = grid_.begin(tx, scale_);
        const uint32_t x1 = grid_.end(tx, grid_.nx, width_, scale_);
        double* sums = sums_ + ((tile_row * grid_.nx + tx) * 3 + c) * kNumSums;
        pool_maps(c, xyb_[0][c][slot], xyb_[1][c][slot], x0, x1, sums);
      }
    }
  }

  // Computes the SSIM and edge maps of columns [x0, x1) of the current row and adds their sums
  // and sums of 4th powers to `sums`. AVX2 where the CPU has it, but deliberately not FMA:
  // contracting the variance terms (s11 - mu1 * mu1) changes their rounding, and the reference
  // computes them without.
  LIGHTEN_MULTIVERSION_NO_FMA
  void pool_maps(int c, const float* img1, const float* img2, uint32_t x0, uint32_t x1,
                 double* sums) const {
    const float* mu1 = vertical_[0];
    const float* mu2 = vertical_[1];
    const float* s11 = vertical_[2];
    const float* s22 = vertical_[3];
    const float* s12 = vertical_[4];
    V8 acc[kNumSums] = {};
    V8 lane;
    for (int i = 0; i < simd::kLanes; ++i) lane[i] = static_cast<float>(i);
    const bool ssim = need_ssim_[c], edge = need_edge_[c];
    for (uint32_t x = x0; x < x1; x += simd::kLanes) {
      // Lanes past x1 belong to the next tile or to the padding: leave them out.
      const V8 valid = lane < static_cast<float>(x1 - x) ? simd::splat(1.0f) : V8{};
      const V8 m1 = simd::load(mu1 + x), m2 = simd::load(mu2 + x);
      if (ssim) {
        const V8 m11 = m1 * m1, m22 = m2 * m2, m12 = m1 * m2;
        const V8 diff = m1 - m2;
        // SSIM without the luminance denominator ("no double gamma correction").
        const V8 num_m = 1.0f - diff * diff;
        const V8 num_s = 2.0f * (simd::load(s12 + x) - m12) + kC2;
        const V8 denom_s = (simd::load(s11 + x) - m11) + (simd::load(s22 + x) - m22) + kC2;
        const V8 d = simd::max(1.0f - num_m * num_s / denom_s, V8{}) * valid;
        const V8 d2 = d * d;
        acc[0] += d;
        acc[1] += d2 * d2;
      }
      if (edge) {
        const V8 d1 = (1.0f + simd::abs(simd::load(img2 + x) - m2)) /
                          (1.0f + simd::abs(simd::load(img1 + x) - m1)) -
                      1.0f;
        // > 0: edges in the distorted image where the original is smooth (ringing, blocking);
        // < 0: original edges smoothed away (blur).
        const V8 artifact = simd::max(d1, V8{}) * valid;
        const V8 detail = simd::max(-d1, V8{}) * valid;
        const V8 a2 = artifact * artifact, l2 = detail * detail;
        acc[2] += artifact;
        acc[3] += a2 * a2;
        acc[4] += detail;
        acc[5] += l2 * l2;
      }
    }
    for (int i = 0; i < kNumSums; ++i) sums[i] += simd::sum(acc[i]);
  }

  const int scale_;
  const uint32_t width_, height_;
  const size_t wp_, stride_;
  const TileGrid grid_;
  double* const sums_;  // [tile][channel][kNumSums]
  ScalePipeline* const next_;
  const RecursiveGaussian& rg_;
  bool need_ssim_[3] = {}, need_edge_[3] = {};
  uint32_t rows_in_ = 0;

  std::vector<float> storage_;
  float* xyb_[2][3][kRing] = {};
  float* products_[3][3] = {};        // per channel: 1 * 1, 2 * 2, 1 * 2
  float* blurred_[3][5][kRing] = {};  // image 1, image 2, 1 * 1, 2 * 2, 1 * 2
  float* state_[3][5][6] = {};        // of the vertical recursion
  float* vertical_[5] = {};
  uint32_t rows_out_ = 0;
  const float* const* previous_linear_[2] = {};  // the even row's, as pushed (see push_row)
  float* next_linear_[2][2][3] = {};             // [set][image][channel], sets alternate
};

// Gray or RGB; CMYK only read through a profile (the channel counts are checked against it).
void check_image(const ImageRgb8& image, const ProfileColour* colour, const char* what) {
  if (image.channels != 1 && image.channels != 3 && !(image.channels == 4 && colour)) {
    throw std::invalid_argument(std::string("ssimulacra2: ") + what +
                                " must have 1 or 3 channels, or 4 read through a CMYK profile");
  }
  if (image.samples.size() < static_cast<size_t>(image.width) * image.height * image.channels) {
    throw std::invalid_argument(std::string("ssimulacra2: ") + what + " has too few samples");
  }
}

// Row y of an 8-bit image as planar linear sRGB (gray replicated), read through `colour` when
// there is one.
LIGHTEN_MULTIVERSION
void to_linear_row(const ImageRgb8& image, uint32_t y, float* const* out,
                   const ProfileColour* colour) {
  const uint8_t* in = image.samples.data() + static_cast<size_t>(y) * image.width * image.channels;
  if (colour) {
    colour->to_linear(in, image.width, out[0], out[1], out[2]);
    return;
  }
  const float* table = srgb_to_linear_table();
  if (image.channels == 1) {
    for (uint32_t x = 0; x < image.width; ++x) out[0][x] = table[in[x]];
    std::copy(out[0], out[0] + image.width, out[1]);
    std::copy(out[0], out[0] + image.width, out[2]);
    return;
  }
  for (uint32_t x = 0; x < image.width; ++x) {
    out[0][x] = table[in[3 * x]];
    out[1][x] = table[in[3 * x + 1]];
    out[2][x] = table[in[3 * x + 2]];
  }
}

double fourth_root(double v) { return std::sqrt(std::sqrt(v)); }

}  // namespace

Ssimulacra2Result ssimulacra2(const ImageRgb8& reference, const ImageRgb8& distorted,
                              const Ssimulacra2Options& options) {
  if (reference.width != distorted.width || reference.height != distorted.height) {
    throw std::invalid_argument("ssimulacra2: images differ in size");
  }
  check_image(reference, options.reference_colour, "reference");
  check_image(distorted, options.distorted_colour, "distorted");
  if ((options.reference_colour && options.reference_colour->channels() != reference.channels) ||
      (options.distorted_colour && options.distorted_colour->channels() != distorted.channels))
    throw std::invalid_argument("ssimulacra2: a colour profile for other channels");
  const uint32_t width = reference.width, height = reference.height;

  // Scale s exists while scale s - 1 is at least 8x8 (libjxl checks before downscaling).
  uint32_t widths[kNumScales], heights[kNumScales];
  int num_scales = 0;
  for (uint32_t w = width, h = height; num_scales < kNumScales; ++num_scales) {
    if (w < 8 || h < 8) break;  // w x h: the previous scale (or scale 0)
    if (num_scales > 0) {
      w = (w + 1) / 2;
      h = (h + 1) / 2;
    }
    widths[num_scales] = w;
    heights[num_scales] = h;
  }
  Ssimulacra2Result result;
  result.scales = num_scales;
  if (num_scales == 0) return result;

  TileGrid grid;
  if (options.tile_size != 0) {
    grid.size = static_cast<uint32_t>(round_up(options.tile_size, 32));
    grid.nx = std::max<uint32_t>(1, width / grid.size);
    grid.ny = std::max<uint32_t>(1, height / grid.size);
  }
  const size_t num_tiles = static_cast<size_t>(grid.nx) * grid.ny;
  std::vector<double> sums(num_scales * num_tiles * 3 * kNumSums, 0.0);

  std::vector<std::unique_ptr<ScalePipeline>> pipelines(num_scales);
  for (int s = num_scales - 1; s >= 0; --s) {
    pipelines[s] = std::make_unique<ScalePipeline>(
        s, num_scales, options.negligible_weight, widths[s], heights[s], grid,
        sums.data() + s * num_tiles * 3 * kNumSums,
        s + 1 < num_scales ? pipelines[s + 1].get() : nullptr);
  }

  const size_t wp = round_up(width, simd::kLanes);
  // Two sets of rows, alternating (see push_row).
  std::vector<float> linear(2 * 2 * 3 * wp, 0.0f);
  float* rows[2][2][3];
  for (int set = 0; set < 2; ++set)
    for (int i = 0; i < 2; ++i)
      for (int c = 0; c < 3; ++c) rows[set][i][c] = linear.data() + ((set * 2 + i) * 3 + c) * wp;
  for (uint32_t y = 0; y < height; ++y) {
    float* const* rows1 = rows[y % 2][0];
    float* const* rows2 = rows[y % 2][1];
    to_linear_row(reference, y, rows1, options.reference_colour);
    to_linear_row(distorted, y, rows2, options.distorted_colour);
    pipelines[0]->push_row(rows1, rows2);
  }
  pipelines[0]->finish();

  // Norms over a set of tiles [tx0, tx1) x [ty0, ty1) at every scale, then the score.
  auto score_of = [&](uint32_t tx0, uint32_t tx1, uint32_t ty0, uint32_t ty1) {
    std::vector<Ssimulacra2Scale> scales(num_scales);
    for (int s = 0; s < num_scales; ++s) {
      const double* base = sums.data() + s * num_tiles * 3 * kNumSums;
      double total[3][kNumSums] = {};
      for (uint32_t ty = ty0; ty < ty1; ++ty) {
        for (uint32_t tx = tx0; tx < tx1; ++tx) {
          for (int c = 0; c < 3; ++c) {
            for (int k = 0; k < kNumSums; ++k) {
              total[c][k] += base[((ty * grid.nx + tx) * 3 + c) * kNumSums + k];
            }
          }
        }
      }
      uint32_t w = widths[s], h = heights[s];
      if (grid.size != 0) {
        w = grid.end(tx1 - 1, grid.nx, widths[s], s) - grid.begin(tx0, s);
        h = grid.end(ty1 - 1, grid.ny, heights[s], s) - grid.begin(ty0, s);
      }
      const double inv = 1.0 / (static_cast<double>(w) * h);
      for (int c = 0; c < 3; ++c) {
        scales[s].ssim[c * 2] = total[c][0] * inv;
        scales[s].ssim[c * 2 + 1] = fourth_root(total[c][1] * inv);
        scales[s].edge[c * 4] = total[c][2] * inv;
        scales[s].edge[c * 4 + 1] = fourth_root(total[c][3] * inv);
        scales[s].edge[c * 4 + 2] = total[c][4] * inv;
        scales[s].edge[c * 4 + 3] = fourth_root(total[c][5] * inv);
      }
    }
    return ssimulacra2_score(scales);
  };

  result.score = score_of(0, grid.nx, 0, grid.ny);
  result.worst_tile_score = result.score;
  if (num_tiles > 1) {
    result.worst_tile_score = std::numeric_limits<double>::infinity();
    for (uint32_t ty = 0; ty < grid.ny; ++ty) {
      for (uint32_t tx = 0; tx < grid.nx; ++tx) {
        const double tile_score = score_of(tx, tx + 1, ty, ty + 1);
        if (tile_score < result.worst_tile_score) {
          result.worst_tile_score = tile_score;
          result.worst_tile_x = tx * grid.size;
          result.worst_tile_y = ty * grid.size;
        }
      }
    }
  }
  return result;
}

}  // namespace lighten
