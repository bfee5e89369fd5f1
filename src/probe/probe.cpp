// run_probe: walks the tree(s), times reads and decodes of a sample, and models the loader.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <random>
#include <stdexcept>
#include <unordered_map>

#include "batch/store.h"
#include "batch/walk.h"
#include "core/machine_limits.h"
#include "core/worker_threads.h"
#include "lighten/lighten.h"
#include "lighten/options.h"
#include "lighten/probe.h"
#include "probe/loader_model.h"
#include "probe/measure.h"
#include "probe/recommend.h"
#include "probe/stats.h"
#include "probe/token_bucket.h"

namespace lighten {
namespace probe {
namespace {

// Enough for every kind sniff() tells apart by its head; ZIP documents of the sample are
// sniffed again from their whole bytes.
constexpr size_t kSniffHead = 64 << 10;
constexpr uint64_t kMinModelBatches = 16;
constexpr uint64_t kMaxWorkerSamples = uint64_t(1) << 22;  // workers x batch

// What the emulated link lets through at once: 10 ms of traffic, at most one read chunk, so
// small files cannot slip through on the burst alone.
double link_burst_bytes(double rate) { return std::min(double(TimedReader::kChunk), rate * 0.010); }

// The files of one tree that the probe times, in walk order.
struct SampleFile {
  std::string path;
  std::string relative;
};

void say(const ProbeProgress& progress, const std::string& line) {
  if (progress) progress(line);
}

double number_in(const std::string& value) {
  double v = 0;
  const char* begin = value.data();
  while (*begin && !std::isdigit(static_cast<unsigned char>(*begin))) ++begin;
  std::from_chars(begin, value.data() + value.size(), v);
  return v;
}

// `exclude`: a folder not walked (the optimised copy, when it lies inside the original).
batch::WalkResult walk_tree(const std::string& path, const ProbeOptions& options,
                            const std::string& exclude = {}) {
  auto store = batch::make_local_store();
  batch::WalkOptions walk_options;
  if (!exclude.empty()) walk_options.exclude_paths = {exclude};
  walk_options.follow_symlinks = options.follow_symlinks;
  walk_options.clean_temps = false;             // the probe only looks
  walk_options.temps_beside_their_file = true;  // as optimize's walk: a user's look-alike counts
  walk_options.skip_journals = true;  // a mirror's journal is lighten's, not the data set's
  batch::WalkResult result = batch::walk(*store, {path}, walk_options);
  if (result.files.empty())
    throw std::runtime_error(fmt::format(
        "{}: no readable files found{}; give a directory or file that holds the data set", path,
        result.problems.empty() ? "" : " (" + result.problems.front().message + ")"));
  return result;
}

Inventory take_inventory(const batch::WalkResult& walked) {
  Inventory inv;
  std::vector<double> sizes;
  std::map<Kind, std::vector<double>> kind_sizes;
  for (const auto& e : walked.files) {
    const Kind kind = sniff(read_head(e.path, kSniffHead));
    KindCount& k = inv.by_kind[kind];
    ++k.files;
    k.bytes += e.stat.size;
    ++inv.files;
    inv.bytes += e.stat.size;
    sizes.push_back(double(e.stat.size));
    kind_sizes[kind].push_back(double(e.stat.size));
  }
  inv.size = summarize(sizes);
  for (auto& [kind, k] : inv.by_kind) k.size = summarize(kind_sizes[kind]);
  inv.walk_problems = walked.problems.size();
  return inv;
}

// The median of three decodes: one preempted run on a shared machine would otherwise decide
// a file's figure (and, with --compare, the difference between the two trees).
DecodeTiming typical_decode(Kind kind, std::span<const uint8_t> bytes, DecoderStyle style,
                            uint64_t max_pixels) {
  DecodeTiming d = decode_image(kind, bytes, style, max_pixels);
  if (!d.ok) return d;
  double ms[3] = {d.ms, decode_image(kind, bytes, style, max_pixels).ms,
                  decode_image(kind, bytes, style, max_pixels).ms};
  std::sort(std::begin(ms), std::end(ms));
  d.ms = ms[1];
  return d;
}

// The decode of what a read brought in: the median of three, or the one decode a loader makes
// of freshly read bytes (`fresh`). An image read only in part (its bytes did not fit the
// reader's limit) is a failed decode, as it would be for a loader out of memory.
DecodeTiming decode_read(const ReadTiming& read, std::span<const uint8_t> bytes,
                         const ProbeOptions& options, bool fresh = false) {
  const Kind kind = sniff(bytes);
  if (read.whole && fresh) return decode_image(kind, bytes, options.decoder, options.max_pixels);
  if (read.whole) return typical_decode(kind, bytes, options.decoder, options.max_pixels);
  DecodeTiming d = decode_image(kind, {}, options.decoder, options.max_pixels);
  if (!d.label.empty())
    d.error = "the image's " + std::to_string(read.bytes) + " bytes were not held to decode";
  return d;
}

// With --compare, each original and its optimised copy are decoded in turn, so that a busy
// minute on a shared machine cannot pass for a difference between the trees.
void paired_decodes(const std::vector<std::string>& a, const std::vector<std::string>& b,
                    const ProbeOptions& options, std::vector<DecodeTiming>& out_a,
                    std::vector<DecodeTiming>& out_b) {
  SteadyClock clock;
  TimedReader reader(nullptr, 0, clock);
  std::vector<uint8_t> bytes_a, bytes_b;
  for (size_t i = 0; i < a.size(); ++i) {
    const ReadTiming read_a = reader.read(a[i], bytes_a), read_b = reader.read(b[i], bytes_b);
    out_a.push_back(read_a.ok ? decode_read(read_a, bytes_a, options) : DecodeTiming{});
    out_b.push_back(read_b.ok ? decode_read(read_b, bytes_b, options) : DecodeTiming{});
  }
}

void model_tree(TreeProbe& tree, std::span<const SampleTiming> timings, const ProbeOptions& options,
                unsigned cores) {
  const LoaderRun run = simulate_loader(
      timings, loader_config(options, effective_cores(tree, options, cores), timings));
  tree.loader = run.figures;
  if (run.figures.samples_per_s > 0)
    tree.pass_seconds = double(tree.inventory.files) / run.figures.samples_per_s;
}

// What one sample file looked like on the single-stream pass.
struct FileMeasure {
  ReadTiming read;
  DecodeTiming decode;
};

class TreeProber {
 public:
  TreeProber(const ProbeOptions& options, unsigned cores, const ProbeProgress& progress)
      : options_(options), cores_(cores), progress_(progress) {}

