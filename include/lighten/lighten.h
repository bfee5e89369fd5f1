// The public API: optimise one buffer, or say what it is.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "lighten/kind.h"
#include "lighten/options.h"
#include "lighten/outcome.h"
#include "lighten/policy.h"

namespace lighten {

// Optimises `bytes` under `policy`. Never throws for anything the input contains: problems come
// back as an Outcome with action kKept and a Reason. Pure: no I/O, no globals, thread-safe.
Outcome optimize(std::span<const uint8_t> bytes, const Policy& policy);

// What a caller that runs files side by side under a memory budget is told of the items inside
// a file (a document's pictures, a video's frames), which no estimate from the file's size or
// header can see: a 2 kB document may hold a picture whose decode takes 700 MB.
class MemoryGate {
 public:
  virtual ~MemoryGate() = default;
  // Asked before an item is optimised or checked; may wait until the item's memory fits.
  // Returns what it counted, handed back to release() when the item is done.
  virtual uint64_t admit(std::span<const uint8_t> item, const Policy& policy) = 0;
  // Asked before a format decodes data of its own that the file's size does not show (a PDF's
  // deflated image, a document part that inflates a hundred times): the `bytes` it is about to
  // hold, as the format reckons them, beyond the file's allowance(). The same contract as
  // admit(); a gate that counts no such memory keeps this default.
  virtual uint64_t admit_bytes(uint64_t /*bytes*/) { return 0; }
  // What the caller counted already for the file it hands to optimize(): a format's own data
  // is admitted only beyond it, so that a file's ordinary decoding never waits for room.
  virtual uint64_t allowance(std::span<const uint8_t> /*file*/, const Policy& /*policy*/) {
    return 0;
  }
  virtual void release(uint64_t admitted) noexcept = 0;
};

// The same, telling `gate` of every item the file holds, at any depth.
Outcome optimize(std::span<const uint8_t> bytes, const Policy& policy, MemoryGate& gate);

// Whether a file that begins with `head` (its first kilobytes) may be one lighten optimises:
// false only where those bytes show a kind it has no optimiser for, so that a caller need not
// read the rest. The kinds of ZIP archives and compound files wait for their entries' names.
bool may_optimize(std::span<const uint8_t> head);

// What lighten sees in a file, as ordered name/value lines, for `lighten info`.
struct FileInfo {
  Kind kind = Kind::kUnknown;
  bool supported = false;  // an optimiser exists for this kind
  std::vector<std::pair<std::string, std::string>> properties;
  std::string problem;                         // why it cannot be parsed, if it cannot
  Reason problem_reason = Reason::kOptimized;  // with a problem: corrupt, truncated, ...
};
FileInfo describe(std::span<const uint8_t> bytes);

// Version string of the library.
std::string_view version();

}  // namespace lighten
