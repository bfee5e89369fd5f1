// What an optimiser did with one input.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lighten/kind.h"

namespace lighten {

// Stable codes: stored in journals and reports. Append only; never renumber.
enum class Reason : uint16_t {
  kOptimized = 0,           // smaller output written
  kNoGain = 1,              // nothing smaller than the minimum gain was found
  kUnsupportedKind = 2,     // lighten has no optimiser for this kind (yet)
  kUnsupportedVariant = 3,  // the kind is known but this variant cannot be carried safely
  kCorrupt = 4,             // the input does not parse
  kTruncated = 5,           // the input ends early
  kEncrypted = 6,
  kSigned = 7,
  kVerifyFailed = 8,       // the output did not decode to what the policy promises
  kLimitExceeded = 9,      // size, pixel, depth or time limit of the policy
  kAlreadyOptimized = 10,  // marked or journalled as done under this policy
  kModeNotAvailable = 11,  // the policy asks for something this build cannot do
  kInternalError = 12,     // a bug in lighten; the input is kept
  kEmpty = 13,             // zero-length input
  kIoError = 14,           // reading or writing the file failed (batch only)
  kSkipped = 15,           // not taken by this run (shard, filter, symlink)
  kMisnamed = 16,          // the file's extension names another kind than its content (batch only)
};

std::string_view reason_name(Reason reason);  // "no-gain", "corrupt", ...

enum class Action : uint8_t {
  kReplaced,  // output() holds a verified, smaller output
  kKept,      // the input stays as it is; `reason` says why
};

struct QualityFigures {
  bool pixels_identical = false;  // checked by an independent decode
  std::optional<double> ssimulacra2;
  std::optional<double> butteraugli;
};

struct Timings {
  double total_ms = 0;
  double optimize_ms = 0;
  double verify_ms = 0;
};

// Where an output too large to hold in memory lives (a multi-GB video written to a file-backed
// mapping; see Limits::large_output_bytes): read it through Outcome::output().
class OutputStorage {
 public:
  virtual ~OutputStorage() = default;
  virtual std::span<const uint8_t> view() const = 0;
};

struct Outcome {
  Kind kind = Kind::kUnknown;
  Action action = Action::kKept;
  Reason reason = Reason::kNoGain;
  std::string message;         // one sentence for people; empty when optimised
  std::string detail;          // what was done, e.g. "huffman optimised, progressive"
  std::vector<uint8_t> bytes;  // the new file when action == kReplaced (unless large_output)
  std::shared_ptr<const OutputStorage> large_output;  // set instead of `bytes` for large outputs
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;  // == bytes_in when kept
  QualityFigures quality;
  Timings timings;
  std::vector<std::string> warnings;

  bool replaced() const { return action == Action::kReplaced; }
  // The new file, wherever it is held.
  std::span<const uint8_t> output() const {
    return large_output ? large_output->view() : std::span<const uint8_t>(bytes);
  }
};

}  // namespace lighten