  // `decodes`, when given, holds each sample file's decode measured beforehand (paired with
  // the other tree's); otherwise decodes are timed here.
  TreeProbe run(const std::string& root, const batch::WalkResult& walked,
                const std::vector<std::string>& sample_paths,
                const std::vector<DecodeTiming>* decodes = nullptr) {
    decodes_ = decodes;
    TreeProbe tree;
    tree.path = root;
    say(progress_, fmt::format("{}: sniffing {} files", root, walked.files.size()));
    tree.inventory = take_inventory(walked);
    if (!options_.cold) warm_up(sample_paths);
    single_stream(tree, sample_paths);
    parallel_readers(tree, sample_paths);
    parallel_decode(tree, sample_paths);
    model_loader(tree);
    return tree;
  }

  std::vector<SampleTiming> timings() const { return timings_; }

 private:
  std::unique_ptr<TokenBucket> make_link() {
    if (options_.bandwidth <= 0) return nullptr;
    return std::make_unique<TokenBucket>(options_.bandwidth, link_burst_bytes(options_.bandwidth),
                                         clock_);
  }

  // Warm figures mean the page cache holds the files: read them once, untimed.
  void warm_up(const std::vector<std::string>& paths) {
    TimedReader reader(nullptr, 0, clock_);
    std::vector<uint8_t> bytes;
    for (const auto& p : paths) reader.read(p, bytes);
  }

  void evict(const std::string& path, StorageFigures& storage) {
    std::string problem;
    if (!evict_from_cache(path, problem) && storage.cold_problem.empty())
      storage.cold_problem = problem;
  }

