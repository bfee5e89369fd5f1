// Scan mode and scan script choice: baseline, libjpeg's simple progression, and a search over
// progressive scripts that keeps the smallest.
#pragma once

#include <string>

#include "core/bytes.h"
#include "formats/jpeg/coefficients.h"
#include "lighten/policy.h"

namespace lighten {
class Context;
}

namespace lighten::jpeg {

struct ScanResult {
  Bytes jpeg;          // SOI .. EOI as libjpeg wrote it (no metadata)
  std::string detail;  // "baseline", "progressive (script 3 of 6)", ...
  bool progressive = false;
};

// Writes the candidates `mode` and `effort` call for and returns the smallest; ties go to the
// earlier candidate (baseline first). Throws FormatError(kLimitExceeded) when the context runs
// out of time before any candidate is written.
ScanResult choose_scans(CoefficientImage& image, ScanMode mode, int effort,
                        unsigned restart_interval, const Context* context);

}  // namespace lighten::jpeg
