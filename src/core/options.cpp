// The options table: one row per policy option, with its parser and formatter beside it.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <functional>
#include <string>

#include "core/policy_names.h"
#include "lighten/options.h"

namespace lighten {
namespace {

struct OptionRow {
  OptionSpec spec;
  std::function<void(Policy&, const OptionSpec&, std::string_view)> set;
  std::function<std::string(const Policy&)> get;
};

[[noreturn]] void refuse(const OptionSpec& spec, std::string_view value, std::string_view why) {
  throw OptionError("--" + std::string(spec.name) + " " + std::string(value) + ": " +
                    std::string(why));
}

template <size_t N>
size_t parse_choice(const OptionSpec& spec, std::string_view value,
                    const std::array<std::string_view, N>& names) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == value) return i;
  std::string allowed;
  for (auto n : names) allowed += (allowed.empty() ? "" : ", ") + std::string(n);
  refuse(spec, value, "expected one of " + allowed);
}

double parse_number(const OptionSpec& spec, std::string_view value) {
  double v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v))
    refuse(spec, value, "expected a number");
  if (v < spec.min || v > spec.max)
    refuse(spec, value, fmt::format("must be between {:g} and {:g}", spec.min, spec.max));
  return v;
}

int64_t parse_integer(const OptionSpec& spec, std::string_view value) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size())
    refuse(spec, value, "expected a whole number");
  if (double(v) < spec.min || double(v) > spec.max)
    refuse(spec, value,
           "must be between " + std::to_string(int64_t(spec.min)) + " and " +
               std::to_string(int64_t(spec.max)));
  return v;
}

// A size as the flags take it: the largest suffix that divides it (1G, 1536k, 100).
std::string size_text(uint64_t bytes) {
  constexpr std::pair<char, int> kUnits[] = {{'T', 40}, {'G', 30}, {'M', 20}, {'k', 10}};
  for (const auto& [suffix, shift] : kUnits)
    if (bytes >= (1ull << shift) && bytes % (1ull << shift) == 0)
      return std::to_string(bytes >> shift) + suffix;
  return std::to_string(bytes);
}

// Sizes accept a suffix: 512k, 64M, 4G (powers of 1024).
uint64_t parse_bytes(const OptionSpec& spec, std::string_view value) {
  uint64_t unit = 1;
  std::string_view digits = value;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'k':
      case 'K':
        unit = 1ull << 10;
        break;
      case 'm':
      case 'M':
        unit = 1ull << 20;
        break;
      case 'g':
      case 'G':
        unit = 1ull << 30;
        break;
      case 't':
      case 'T':
        unit = 1ull << 40;
        break;
      default:
        break;
    }
    if (unit != 1) digits.remove_suffix(1);
  }
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty())
    refuse(spec, value, "expected a size such as 65536, 512k, 64M or 4G");
  const double bytes = double(v) * double(unit);
  if (bytes < spec.min || bytes > spec.max)
    refuse(spec, value,
           "must be between " + size_text(uint64_t(spec.min)) + " and " +
               size_text(uint64_t(spec.max)));
  return v * unit;
}