  void single_stream(TreeProbe& tree, const std::vector<std::string>& paths) {
    auto link = make_link();
    TimedReader reader(link.get(), options_.latency_ms, clock_, /*one_stream=*/true);
    std::vector<double> open_ms, read_ms, mpix, quality;
    std::map<std::string, std::vector<double>> decode_ms;
    std::vector<uint8_t> bytes;
    double total_read_ms = 0;  // opens and emulated delays included, as W readers' figure has
    Inventory& inv = tree.inventory;
    StorageFigures& storage = tree.storage;
    storage.cold = options_.cold;
    timings_.clear();
    for (size_t i = 0; i < paths.size(); ++i) {
      if (i % 25 == 0)
        say(progress_, fmt::format("{}: reading and decoding {}/{}", tree.path, i, paths.size()));
      if (options_.cold) evict(paths[i], storage);
      const ReadTiming r = reader.read(paths[i], bytes);
      if (!r.ok) {
        if (storage.read_failures++ == 0) storage.first_read_error = r.error;
        continue;
      }
      open_ms.push_back(r.open_ms + r.delay_ms);
      read_ms.push_back(r.read_ms);
      total_read_ms += r.open_ms + r.delay_ms + r.read_ms;
      ++tree.sample_files;
      tree.sample_bytes += r.bytes;
      const Kind kind = sniff(bytes);
      const DecodeTiming d = decodes_ ? (*decodes_)[i] : decode_read(r, bytes, options_);
      if (!d.label.empty()) {
        DecodeFigures& f = tree.decode[d.label];
        ++f.files;
        if (d.ok) {
          decode_ms[d.label].push_back(d.ms);
          f.megapixels += double(d.pixels) / 1e6;
          mpix.push_back(double(d.pixels) / 1e6);
        } else {
          ++f.failed;
          if (tree.first_decode_error.empty()) tree.first_decode_error = paths[i] + ": " + d.error;
        }
      }
      if (kind == Kind::kJpeg) describe_jpeg(bytes, inv.jpeg, quality);
      // A failed decode still cost its time, as it would in a loader.
      timings_.push_back({r.open_ms, r.read_ms - r.link_wait_ms, d.ms, r.bytes});
    }
    if (timings_.empty())
      throw std::runtime_error(
          fmt::format("{}: none of the {} sampled files could be read; check permissions",
                      tree.path, paths.size()));
    double decode_total = 0;
    for (const SampleTiming& s : timings_) decode_total += s.decode_ms;
    tree.decode_ms_per_sample = decode_total / double(timings_.size());
    storage.open_ms = summarize(open_ms);
    storage.read_ms = summarize(read_ms);
    storage.bytes_read = tree.sample_bytes;
    if (total_read_ms > 0)
      storage.single_stream_mbps = double(tree.sample_bytes) / 1e3 / total_read_ms;
    for (auto& [label, f] : tree.decode) {
      f.ms = summarize(decode_ms[label]);
      if (f.ms.sum > 0) f.mp_per_s = f.megapixels / (f.ms.sum / 1000.0);
    }
    inv.megapixels = summarize(mpix);
    inv.jpeg.quality = summarize(quality);
  }

  static void describe_jpeg(std::span<const uint8_t> bytes, JpegSampleFacts& facts,
                            std::vector<double>& quality) {
    const FileInfo info = describe(bytes);
    if (!info.problem.empty()) return;
    ++facts.files;
    for (const auto& [name, value] : info.properties) {
      if (name == "coding" && value.find("progressive") != std::string::npos) ++facts.progressive;
      if (name == "subsampling") ++facts.subsampling[value];
      if (name == "estimated quality") quality.push_back(number_in(value));
    }
  }

  void parallel_readers(TreeProbe& tree, const std::vector<std::string>& paths) {
    say(progress_, fmt::format("{}: {} parallel readers", tree.path, options_.workers));
    if (options_.cold)
      for (const auto& p : paths) evict(p, tree.storage);
    auto link = make_link();
    std::atomic<size_t> next{0};
    std::atomic<uint64_t> bytes_total{0};
    const auto start = std::chrono::steady_clock::now();
    const unsigned readers = run_on_threads(options_.workers, [&](unsigned) {
      TimedReader reader(link.get(), options_.latency_ms, clock_);
      std::vector<uint8_t> bytes;
      for (size_t i = next++; i < paths.size(); i = next++) {
        const ReadTiming r = reader.read(paths[i], bytes);
        if (r.ok) bytes_total += r.bytes;
      }
    });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    refuse_fewer_threads("readers", readers);
    if (seconds > 0) tree.storage.parallel_mbps = double(bytes_total) / 1e6 / seconds;
  }

