#include "quality/ssimulacra2_simple.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "quality/gaussian_blur.h"
#include "quality/ssimulacra2.h"
#include "quality/xyb.h"

namespace lighten::test {
namespace {

// A float plane whose rows are padded to a multiple of 8 (the row kernels' granularity).
struct Plane {
  size_t width = 0, height = 0, stride = 0;
  std::vector<float> data;
  Plane(size_t w, size_t h) : width(w), height(h), stride((w + 7) / 8 * 8), data(stride * h) {}
  float* row(size_t y) { return data.data() + y * stride; }
  const float* row(size_t y) const { return data.data() + y * stride; }
};
using Image3 = std::array<Plane, 3>;

Image3 make_image(size_t w, size_t h) { return {Plane(w, h), Plane(w, h), Plane(w, h)}; }

Image3 to_linear(const ImageRgb8& image) {
  Image3 out = make_image(image.width, image.height);
  const float* table = srgb_to_linear_table();
  for (size_t y = 0; y < image.height; ++y) {
    for (size_t x = 0; x < image.width; ++x) {
      for (int c = 0; c < 3; ++c) {
        const size_t channel = image.channels == 1 ? 0 : c;
        out[c].row(y)[x] = table[image.samples[(y * image.width + x) * image.channels + channel]];
      }
    }
  }
  return out;
}

Image3 downsample(const Image3& in) {
  const size_t w = (in[0].width + 1) / 2, h = (in[0].height + 1) / 2;
  Image3 out = make_image(w, h);
  for (int c = 0; c < 3; ++c) {
    for (size_t oy = 0; oy < h; ++oy) {
      for (size_t ox = 0; ox < w; ++ox) {
        float sum = 0.0f;
        for (size_t iy = 0; iy < 2; ++iy) {
          for (size_t ix = 0; ix < 2; ++ix) {
            const size_t x = std::min(2 * ox + ix, in[c].width - 1);
            const size_t y = std::min(2 * oy + iy, in[c].height - 1);
            sum += in[c].row(y)[x];
          }
        }
        out[c].row(oy)[ox] = sum * 0.25f;
      }
    }
  }
  return out;
}

Image3 to_xyb(const Image3& linear) {
  Image3 out = make_image(linear[0].width, linear[0].height);
  for (size_t y = 0; y < linear[0].height; ++y) {
    linear_to_positive_xyb(linear[0].row(y), linear[1].row(y), linear[2].row(y), out[0].row(y),
                           out[1].row(y), out[2].row(y), linear[0].width);
  }
  return out;
}

Plane blur(const Plane& in) {
  const RecursiveGaussian& rg = ssimulacra2_gaussian();
  Plane horizontal(in.width, in.height), out(in.width, in.height);
  for (size_t y = 0; y < in.height; ++y)
    gaussian_blur_row(rg, in.row(y), horizontal.row(y), in.width);
  std::vector<float> state(6 * in.stride, 0.0f);
  float* rows[6];
  for (int i = 0; i < 6; ++i) rows[i] = state.data() + i * in.stride;
  const ptrdiff_t h = static_cast<ptrdiff_t>(in.height), radius = rg.radius;
  for (ptrdiff_t n = 1 - radius; n < h; ++n) {
    const ptrdiff_t top = n - radius - 1, bottom = n + radius - 1;
    gaussian_vertical_step(rg, top >= 0 ? horizontal.row(top) : nullptr,
                           bottom < h ? horizontal.row(bottom) : nullptr, rows,
                           n >= 0 ? out.row(n) : nullptr, in.stride);
  }
  return out;
}

Plane multiply(const Plane& a, const Plane& b) {
  Plane out(a.width, a.height);
  for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = a.data[i] * b.data[i];
  return out;
}

double fourth_root(double v) { return std::sqrt(std::sqrt(v)); }

}  // namespace

double ssimulacra2_whole_image(const ImageRgb8& reference, const ImageRgb8& distorted) {
  Image3 linear1 = to_linear(reference), linear2 = to_linear(distorted);
  std::vector<Ssimulacra2Scale> scales;
  for (int scale = 0; scale < 6; ++scale) {
    if (linear1[0].width < 8 || linear1[0].height < 8) break;
    if (scale > 0) {
      linear1 = downsample(linear1);
      linear2 = downsample(linear2);
    }
    const Image3 img1 = to_xyb(linear1), img2 = to_xyb(linear2);
    const size_t w = img1[0].width, h = img1[0].height;
    const double inv = 1.0 / (static_cast<double>(w) * h);
    Ssimulacra2Scale s;
    for (int c = 0; c < 3; ++c) {
      const Plane mu1 = blur(img1[c]), mu2 = blur(img2[c]);
      const Plane s11 = blur(multiply(img1[c], img1[c]));
      const Plane s22 = blur(multiply(img2[c], img2[c]));
      const Plane s12 = blur(multiply(img1[c], img2[c]));
      double sums[6] = {};
      for (size_t y = 0; y < h; ++y) {
        for (size_t x = 0; x < w; ++x) {
          const float m1 = mu1.row(y)[x], m2 = mu2.row(y)[x];
          const float num_m = 1.0f - (m1 - m2) * (m1 - m2);
          const float num_s = 2 * (s12.row(y)[x] - m1 * m2) + 0.0009f;
          const float denom_s = (s11.row(y)[x] - m1 * m1) + (s22.row(y)[x] - m2 * m2) + 0.0009f;
          const double d = std::max(1.0 - (num_m * num_s / denom_s), 0.0);
          sums[0] += d;
          sums[1] += d * d * d * d;
          const double d1 =
              (1.0 + std::abs(img2[c].row(y)[x] - m2)) / (1.0 + std::abs(img1[c].row(y)[x] - m1)) -
              1.0;
          const double artifact = std::max(d1, 0.0), detail = std::max(-d1, 0.0);
          sums[2] += artifact;
          sums[3] += artifact * artifact * artifact * artifact;
          sums[4] += detail;
          sums[5] += detail * detail * detail * detail;
        }
      }
      s.ssim[c * 2] = sums[0] * inv;
      s.ssim[c * 2 + 1] = fourth_root(sums[1] * inv);
      s.edge[c * 4] = sums[2] * inv;
      s.edge[c * 4 + 1] = fourth_root(sums[3] * inv);
      s.edge[c * 4 + 2] = sums[4] * inv;
      s.edge[c * 4 + 3] = fourth_root(sums[5] * inv);
    }
    scales.push_back(s);
  }
  return ssimulacra2_score(scales);
}

}  // namespace lighten::test
