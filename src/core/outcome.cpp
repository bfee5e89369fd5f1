#include "lighten/outcome.h"

#include "lighten/policy.h"

namespace lighten {

std::string_view reason_name(Reason reason) {
  switch (reason) {
    case Reason::kOptimized:
      return "optimized";
    case Reason::kNoGain:
      return "no-gain";
    case Reason::kUnsupportedKind:
      return "unsupported-kind";
    case Reason::kUnsupportedVariant:
      return "unsupported-variant";
    case Reason::kCorrupt:
      return "corrupt";
    case Reason::kTruncated:
      return "truncated";
    case Reason::kEncrypted:
      return "encrypted";
    case Reason::kSigned:
      return "signed";
    case Reason::kVerifyFailed:
      return "verify-failed";
    case Reason::kLimitExceeded:
      return "limit-exceeded";
    case Reason::kAlreadyOptimized:
      return "already-optimized";
    case Reason::kModeNotAvailable:
      return "mode-not-available";
    case Reason::kInternalError:
      return "internal-error";
    case Reason::kEmpty:
      return "empty";
    case Reason::kIoError:
      return "io-error";
    case Reason::kSkipped:
      return "skipped";
    case Reason::kMisnamed:
      return "misnamed";
  }
  return "unknown-reason";
}

bool worth_keeping(uint64_t in, uint64_t out, const Policy& policy) {
  if (out >= in) return false;
  const uint64_t saved = in - out;
  return saved >= policy.min_gain_bytes &&
         static_cast<double>(saved) >= policy.min_gain_ratio * static_cast<double>(in);
}

}  // namespace lighten
