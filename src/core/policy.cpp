// Policy text forms shared by the options table and reports.
#include "core/policy_names.h"

#include <cstdio>
#include <cstdlib>
#include <limits>

namespace lighten {

const std::array<std::string_view, 4> kModeNames{"lossless", "visually-lossless", "high",
                                                 "compact"};
const std::array<std::string_view, 3> kMetadataNames{"keep", "safe", "strip"};
const std::array<std::string_view, 4> kScanNames{"keep", "baseline", "progressive", "smallest"};
const std::array<std::string_view, 2> kRestartNames{"keep", "drop"};
const std::array<std::string_view, 2> kSubsamplingNames{"keep", "420"};
const std::array<std::string_view, 2> kVerifyNames{"coefficients", "pixels"};
const std::array<std::string_view, 2> kPlainZipNames{"leave", "optimize"};
const std::array<std::string_view, 2> kPdfVersionNames{"keep", "raise"};
const std::array<std::string_view, 2> kVideoCodecNames{"keep", "h264"};
const std::array<std::string_view, 2> kFlagNames{"no", "yes"};

double quality_floor(const Policy& policy) {
  // The one table of floors (DESIGN.md "Quality words").
  static constexpr double kFloors[] = {std::numeric_limits<double>::quiet_NaN(), 85.0, 80.0, 70.0};
  if (policy.mode == Mode::kLossless) return kFloors[0];
  if (policy.target_score > 0) return policy.target_score;
  return kFloors[static_cast<size_t>(policy.mode)];
}

std::string floor_text(double floor) {
  char text[64];
  for (int decimals = 1; decimals <= 4; ++decimals) {
    std::snprintf(text, sizeof text, "%.*f", decimals, floor);
    if (std::strtod(text, nullptr) == floor) break;
  }
  return text;
}

std::string_view mode_name(Mode mode) { return kModeNames.at(static_cast<size_t>(mode)); }

}  // namespace lighten
