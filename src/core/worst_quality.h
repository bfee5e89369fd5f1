// A container is as good as its worst picture: its figures fold in each item's verdict.
#pragma once

#include <algorithm>

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

}  // namespace lighten
