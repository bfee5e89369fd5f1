// A container is as good as its worst picture: its figures fold in each item's verdict.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "lighten/outcome.h"

namespace lighten {

// Folds `item` into `into`: pixels identical only while every item's are, the lowest
// SSIMULACRA2 and the highest butteraugli distance.
inline void fold_worst(QualityFigures& into, const QualityFigures& item) {
  into.pixels_identical = into.pixels_identical && item.pixels_identical;
  if (item.ssimulacra2)
    into.ssimulacra2 = std::min(into.ssimulacra2.value_or(*item.ssimulacra2), *item.ssimulacra2);
  if (item.butteraugli)
    into.butteraugli = std::max(into.butteraugli.value_or(*item.butteraugli), *item.butteraugli);
}

// How a document's or a video's detail gives its worst score (the engine appends it), and how
// reports find it again in a journal's detail.
inline constexpr std::string_view kWorstScoreLabel = "worst SSIMULACRA2 ";

inline std::string worst_score_text(double score) {
  char number[32];
  std::snprintf(number, sizeof number, "%.2f", score);
  return std::string(kWorstScoreLabel) + number;
}

// The finite number that `text` spells from `at` on, if it spells one there.
inline std::optional<double> number_at(std::string_view text, size_t at) {
  if (at > text.size()) return std::nullopt;
  double value = 0;
  const char* first = text.data() + at;
  const auto [end, error] = std::from_chars(first, text.data() + text.size(), value);
  if (error != std::errc() || end == first || !std::isfinite(value)) return std::nullopt;
  return value;
}

inline std::optional<double> worst_score_in(std::string_view detail) {
  const size_t at = detail.rfind(kWorstScoreLabel);
  if (at == std::string_view::npos) return std::nullopt;
  return number_at(detail, at + kWorstScoreLabel.size());
}

}  // namespace lighten
