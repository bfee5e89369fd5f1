// `lighten probe`: where a training job's data waits (open, read, decode, batching), measured
// on the user's own files, optionally beside an optimised copy of the same tree.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "lighten/kind.h"

namespace lighten {

// How the modelled loader decodes. Both use libjpeg-turbo and full-size pixels; they differ in
// the work around it, which is what makes a PIL loader ~10-20 % slower per image.
enum class DecoderStyle : uint8_t {
  kPil,     // as Pillow: rows decoded to RGB, then unpacked into 4-byte pixels (its RGBX/RGBA)
  kDirect,  // straight into packed RGB, as torchvision.io, OpenCV and DALI's CPU path
};

struct ProbeOptions {
  std::string path;          // the tree to probe
  std::string compare_path;  // optional: its optimised copy, matched by relative path
  uint32_t sample = 200;     // files timed (the inventory counts every file)
  uint32_t workers = 4;      // loader workers (and parallel readers)
  uint32_t batch = 32;       // samples per batch
  double step_ms = 0;        // consumer time per batch (the GPU step)
  double bandwidth = 0;      // emulated link in bytes/s shared by all reads; 0 = none
  double latency_ms = 0;     // emulated delay per open
  bool cold = false;         // evict each file from the page cache before reading it
  DecoderStyle decoder = DecoderStyle::kPil;
  uint32_t passes = 8;  // loader model: how many passes over the sample it simulates
  bool follow_symlinks = false;
  // Images with more pixels count as failed decodes (Pillow's DecompressionBombError limit).
  uint64_t max_pixels = 178'956'970;
};

// Parses a link rate: "1gbit", "200mbit", "800kbit", "50MB/s", "1.5GB/s", "500kB/s" (decimal
// units, as links are sold) into bytes per second. Throws OptionError naming the value.
double parse_bandwidth(std::string_view text);
// "1 Gbit/s", "200 Mbit/s": the inverse, for reports.
std::string format_bandwidth(double bytes_per_s);

// Order statistics of one measured quantity (milliseconds, bytes, ...).
struct Distribution {
  uint64_t count = 0;
  double sum = 0, mean = 0, min = 0, max = 0, p50 = 0, p95 = 0, p99 = 0;
};

struct KindCount {
  uint64_t files = 0;
  uint64_t bytes = 0;
  Distribution size;  // bytes per file
};

struct JpegSampleFacts {
  uint64_t files = 0;
  uint64_t progressive = 0;
  std::map<std::string, uint64_t> subsampling;  // "4:2:0" -> files
  Distribution quality;                         // estimated IJG quality of the luma table
};

struct Inventory {
  uint64_t files = 0;
  uint64_t bytes = 0;
  std::map<Kind, KindCount> by_kind;  // kinds sniffed from content (see probe.cpp)
  Distribution size;
  Distribution megapixels;  // images of the sample
  JpegSampleFacts jpeg;     // JPEGs of the sample
  uint64_t walk_problems = 0;
};

struct StorageFigures {
  Distribution open_ms;           // open() plus the emulated per-open delay
  Distribution read_ms;           // whole-file read, one stream
  double single_stream_mbps = 0;  // MB/s (decimal) of one reader, opens and delays included
  double parallel_mbps = 0;       // MB/s of `workers` readers together
  uint64_t bytes_read = 0;        // per pass over the sample
  bool cold = false;              // page cache evicted before each read
  std::string cold_problem;       // why eviction did not work, when it did not
  uint64_t read_failures = 0;     // sampled files that could not be read
  std::string first_read_error;
};

struct DecodeFigures {
  uint64_t files = 0;
  uint64_t failed = 0;
  Distribution ms;  // per file, one core
  double megapixels = 0;
  double mp_per_s = 0;  // per core
};

struct LoaderFigures {
  Distribution batch_ms;  // preparation time of one batch by one worker
  double samples_per_s = 0;
  double mb_per_s = 0;
  double consumer_wait = 0;  // share of time the consumer waits for data, 0..1
  double link_busy = 0;      // share of time the emulated link carries data, 0..1
  std::string bound;         // "consumer", "decode", "read", "open"
  // Where worker time goes (open, read, decode, idle), shares of worker time.
  double open_share = 0, read_share = 0, decode_share = 0, idle_share = 0;
};

// Every measurement of one tree.
struct TreeProbe {
  std::string path;
  Inventory inventory;
  uint64_t sample_files = 0;
  uint64_t sample_bytes = 0;
  StorageFigures storage;
  // Decode per kind; JPEGs are split into "jpeg-baseline" and "jpeg-progressive".
  std::map<std::string, DecodeFigures> decode;
  // Decode time with `workers` decoders at once over decoding one file at a time: what the
  // cores give W workers right now (hyper-threads, other tenants); the loader model uses it.
  double parallel_decode_slowdown = 1;
  // Decode time over every sampled file, files that are no image or fail to decode included
  // (a loader pays for those too): what one sample costs, as the loader model takes it.
  double decode_ms_per_sample = 0;
  std::string first_decode_error;  // "/a/b.jpg: the JPEG data ends early (...)"
  LoaderFigures loader;
  double pass_seconds = 0;  // projected time for one pass over every file of the tree
};

struct ProbeReport {
  ProbeOptions options;
  unsigned cores = 0;
  TreeProbe original;
  std::optional<TreeProbe> optimised;  // with --compare
  uint64_t matched_files = 0;          // sample files found in both trees
  std::vector<std::string> recommendations;
  std::vector<std::string> warnings;
};

// Progress lines for people ("timing reads (one stream) 40/200"); may be empty.
using ProbeProgress = std::function<void(std::string_view line)>;

// Runs every measurement. Throws std::runtime_error when the tree cannot be walked or holds
// no readable file; per-file problems are counted and reported.
ProbeReport run_probe(const ProbeOptions& options, const ProbeProgress& progress = {});

// The terminal table and the recommendations.
void print_probe_report(std::ostream& out, const ProbeReport& report);
// The report as JSON (schema documented in src/probe/probe_json.cpp), written atomically.
std::string probe_report_json(const ProbeReport& report);
void write_probe_json(const std::string& path, const ProbeReport& report);

}  // namespace lighten
