// The probe's I/O and decoding: timed opens and reads (through the emulated link), page-cache
// eviction, and full-size decodes the way common loaders do them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lighten/kind.h"
#include "lighten/probe.h"
#include "probe/token_bucket.h"

namespace lighten::probe {

struct ReadTiming {
  bool ok = false;
  std::string error;        // "open /a/b.jpg: Permission denied"
  double open_ms = 0;       // the open() call alone
  double delay_ms = 0;      // emulated per-open latency
  double read_ms = 0;       // reading every byte, including waits for the link
  double link_wait_ms = 0;  // of read_ms: waiting for the emulated link, as the clock measured it
  uint64_t bytes = 0;
  bool whole = true;  // the buffer holds every byte read (else only the first chunk)
};

// Reads whole files in chunks, each chunk drawn from the shared link when there is one.
// Thread-safe: readers share only the bucket. Timed reads bypass the Store seam because it
// opens and reads in one call, and the probe must time the two apart.
class TimedReader {
 public:
  // `one_stream`: each read starts on an empty bucket, as one reader alone finds the link: what
  // built up while it waited for the open or decoded the last file cannot be spent.
  TimedReader(TokenBucket* link, double latency_ms, Clock& clock, bool one_stream = false)
      : link_(link), latency_ms_(latency_ms), clock_(clock), one_stream_(one_stream) {}
  // Reads every byte of the file. `bytes` receives all of them where the first chunk is a JPEG
  // or PNG of at most kMaxKeptBytes (what the probe decodes), else the first chunk alone (enough
  // to sniff): a data set of videos read by W workers holds W chunks, not W videos. Only the
  // reads and the link's waits are timed, not the buffer's growth.
  ReadTiming read(const std::string& path, std::vector<uint8_t>& bytes);

  static constexpr size_t kChunk = 256 << 10;
  static constexpr uint64_t kMaxKeptBytes = 512ull << 20;

 private:
  uint8_t* scratch(size_t size);  // where bytes not kept are read to

  TokenBucket* link_;
  double latency_ms_;
  Clock& clock_;
  bool one_stream_;
  std::vector<uint8_t> scratch_;
};

// The first `limit` bytes of a file (for sniffing); empty on error.
std::vector<uint8_t> read_head(const std::string& path, size_t limit);

// Drops the file's pages from the page cache with posix_fadvise(DONTNEED) and checks with
// mincore() that they went. Returns false, with the reason, when they did not (tmpfs, overlay
// or a file system that ignores the advice).
bool evict_from_cache(const std::string& path, std::string& problem);

struct DecodeTiming {
  bool ok = false;
  std::string label;  // "jpeg-baseline", "jpeg-progressive", "png"; empty: not an image we decode
  double ms = 0;
  uint64_t pixels = 0;
  std::string error;
};

// Pillow's DecompressionBombError limit (twice Image.MAX_IMAGE_PIXELS): a PIL loader fails on
// larger images, and the probe does not hold their pixels either.
inline constexpr uint64_t kPillowMaxPixels = 178'956'970;

// Decodes to full-size 8-bit pixels (libjpeg-turbo for JPEG, libpng for PNG) and times it:
// packed RGB for kDirect, four bytes a colour pixel as Pillow holds them for kPil. A decode
// fails, as Pillow's would, on an image of more than `max_pixels` (before any pixel buffer is
// allocated) and on a JPEG that ends early ("image file is truncated"); also where the pixels
// do not fit in memory. Never throws.
DecodeTiming decode_image(Kind kind, std::span<const uint8_t> bytes, DecoderStyle style,
                          uint64_t max_pixels = kPillowMaxPixels);

}  // namespace lighten::probe
