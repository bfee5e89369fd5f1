// Policy text forms shared by the options table and reports.
#include "core/policy_names.h"

namespace lighten {

const std::array<std::string_view, 4> kModeNames{"lossless", "visually-lossless", "high",
                                                 "compact"};
const std::array<std::string_view, 3> kMetadataNames{"keep", "safe", "strip"};
const std::array<std::string_view, 4> kScanNames{"keep", "baseline", "progressive", "smallest"};
const std::array<std::string_view, 2> kRestartNames{"keep", "drop"};
const std::array<std::string_view, 2> kVerifyNames{"coefficients", "pixels"};
const std::array<std::string_view, 2> kPlainZipNames{"leave", "optimize"};

std::string_view mode_name(Mode mode) { return kModeNames.at(static_cast<size_t>(mode)); }

}  // namespace lighten
