// What a file is expected to need in memory while it is optimised, so that the scheduler keeps
// a pool of workers within the memory budget.
#pragma once

#include <cstddef>
#include <cstdint>

#include "batch/scheduler.h"
#include "core/bytes.h"
#include "lighten/lighten.h"
#include "lighten/policy.h"

namespace lighten::batch {

// How much of a file's start the batch reads for memory_estimate: a first read that holds the
// headers of most files, and a longer one for a JPEG whose frame header lies past it (behind
// EXIF, ICC and XMP segments), enough for nearly every photo.
inline constexpr size_t kEstimateHeadBytes = 4096, kEstimateLongHeadBytes = 256 * 1024;

// Above this size, a file whose first bytes show a kind lighten has no optimiser for (a disk
// image, an MKV) is not read whole: a mirror gets it streamed across.
inline constexpr uint64_t kStreamedAbove = 4 << 20;
// Whether a file of `file_size` bytes that begins with `head` (non-empty) is such a file.
bool streamed_unread(uint64_t file_size, ByteView head);

// True when `head` starts a JPEG whose frame header lies past its end.
bool frame_header_beyond(ByteView head);

// A coarse upper bound of the peak memory of optimising one file of `file_size` bytes whose
// first bytes are `head` (any prefix, possibly empty). Images are priced by their pixels (from
// the JPEG frame or PNG header in `head`), as decoding, candidates and the metric grow with
// them and not with the compressed size; a file streamed_unread by its copy buffer; anything
// else by its size.
uint64_t memory_estimate(uint64_t file_size, ByteView head, const Policy& policy);

// Prices the items inside files (a document's pictures, a video's frames) as files are priced,
// and counts each with the scheduler's estimates while it is worked on: the 16 times its size
// a container is priced at cannot see a picture whose header promises 120 megapixels in 200
// bytes, nor a deflated image that expands 200 times. What a format decodes itself (a PDF's
// Flate image, a document's deflated part) is counted as the format reckons it, beyond the
// file's own estimate.
class ItemGate final : public MemoryGate {
 public:
  explicit ItemGate(Scheduler& scheduler) : scheduler_(scheduler) {}
  uint64_t admit(std::span<const uint8_t> item, const Policy& policy) override;
  uint64_t admit_bytes(uint64_t bytes) override {
    scheduler_.reserve(bytes);
    return bytes;
  }
  // The estimate the scheduler charged the file at.
  uint64_t allowance(std::span<const uint8_t> file, const Policy& policy) override {
    return memory_estimate(file.size(), file, policy);
  }
  void release(uint64_t admitted) noexcept override { scheduler_.release(admitted); }

 private:
  Scheduler& scheduler_;
};

}  // namespace lighten::batch
