#include "formats/jpeg/subsampling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/context.h"

namespace lighten::jpeg {

bool chroma_finer_than_420(const CoefficientImage& image) {
  const auto& info = const_cast<CoefficientImage&>(image).info();
  if (info.num_components != 3 || info.jpeg_color_space != JCS_YCbCr) return false;
  const jpeg_component_info* c = info.comp_info;
  if (c[1].h_samp_factor != c[2].h_samp_factor || c[1].v_samp_factor != c[2].v_samp_factor)
    return false;
  const int h = c[0].h_samp_factor, v = c[0].v_samp_factor;
  const int ch = c[1].h_samp_factor, cv = c[1].v_samp_factor;
  if (h < ch || v < cv || h > 2 * ch || v > 2 * cv || h % ch || v % cv) return false;
  return !(h == 2 * ch && v == 2 * cv);
}

bool adobe_rgb(const CoefficientImage& image) {
  const auto& info = const_cast<CoefficientImage&>(image).info();
  return info.num_components == 3 && info.jpeg_color_space == JCS_RGB && info.saw_Adobe_marker &&
         info.Adobe_transform == 0 && !info.saw_JFIF_marker;
}

ReencodingTables reencoding_tables(const CoefficientImage& source) {
  const auto& info = const_cast<CoefficientImage&>(source).info();
  ReencodingTables t;
  const bool rgb = info.jpeg_color_space == JCS_RGB;
  for (int k = 0; k < 64; ++k) {
    // A zero entry (outside the standard, read as one step by the requantiser and by libjpeg's
    // table writer) counts as one.
    const auto entry = [&](int ci) {
      return std::max<UINT16>(info.comp_info[ci].quant_table->quantval[k], 1);
    };
    t.luma[size_t(k)] = rgb ? std::min({entry(0), entry(1), entry(2)}) : entry(0);
    // Cb and Cr share one table in the re-encoding: never finer than either's own.
    t.chroma[size_t(k)] = rgb ? t.luma[size_t(k)] : std::max(entry(1), entry(2));
  }
  return t;
}

namespace {

// Component identifiers of the re-encoding: YCbCr keeps its own, RGB planes become 1, 2, 3.
std::array<int, 3> reencoding_ids(const jpeg_decompress_struct& info) {
  if (info.jpeg_color_space == JCS_RGB) return {1, 2, 3};
  return {info.comp_info[0].component_id, info.comp_info[1].component_id,
          info.comp_info[2].component_id};
}

// The source's decode when a 4:2:0 re-encoding of it can be made, else nullptr.
const ImageRgb8* reencodable_pixels(CoefficientImage& source, ByteView input,
                                    std::optional<ImageRgb8>& reference) {
  if (!reencodable_as_420(source)) return nullptr;
  // Three components: read alike whatever their profile.
  if (!reference) reference = to_metric_image(decode_pixels(input), nullptr);
  if (!reference || reference->channels != 3) return nullptr;
  return &*reference;
}

}  // namespace

std::optional<double> reencoding_score(CoefficientImage& source, ByteView input,
                                       std::optional<ImageRgb8>& reference,
                                       const ProfileColour* colour) {
  const ImageRgb8* pixels = reencodable_pixels(source, input, reference);
  if (!pixels) return std::nullopt;
  const ReencodingTables tables = reencoding_tables(source);
  const std::array<int, 3> ids = reencoding_ids(source.info());
  return estimated_score(
      *pixels, 2 * DCTSIZE,
      [&](const ImageRgb8& rows) {
        return encode_pixels_420(rows, tables.luma, tables.chroma, ids);
      },
      JCS_YCbCr, colour);
}

std::optional<SubsampledSource> subsampled_source(CoefficientImage& source, ByteView input,
                                                  const Context* context,
                                                  std::optional<ImageRgb8>& reference,
                                                  ReencodedChroma chroma) {
  const ImageRgb8* pixels = reencodable_pixels(source, input, reference);
  if (!pixels) return std::nullopt;
  const ReencodingTables bound = reencoding_tables(source);
  ReencodingTables tables = bound;
  if (chroma == ReencodedChroma::kHalfSteps)
    for (uint16_t& step : tables.chroma) step = std::max<uint16_t>(1, step / 2);
  SubsampledSource out;
  out.from_rgb = source.info().jpeg_color_space == JCS_RGB;
  out.bytes = encode_pixels_420(*pixels, tables.luma, tables.chroma, reencoding_ids(source.info()));
  out.image = std::make_unique<CoefficientImage>(out.bytes, context, JCS_YCbCr);
  if (tables.chroma != bound.chroma) {
    out.finest_tables.assign(NUM_QUANT_TBLS, QuantTable{});
    const auto& written = out.image->info();
    for (int ci = 0; ci < written.num_components; ++ci)
      out.finest_tables[size_t(written.comp_info[ci].quant_tbl_no)] =
          ci ? bound.chroma : bound.luma;
  }
  return out;
}

SubsamplingPlan plan_subsampling(double score, double floor) {
  if (score >= floor + kSubsampledOnlyHeadroom) return SubsamplingPlan::kSubsampledOnly;
  if (score >= floor + kSubsampledHeadroom) return SubsamplingPlan::kBoth;
  return SubsamplingPlan::kFullOnly;
}

SourceSearches search_sources(CoefficientImage& image, SubsampledSource* source_420,
                              SubsamplingPlan plan, ByteView input, const Layout& layout,
                              const Policy& policy, const Context* context,
                              std::optional<ImageRgb8>& reference, const ProfileColour* colour) {
  SourceSearches out;
  if (policy.mode == Mode::kLossless) return out;
  if (!source_420) plan = SubsamplingPlan::kFullOnly;
  auto search_own = [&] {
    return std::make_unique<FloorSearch>(image, input, layout, policy, context, reference, colour);
  };
  auto search_420 = [&] {
    return std::make_unique<FloorSearch>(*source_420->image, input, layout, policy, context,
                                         reference, colour, true, source_420->finest_tables);
  };
  std::unique_ptr<FloorSearch> own, subsampled;
  if (plan != SubsamplingPlan::kFullOnly) subsampled = search_420();
  if (plan != SubsamplingPlan::kSubsampledOnly) own = search_own();
  bool own_dropped = false, subsampled_dropped = false;
  if (own && subsampled) {
    const std::optional<FloorSearch::SampleCost> a = subsampled->first_sample_cost();
    const std::optional<FloorSearch::SampleCost> b = own->first_sample_cost();
    // A source whose row sample met the floors nowhere (its bytes then the finest level's) costs
    // more than one whose sample met them, whatever the bytes.
    auto decisively_cheaper = [](const FloorSearch::SampleCost& x,
                                 const FloorSearch::SampleCost& y) {
      if (x.met_floors != y.met_floors) return x.met_floors;
      return double(x.bytes) < double(y.bytes) * (1 - kDecisiveSampleMargin);
    };
    // Why the 4:2:0 sample `x` won or lost against the input's sampling's `y`.
    auto why = [](const FloorSearch::SampleCost& x, const FloorSearch::SampleCost& y) {
      if (x.met_floors != y.met_floors)
        return fmt::format("{} met nothing on the row sample",
                           x.met_floors ? "the input's sampling" : "it");
      return fmt::format("its row sample {:.1f} % {}",
                         100.0 * std::abs(1 - double(x.bytes) / double(y.bytes)),
                         x.bytes < y.bytes ? "smaller" : "larger");
    };
    if (a && b && decisively_cheaper(*a, *b)) {
      own.reset();
      own_dropped = true;
      out.race = fmt::format("4:2:0 searched alone ({})", why(*a, *b));
    } else if (a && b && decisively_cheaper(*b, *a)) {
      subsampled.reset();
      subsampled_dropped = true;
      out.race = fmt::format("4:2:0 not searched further ({})", why(*a, *b));
    }
  }
  if (subsampled) {
    out.subsampled = subsampled->run();
    subsampled.reset();
  }
  // A source searched alone that meets nothing leaves the other its chance, as under kBoth.
  if (!out.subsampled.requantized && (own_dropped || plan == SubsamplingPlan::kSubsampledOnly)) {
    own = search_own();
    if (own_dropped) out.race += ", met nothing: the input's sampling searched after all";
  }
  if (own) out.own = own->run();
  if (!out.own.requantized && subsampled_dropped) {
    out.subsampled = search_420()->run();
    out.race += ", the input's sampling met nothing: 4:2:0 searched after all";
  }
  return out;
}

}  // namespace lighten::jpeg
