// The probe report as JSON, for the HTML report and for scripts.
//
// Schema "lighten-probe/1" (times in milliseconds unless the name says _s; MB are 10^6 bytes):
// {
//   "schema": "lighten-probe/1", "version": "0.1.0", "cores": 2,
//   "options": {"path", "compare_path", "sample", "workers", "batch", "step_ms",
//               "bandwidth_bytes_per_s" (0 = none), "latency_ms", "cold", "decoder" ("pil" |
//               "direct"), "passes", "max_pixels"},
//   "matched_files": 50,               // sample candidates present in both trees (--compare)
//   "trees": {"original": TREE, "optimised": TREE},   // "optimised" only with --compare
//   "recommendations": ["sentence", ...], "warnings": ["sentence", ...]
// }
// TREE = {
//   "path": "...", "sample_files": 50, "sample_bytes": 54210000, "pass_s": 1.9,
//   "parallel_decode_slowdown": 1.1,   // decode time with `workers` decoders at once / alone
//   "decode_ms_per_sample": 12.5,      // decode time over every sample, failures and non-images
//                                      // included (as the loader model takes it)
//   "inventory": {"files", "bytes", "walk_problems", "size_bytes": DIST, "megapixels": DIST,
//                 "kinds": {"jpeg": {"files", "bytes", "size_bytes": DIST}, ...},
//                 "jpeg": {"files", "progressive", "subsampling": {"4:2:0": 40, ...},
//                          "quality": DIST}},
//   "storage": {"cold", "cold_problem" (null when eviction worked or was not asked),
//               "open_ms": DIST, "read_ms": DIST, "bytes_read", "read_failures",
//               "single_stream_mb_per_s", "parallel_mb_per_s"},
//   "decode": {"jpeg-baseline" | "jpeg-progressive" | "png":
//              {"files", "failed", "ms": DIST, "megapixels", "mp_per_s_per_core"}},
//   "loader": {"batch_ms": DIST, "samples_per_s", "mb_per_s", "consumer_wait" (0..1),
//              "link_busy" (0..1), "bound": "consumer" | "decode" | "read" | "open",
//              "worker_share": {"open", "read", "decode", "idle"} (0..1 of worker time)}
// }
// DIST = {"count", "sum", "mean", "min", "max", "p50", "p95", "p99"}
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/text_output.h"
#include "lighten/lighten.h"
#include "lighten/probe.h"

namespace lighten {
namespace {

using nlohmann::json;

json dist(const Distribution& d) {
  return {{"count", d.count}, {"sum", d.sum}, {"mean", d.mean}, {"min", d.min},
          {"max", d.max},     {"p50", d.p50}, {"p95", d.p95},   {"p99", d.p99}};
}

json tree_json(const TreeProbe& t) {
  json kinds = json::object();
  for (const auto& [k, c] : t.inventory.by_kind)
    kinds[std::string(kind_name(k))] = {
        {"files", c.files}, {"bytes", c.bytes}, {"size_bytes", dist(c.size)}};
  json decode = json::object();
  for (const auto& [label, f] : t.decode)
    decode[label] = {{"files", f.files},
                     {"failed", f.failed},
                     {"ms", dist(f.ms)},
                     {"megapixels", f.megapixels},
                     {"mp_per_s_per_core", f.mp_per_s}};
  const LoaderFigures& l = t.loader;
  return {
      {"path", t.path},
      {"sample_files", t.sample_files},
      {"sample_bytes", t.sample_bytes},
      {"pass_s", t.pass_seconds},
      {"parallel_decode_slowdown", t.parallel_decode_slowdown},
      {"decode_ms_per_sample", t.decode_ms_per_sample},
      {"inventory",
       {{"files", t.inventory.files},
        {"bytes", t.inventory.bytes},
        {"walk_problems", t.inventory.walk_problems},
        {"size_bytes", dist(t.inventory.size)},
        {"megapixels", dist(t.inventory.megapixels)},
        {"kinds", kinds},
        {"jpeg",
         {{"files", t.inventory.jpeg.files},
          {"progressive", t.inventory.jpeg.progressive},
          {"subsampling", t.inventory.jpeg.subsampling},
          {"quality", dist(t.inventory.jpeg.quality)}}}}},
      {"storage",
       {{"cold", t.storage.cold},
        {"cold_problem",
         t.storage.cold_problem.empty() ? json(nullptr) : json(t.storage.cold_problem)},
        {"open_ms", dist(t.storage.open_ms)},
        {"read_ms", dist(t.storage.read_ms)},
        {"bytes_read", t.storage.bytes_read},
        {"read_failures", t.storage.read_failures},
        {"single_stream_mb_per_s", t.storage.single_stream_mbps},
        {"parallel_mb_per_s", t.storage.parallel_mbps}}},
      {"decode", decode},
      {"loader",
       {{"batch_ms", dist(l.batch_ms)},
        {"samples_per_s", l.samples_per_s},
        {"mb_per_s", l.mb_per_s},
        {"consumer_wait", l.consumer_wait},
        {"link_busy", l.link_busy},
        {"bound", l.bound},
        {"worker_share",
         {{"open", l.open_share},
          {"read", l.read_share},
          {"decode", l.decode_share},
          {"idle", l.idle_share}}}}},
  };
}

}  // namespace

std::string probe_report_json(const ProbeReport& r) {
  const ProbeOptions& o = r.options;
  json trees = {{"original", tree_json(r.original)}};
  if (r.optimised) trees["optimised"] = tree_json(*r.optimised);
  json doc = {
      {"schema", "lighten-probe/1"},
      {"version", std::string(version())},
      {"cores", r.cores},
      {"options",
       {{"path", o.path},
        {"compare_path", o.compare_path.empty() ? json(nullptr) : json(o.compare_path)},
        {"sample", o.sample},
        {"workers", o.workers},
        {"batch", o.batch},
        {"step_ms", o.step_ms},
        {"bandwidth_bytes_per_s", o.bandwidth},
        {"latency_ms", o.latency_ms},
        {"cold", o.cold},
        {"decoder", o.decoder == DecoderStyle::kPil ? "pil" : "direct"},
        {"passes", o.passes},
        {"max_pixels", o.max_pixels}}},
      {"matched_files", r.matched_files},
      {"trees", trees},
      {"recommendations", r.recommendations},
      {"warnings", r.warnings},
  };
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";  // paths need not be UTF-8
}

void write_probe_json(const std::string& path, const ProbeReport& report) {
  // A reader never sees half a report.
  write_text_atomically(path, probe_report_json(report), "choose a writable --json path");
}

}  // namespace lighten
