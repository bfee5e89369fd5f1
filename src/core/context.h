// What an optimiser may ask of its caller: the policy, the budgets, and (for containers) a way to
// hand an embedded item back to the engine. Types only: core knows no format.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/bytes.h"
#include "lighten/lighten.h"
#include "lighten/outcome.h"
#include "lighten/policy.h"

namespace lighten {

// What an independent check of an output found.
struct Verdict {
  bool ok = false;
  std::string problem;     // why not, when !ok
  QualityFigures quality;  // what the check measured
};

// 128 bits that stand for what an input decodes to (for a JPEG: its frame, tables and every DCT
// coefficient), so that a verifier can check an output against the input without decoding the
// same input a second time.
using DecodedFingerprint = std::array<uint64_t, 2>;

// A candidate the optimiser scored: the fingerprint of what it decodes to, and its scores. A
// verifier that finds the same fingerprint in an output's decode need not score it again.
struct ScoredFingerprint {
  DecodedFingerprint fingerprint{};
  double score = 0;
  double worst_tile = 0;
  // The Policy::jpeg_shown_through the pixels were read through: the same bytes shown in two
  // colour spaces (a PDF's images) are scored apart.
  std::shared_ptr<const std::vector<uint8_t>> shown_through;
};

// Memory counted with the caller's MemoryGate while an optimiser holds it, and the part of it
// the file's allowance covered; both handed back when the hold ends. A hold without a gate
// counts nothing.
class MemoryHold {
 public:
  MemoryHold() = default;
  MemoryHold(MemoryGate* gate, uint64_t admitted, std::atomic<uint64_t>* allowance = nullptr,
             uint64_t covered = 0)
      : gate_(gate), admitted_(admitted), allowance_(allowance), covered_(covered) {}
  MemoryHold(MemoryHold&& other) noexcept { take(other); }
  MemoryHold& operator=(MemoryHold&& other) noexcept {
    if (this != &other) {
      end();
      take(other);
    }
    return *this;
  }
  ~MemoryHold() { end(); }
  void end() noexcept {
    if (allowance_ != nullptr) std::exchange(allowance_, nullptr)->fetch_add(covered_);
    if (gate_ != nullptr) std::exchange(gate_, nullptr)->release(admitted_);
  }

 private:
  void take(MemoryHold& other) noexcept {
    gate_ = std::exchange(other.gate_, nullptr);
    admitted_ = other.admitted_;
    allowance_ = std::exchange(other.allowance_, nullptr);
    covered_ = other.covered_;
  }
  MemoryGate* gate_ = nullptr;
  uint64_t admitted_ = 0;
  std::atomic<uint64_t>* allowance_ = nullptr;
  uint64_t covered_ = 0;
};

class Context {
 public:
  virtual ~Context() = default;
  virtual const Policy& policy() const = 0;
  // Nesting depth: 0 for a file on disk, 1 for an item inside it, ...
  virtual unsigned depth() const = 0;
  // True once the time budget of the top-level file is spent; long loops should check it
  // and end with FormatError(kLimitExceeded).
  virtual bool out_of_time() const = 0;
  // Optimises an embedded item exactly as a file on disk would be, one level deeper, within
  // the depth, size and time budgets. `name` is for messages ("ppt/media/image1.jpeg").
  Outcome optimize_embedded(ByteView bytes, std::string_view name) {
    return optimize_embedded_under(bytes, name, policy());
  }
  // The same under another policy: a container whose readers decode an item otherwise than the
  // item's own gate assumes asks again with a raised floor (AVI frames as ffmpeg decodes them).
  virtual Outcome optimize_embedded_under(ByteView bytes, std::string_view name,
                                          const Policy& policy) = 0;
  // The same for an item handed over before, asked again (a raised floor, a lossless retry):
  // its bytes are not counted against the expansion budget a second time.
  virtual Outcome optimize_embedded_again(ByteView bytes, std::string_view name,
                                          const Policy& policy) {
    return optimize_embedded_under(bytes, name, policy);
  }
  // Checks an embedded item's output against its original with the verifier of its kind, as
  // the engine does for files on disk.
  Verdict verify_embedded(ByteView original, ByteView output) {
    return verify_embedded_under(original, output, policy());
  }
  // The same under another policy: the one the container optimised the item under.
  virtual Verdict verify_embedded_under(ByteView original, ByteView output,
                                        const Policy& policy) = 0;
  // An optimiser notes the fingerprint of an input it has decoded; the verifier of the same
  // top-level file may ask for it by the input's bytes. Contexts that keep none answer nullopt.
  virtual void note_fingerprint(ByteView /*input*/, const DecodedFingerprint& /*what*/) {}
  virtual std::optional<DecodedFingerprint> fingerprint(ByteView /*input*/) const {
    return std::nullopt;
  }
  // The same for the candidate a perceptual optimiser chose and scored, keyed by the input.
  virtual void note_scored(ByteView /*input*/, const ScoredFingerprint& /*what*/) {}
  virtual std::optional<ScoredFingerprint> scored(ByteView /*input*/) const { return std::nullopt; }
  // Counts `bytes` an optimiser is about to hold for data it decodes itself (which may wait
  // until they fit the caller's budget), until the returned hold ends. Items handed to
  // optimize_embedded are counted by the engine; this is for what a format decodes on its own.
  virtual MemoryHold hold_memory(uint64_t /*bytes*/) { return {}; }
};

}  // namespace lighten