  // Measured with fewer threads than the loader's workers, the parallel figures would stand for
  // another loader (less contention: more cores than it will have).
  void refuse_fewer_threads(const char* what, unsigned started) const {
    if (started < options_.workers)
      throw std::runtime_error(
          fmt::format("the system started {} of the {} parallel {} asked for (a limit on tasks or "
                      "memory); the measurement would not stand for {} workers",
                      started, options_.workers, what, options_.workers));
  }

  // W threads read (untimed, no link) and decode (timed) at once, to see how much slower each
  // decode gets when W of them share the machine with whatever else runs on it. Each file is
  // decoded once, as a loader decodes what it has just read: measured against a real torch
  // DataLoader, that first decode's cost over the median of three belongs in the model (with
  // the median both ways, two workers on two cores came out 5 % faster than before, and further
  // from torch's figure).
  void parallel_decode(TreeProbe& tree, const std::vector<std::string>& paths) {
    say(progress_, fmt::format("{}: {} parallel decoders", tree.path, options_.workers));
    std::atomic<size_t> next{0};
    std::vector<double> busy(options_.workers, 0.0);
    const unsigned decoders = run_on_threads(options_.workers, [&](unsigned w) {
      TimedReader reader(nullptr, 0, clock_);
      std::vector<uint8_t> bytes;
      for (size_t i = next++; i < paths.size(); i = next++)
        if (const ReadTiming r = reader.read(paths[i], bytes); r.ok)
          busy[w] += decode_read(r, bytes, options_, /*fresh=*/true).ms;
    });
    refuse_fewer_threads("decoders", decoders);
    double alone = 0, together = 0;
    for (const SampleTiming& s : timings_) alone += s.decode_ms;
    for (double b : busy) together += b;
    if (alone > 0) tree.parallel_decode_slowdown = std::max(1.0, together / alone);
  }

  void model_loader(TreeProbe& tree) { model_tree(tree, timings_, options_, cores_); }