std::string format_number(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

const std::vector<OptionRow>& rows() {
  static const std::vector<OptionRow> table = [] {
    std::vector<OptionRow> t;
    t.push_back(
        {{"mode",
          OptionType::kChoice,
          "lossless",
          {kModeNames.begin(), kModeNames.end()},
          0,
          0,
          "Quality promise: lossless keeps every decoded pixel; visually-lossless (SSIMULACRA2 "
          ">= 85), high (>= 80) and compact (>= 70) are perceptual floors per file"},
         [](Policy& p, const OptionSpec& spec, std::string_view v) {
           p.mode = static_cast<Mode>(parse_choice(spec, v, kModeNames));
         },
         [](const Policy& p) { return std::string(mode_name(p.mode)); }});
    t.push_back({{"target-score",
                  OptionType::kNumber,
                  "0",
                  {},
                  0,
                  100,
                  "Perceptual modes: the SSIMULACRA2 floor (0 to 100) every output meets instead "
                  "of the mode's own 85, 80 or 70 (0 = the mode's floor; on the metric's own "
                  "scale 90 is very high quality, 70 high, 50 medium, 30 low); refused with "
                  "--mode lossless"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.target_score = parse_number(spec, v);
                 },
                 [](const Policy& p) { return format_number(p.target_score); }});
    static constexpr std::array<std::string_view, 2> kMarkerNames{"write", "omit"};
    t.push_back({{"quality-marker",
                  OptionType::kChoice,
                  "write",
                  {kMarkerNames.begin(), kMarkerNames.end()},
                  0,
                  0,
                  "Perceptual JPEG outputs carry a 37-byte APP15 segment so that re-runs stay "
                  "lossless (no generation loss); omit writes none: re-runs then trust the "
                  "tables alone, and a file whose requantised tables would not tell is "
                  "optimised losslessly instead; re-encoded video carries a marker (an 'lgtn' "
                  "user data box in MP4, MOV and 3GP, the software tag in AVI), and with omit is "
                  "not re-encoded"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.quality_marker =
                       static_cast<QualityMarker>(parse_choice(spec, v, kMarkerNames));
                 },
                 [](const Policy& p) {
                   return std::string(p.quality_marker == QualityMarker::kWrite ? "write" : "omit");
                 }});
    t.push_back({{"metadata",
                  OptionType::kChoice,
                  "keep",
                  {kMetadataNames.begin(), kMetadataNames.end()},
                  0,
                  0,
                  "JPEG and PNG metadata: keep every segment as it is (an EXIF thumbnail is "
                  "optimised in place like any JPEG); safe drops comments and editor "
                  "records (COM, APP12, APP13; tIME and 'Comment' text); strip keeps only what "
                  "changes display (ICC, orientation, an EXIF colour space no profile "
                  "overrides, colour transform, gain-map metadata; PNG colour chunks, tRNS, "
                  "bKGD, pHYs) and warns of what else is lost"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.metadata = static_cast<MetadataPolicy>(parse_choice(spec, v, kMetadataNames));
                 },
                 [](const Policy& p) { return std::string(kMetadataNames[size_t(p.metadata)]); }});
    t.push_back({{"jpeg-scans",
                  OptionType::kChoice,
                  "keep",
                  {kScanNames.begin(), kScanNames.end()},
                  0,
                  0,
                  "JPEG coding: keep the input's baseline/progressive mode (baseline suits GPU "
                  "decoders and decodes faster), baseline or progressive (where the output is "
                  "smaller than the input: a file is never made larger), or smallest"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.jpeg_scans = static_cast<ScanMode>(parse_choice(spec, v, kScanNames));
                 },
                 [](const Policy& p) { return std::string(kScanNames[size_t(p.jpeg_scans)]); }});
    t.push_back(
        {{"jpeg-restarts",
          OptionType::kChoice,
          "keep",
          {kRestartNames.begin(), kRestartNames.end()},
          0,
          0,
          "JPEG restart markers: keep the input's interval, or drop them (smaller; a "
          "damaged file then loses everything after the damage)"},
         [](Policy& p, const OptionSpec& spec, std::string_view v) {
           p.jpeg_restarts = static_cast<RestartPolicy>(parse_choice(spec, v, kRestartNames));
         },
         [](const Policy& p) { return std::string(kRestartNames[size_t(p.jpeg_restarts)]); }});
    t.push_back({{"jpeg-subsampling",
                  OptionType::kChoice,
                  "420",
                  {kSubsamplingNames.begin(), kSubsamplingNames.end()},
                  0,
                  0,
                  "Perceptual JPEG: a photo whose chroma is finer than 4:2:0 (4:4:4, 4:2:2, "
                  "4:4:0), or one coded as RGB with an Adobe segment, may also be re-encoded from "
                  "its pixels as YCbCr 4:2:0 under the same floor, the smaller output kept (420), "
                  "or keep the input's sampling and colour coding"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.jpeg_subsampling =
                       static_cast<SubsamplingPolicy>(parse_choice(spec, v, kSubsamplingNames));
                 },
                 [](const Policy& p) {
                   return std::string(kSubsamplingNames[size_t(p.jpeg_subsampling)]);
                 }});
    t.push_back({{"verify",
                  OptionType::kChoice,
                  "coefficients",
                  {kVerifyNames.begin(), kVerifyNames.end()},
                  0,
                  0,
                  "Check of every output before it is kept: re-read and compare all DCT "
                  "coefficients (implies identical pixels), or also decode and compare pixels"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.verify = static_cast<VerifyLevel>(parse_choice(spec, v, kVerifyNames));
                 },
                 [](const Policy& p) { return std::string(kVerifyNames[size_t(p.verify)]); }});
    t.push_back({{"plain-zip",
                  OptionType::kChoice,
                  "leave",
                  {kPlainZipNames.begin(), kPlainZipNames.end()},
                  0,
                  0,
                  "Plain ZIP and JAR archives: leave them as they are (some readers check "
                  "archive hashes), or optimise their entries like a document's"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.plain_zip = static_cast<PlainZipPolicy>(parse_choice(spec, v, kPlainZipNames));
                 },
                 [](const Policy& p) { return std::string(kPlainZipNames[size_t(p.plain_zip)]); }});
    t.push_back(
        {{"pdf-version",
          OptionType::kChoice,
          "keep",
          {kPdfVersionNames.begin(), kPdfVersionNames.end()},
          0,
          0,
          "PDFs below 1.5 keep their version (no object streams), or raise them to 1.5 "
          "so object and cross-reference streams can be written (never PDF/A-1 or PDF/X)"},
         [](Policy& p, const OptionSpec& spec, std::string_view v) {
           p.pdf_version = static_cast<PdfVersionPolicy>(parse_choice(spec, v, kPdfVersionNames));
         },
         [](const Policy& p) { return std::string(kPdfVersionNames[size_t(p.pdf_version)]); }});
    t.push_back({{"repair",
                  OptionType::kFlag,
                  "no",
                  {kFlagNames.begin(), kFlagNames.end()},
                  0,
                  0,
                  "Also rewrite PDFs whose cross-reference table had to be reconstructed (left "
                  "alone otherwise: the repaired structure is a guess)"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.repair = parse_choice(spec, v, kFlagNames) == 1;
                 },
                 [](const Policy& p) { return std::string(kFlagNames[p.repair]); }});
    t.push_back({{"png-reduce",
                  OptionType::kFlag,
                  "no",
                  {kFlagNames.begin(), kFlagNames.end()},
                  0,
                  0,
                  "PNG: allow lossless colour-type and bit-depth reductions (same pixels; a "
                  "loader may then see fewer channels, e.g. grey instead of RGB)"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.png_reduce = parse_choice(spec, v, kFlagNames) == 1;
                 },
                 [](const Policy& p) { return std::string(kFlagNames[p.png_reduce]); }});
    t.push_back(
        {{"video-codec",
          OptionType::kChoice,
          "keep",
          {kVideoCodecNames.begin(), kVideoCodecNames.end()},
          0,
          0,
          "Perceptual video: re-encode with the input's own codec, or let older codecs "
          "(MPEG-4 part 2, MS-MPEG4) become H.264 in the same container"},
         [](Policy& p, const OptionSpec& spec, std::string_view v) {
           p.video_codec = static_cast<VideoCodecPolicy>(parse_choice(spec, v, kVideoCodecNames));
         },
         [](const Policy& p) { return std::string(kVideoCodecNames[size_t(p.video_codec)]); }});
    t.push_back({{"effort",
                  OptionType::kInteger,
                  "5",
                  {},
                  1,
                  9,
                  "1 (fastest) to 9 (smallest): how many trials each format may spend"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.effort = int(parse_integer(spec, v));
                 },
                 [](const Policy& p) { return std::to_string(p.effort); }});
    t.push_back({{"min-gain-bytes",
                  OptionType::kBytes,
                  "16",
                  {},
                  0,
                  double(1ull << 40),
                  "Keep an output only if it saves at least this many bytes"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.min_gain_bytes = parse_bytes(spec, v);
                 },
                 [](const Policy& p) { return std::to_string(p.min_gain_bytes); }});
    t.push_back({{"min-gain-percent",
                  OptionType::kNumber,
                  "0.1",
                  {},
                  0,
                  100,
                  "Keep an output only if it saves at least this share of the input"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.min_gain_ratio = parse_number(spec, v) / 100.0;
                 },
                 [](const Policy& p) { return format_number(p.min_gain_ratio * 100.0); }});
    t.push_back({{"max-input-size",
                  OptionType::kBytes,
                  "4G",
                  {},
                  1,
                  double(1ull << 50),
                  "Leave larger files alone (reason limit-exceeded)"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.limits.max_input_bytes = parse_bytes(spec, v);
                 },
                 [](const Policy& p) { return std::to_string(p.limits.max_input_bytes); }});
    t.push_back({{"max-pixels",
                  OptionType::kInteger,
                  "500000000",
                  {},
                  1,
                  1e12,
                  "Leave images with more pixels alone (decoding memory grows with pixels)"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.limits.max_pixels = uint64_t(parse_integer(spec, v));
                 },
                 [](const Policy& p) { return std::to_string(p.limits.max_pixels); }});
    t.push_back({{"max-depth",
                  OptionType::kInteger,
                  "4",
                  {},
                  0,
                  16,
                  "How deep containers may nest (a JPEG in a PPTX in a ZIP is depth 2)"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.limits.max_depth = uint32_t(parse_integer(spec, v));
                 },
                 [](const Policy& p) { return std::to_string(p.limits.max_depth); }});
    t.push_back({{"time-budget",
                  OptionType::kNumber,
                  "300",
                  {},
                  0.1,
                  86400,
                  "Seconds one file may take; past it the file is left alone"},
                 [](Policy& p, const OptionSpec& spec, std::string_view v) {
                   p.limits.time_budget_s = parse_number(spec, v);
                 },
                 [](const Policy& p) { return format_number(p.limits.time_budget_s); }});
    return t;
  }();
  return table;
}

const OptionRow& find_row(std::string_view name) {
  for (const auto& r : rows())
    if (r.spec.name == name) return r;
  throw OptionError("unknown option --" + std::string(name));
}

}  // namespace

std::span<const OptionSpec> policy_options() {
  static const std::vector<OptionSpec> specs = [] {
    std::vector<OptionSpec> s;
    for (const auto& r : rows()) s.push_back(r.spec);
    return s;
  }();
  return specs;
}

void set_policy_option(Policy& policy, std::string_view name, std::string_view value) {
  const OptionRow& row = find_row(name);
  row.set(policy, row.spec, value);
}

std::string get_policy_option(const Policy& policy, std::string_view name) {
  return find_row(name).get(policy);
}

uint64_t parse_size(std::string_view flag, std::string_view text) {
  const OptionSpec size{flag, OptionType::kBytes, "", {}, 0, double(1ull << 60), ""};
  return parse_bytes(size, text);
}

std::vector<std::pair<std::string, std::string>> describe_policy(const Policy& policy) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& r : rows()) out.emplace_back(std::string(r.spec.name), r.get(policy));
  return out;
}

}  // namespace lighten
