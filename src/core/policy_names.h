// The words users type for each policy enum, in enum order.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "lighten/policy.h"

namespace lighten {

extern const std::array<std::string_view, 4> kModeNames;
extern const std::array<std::string_view, 3> kMetadataNames;
extern const std::array<std::string_view, 4> kScanNames;
extern const std::array<std::string_view, 2> kRestartNames;
extern const std::array<std::string_view, 2> kSubsamplingNames;
extern const std::array<std::string_view, 2> kVerifyNames;
extern const std::array<std::string_view, 2> kPlainZipNames;
extern const std::array<std::string_view, 2> kPdfVersionNames;
extern const std::array<std::string_view, 2> kVideoCodecNames;
extern const std::array<std::string_view, 2> kFlagNames;  // "no", "yes"

std::string_view mode_name(Mode mode);

// A quality floor as details print it: one decimal, or as many (up to four) as it takes to say
// it exactly (`--target-score 99.99` is not "100.0").
std::string floor_text(double floor);

}  // namespace lighten