  const ProbeOptions& options_;
  unsigned cores_;
  const ProbeProgress& progress_;
  SteadyClock clock_;
  std::vector<SampleTiming> timings_;
  const std::vector<DecodeTiming>* decodes_ = nullptr;
};

// A spread sample of at most n files, in walk order: one from each of n equal runs of the
// walk (so every directory in proportion), at a place within its run drawn from a fixed seed
// (the same sample every time). Evenly spaced picks lined up with names that repeat in a period
// (img0001.jpg, img0001.txt, ...): 100 of 600 such files were all JPEGs.
std::vector<size_t> spread_sample(size_t total, uint32_t n) {
  std::vector<size_t> picks;
  const size_t take = std::min<size_t>(total, std::max<uint32_t>(n, 1));
  std::mt19937_64 draw(0x6C696768);
  for (size_t i = 0; i < take; ++i) {
    const size_t first = i * total / take, end = (i + 1) * total / take;
    picks.push_back(first + size_t(draw() % (end - first)));
  }
  return picks;
}

}  // namespace

double effective_cores(const TreeProbe& tree, const ProbeOptions& options, unsigned cores) {
  // What the workers got, measured, but never more than the cores the process may use: with
  // fewer sampled files than workers, fewer decode at once than the loader will run, and the
  // slowdown measured stays low (8 workers on 8 files of a 2-core machine modelled 258 samples
  // a second where 2 cores decode 89).
  const double measured =
      double(std::max<uint32_t>(options.workers, 1)) / std::max(1.0, tree.parallel_decode_slowdown);
  return std::min(measured, double(std::max(cores, 1u)));
}

LoaderConfig loader_config(const ProbeOptions& options, double cores,
                           std::span<const SampleTiming> samples) {
  LoaderConfig c;
  c.workers = std::max<uint32_t>(options.workers, 1);
  c.batch = std::max<uint32_t>(options.batch, 1);
  c.step_ms = options.step_ms;
  c.link_bytes_per_s = options.bandwidth;
  c.link_burst_bytes = link_burst_bytes(options.bandwidth);
  c.open_delay_ms = options.latency_ms;
  c.cores = std::max(0.01, cores);
  const uint64_t per_pass = (samples.size() + c.batch - 1) / c.batch;
  c.batches = std::max<uint64_t>(per_pass * std::max<uint32_t>(options.passes, 1),
                                 std::max<uint64_t>(kMinModelBatches, 4ull * c.workers));
  return c;
}

}  // namespace probe

ProbeReport run_probe(const ProbeOptions& options, const ProbeProgress& progress) {
  using namespace probe;
  if (options.workers == 0 || options.batch == 0 || options.sample == 0)
    throw OptionError("--workers, --batch and --sample must be at least 1");
  // The model steps through at least 4 batches a worker, sample by sample.
  if (uint64_t(options.workers) * options.batch > kMaxWorkerSamples)
    throw OptionError(fmt::format(
        "--workers {} with --batch {} is {} samples a round; the loader model takes at most {}",
        options.workers, options.batch, uint64_t(options.workers) * options.batch,
        kMaxWorkerSamples));
  ProbeReport report;
  report.options = options;
  report.cores = usable_cores();

  say(progress, fmt::format("{}: walking", options.path));
  // `lighten optimize DATA -o DATA/light` is allowed: the copy is no part of the original.
  const batch::WalkResult original = walk_tree(options.path, options, options.compare_path);
  std::vector<std::string> paths, other_paths;
  std::optional<batch::WalkResult> optimised;
  if (options.compare_path.empty()) {
    for (size_t i : spread_sample(original.files.size(), options.sample))
      paths.push_back(original.files[i].path);
  } else {
    say(progress, fmt::format("{}: walking", options.compare_path));
    optimised = walk_tree(options.compare_path, options);
    std::unordered_map<std::string, const batch::WalkEntry*> by_relative;
    for (const auto& e : optimised->files) by_relative.emplace(e.relative, &e);
    // Sample among the files both trees hold, so both sides time the same pictures.
    std::vector<std::pair<std::string, std::string>> matched;
    for (const auto& e : original.files)
      if (auto it = by_relative.find(e.relative); it != by_relative.end())
        matched.emplace_back(e.path, it->second->path);
    if (matched.empty())
      throw std::runtime_error(
          fmt::format("{}: no file has the same relative path as one in {}; give the mirror that "
                      "`lighten optimize {} -o OUT` wrote",
                      options.compare_path, options.path, options.path));
    report.matched_files = matched.size();
    if (matched.size() < original.files.size() || matched.size() < optimised->files.size())
      report.warnings.push_back(fmt::format(
          "only {} files are in both trees ({} has {}, {} has {}): the sample and the timings are "
          "of those, the file counts and the one-pass totals of each whole tree",
          matched.size(), options.path, original.files.size(), options.compare_path,
          optimised->files.size()));
    for (size_t i : spread_sample(matched.size(), options.sample)) {
      paths.push_back(matched[i].first);
      other_paths.push_back(matched[i].second);
    }
  }

  TreeProber prober(options, report.cores, progress);
  std::vector<DecodeTiming> decodes, other_decodes;
  if (optimised) {
    say(progress, fmt::format("decoding {} pairs of files in turn", paths.size()));
    paired_decodes(paths, other_paths, options, decodes, other_decodes);
  }
  report.original = prober.run(options.path, original, paths, optimised ? &decodes : nullptr);
  const auto original_timings = prober.timings();
  std::vector<SampleTiming> optimised_timings;
  if (optimised) {
    report.optimised = prober.run(options.compare_path, *optimised, other_paths, &other_decodes);
    optimised_timings = prober.timings();
    // The same pictures share the cores the same way: one slowdown for both trees, so that the
    // noise of two separate measurements does not show up as a difference between them.
    const double slowdown =
        (report.original.parallel_decode_slowdown + report.optimised->parallel_decode_slowdown) / 2;
    report.original.parallel_decode_slowdown = slowdown;
    report.optimised->parallel_decode_slowdown = slowdown;
    model_tree(report.original, original_timings, options, report.cores);
    model_tree(*report.optimised, optimised_timings, options, report.cores);
  }
  using Walked = std::pair<const std::string*, const batch::WalkResult*>;
  for (const auto& [path, walked] :
       {Walked{&options.path, &original},
        Walked{&options.compare_path, optimised ? &*optimised : nullptr}})
    if (walked && !walked->problems.empty())
      report.warnings.push_back(fmt::format("{}: {} entries were not walked (first: {}: {})", *path,
                                            walked->problems.size(), walked->problems.front().path,
                                            walked->problems.front().message));
  for (const TreeProbe* t : {&report.original, report.optimised ? &*report.optimised : nullptr})
    if (t) {
      if (!t->storage.cold_problem.empty())
        report.warnings.push_back("--cold could not evict files: " + t->storage.cold_problem);
      uint64_t failed_decodes = 0;
      for (const auto& [label, f] : t->decode) failed_decodes += f.failed;
      if (failed_decodes > 0)
        report.warnings.push_back(fmt::format(
            "{}: {} sampled images did not decode (first: {}); a loader would fail on them too",
            t->path, failed_decodes, t->first_decode_error));
      if (t->storage.read_failures > 0)
        report.warnings.push_back(fmt::format(
            "{}: {} sampled files could not be read and were left out (first: {}); check "
            "permissions or whether files changed during the run",
            t->path, t->storage.read_failures, t->storage.first_read_error));
    }
  report.recommendations = recommend(report, original_timings, optimised_timings);
  return report;
}

double parse_bandwidth(std::string_view text) {
  std::string lower;
  for (char c : text)
    if (c != ' ') lower += char(std::tolower(static_cast<unsigned char>(c)));
  double value = 0;
  const auto [end, ec] = std::from_chars(lower.data(), lower.data() + lower.size(), value);
  std::string unit(end, size_t(lower.data() + lower.size() - end));
  if (unit.ends_with("/s") || unit.ends_with("ps")) unit.resize(unit.size() - 2);
  // Bytes only when the original spelling says B (MB/s); bits otherwise (Mbit, Mb).
  const bool bytes =
      text.find('B') != std::string_view::npos && unit.find("bit") == std::string::npos;
  const std::string_view prefixes = "kmgt";
  double scale = 1;
  if (!unit.empty() && prefixes.find(unit[0]) != std::string_view::npos) {
    scale = std::pow(1000.0, double(prefixes.find(unit[0]) + 1));
    unit.erase(0, 1);
  }
  const bool known = unit == "bit" || unit == "b" || unit == "";
  if (ec != std::errc() || !(value > 0) || !std::isfinite(value) || !known ||
      (unit.empty() && !bytes && scale == 1))
    throw OptionError(fmt::format(
        "--bandwidth {}: not a link rate; write it like 1gbit, 200mbit or 50MB/s", text));
  const double rate = bytes ? value * scale : value * scale / 8.0;
  if (!std::isfinite(rate))  // 1e306tbit
    throw OptionError(fmt::format("--bandwidth {}: beyond any link rate", text));
  // Below this a sample's read would sleep for days (1e-6bit hung, 1e-300gbit overflowed the
  // sleep and read at full speed).
  constexpr double kSlowestRate = 1000.0 / 8;  // 1 kbit/s, in bytes per second
  if (rate < kSlowestRate)
    throw OptionError(
        fmt::format("--bandwidth {}: slower than 1kbit, the slowest link emulated", text));
  return rate;
}

std::string format_bandwidth(double bytes_per_s) {
  const double bits = bytes_per_s * 8;
  if (bits >= 1e9) return fmt::format("{:g} Gbit/s", std::round(bits / 1e7) / 100);
  if (bits >= 1e6) return fmt::format("{:g} Mbit/s", std::round(bits / 1e4) / 100);
  return fmt::format("{:g} kbit/s", std::round(bits / 10) / 100);
}

}  // namespace lighten
