// The HTML report: one self-contained file. The page's template, styles and script and the
// vendored chart library are embedded at build time (report_assets.h); this file turns the
// aggregates into one JSON blob the script draws from, and fills the template.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/text_output.h"
#include "lighten/lighten.h"
#include "lighten/report.h"
#include "report/report_assets.h"

namespace lighten {
namespace {

using nlohmann::json;

double percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * double(part) / double(whole);
}

uint64_t saved_bytes(uint64_t before, uint64_t after) {
  return after < before ? before - after : 0;
}

bool is_failure(Reason r) {
  return r == Reason::kIoError || r == Reason::kInternalError || r == Reason::kVerifyFailed;
}

json totals_json(const ReportTotals& t) {
  const uint64_t saved = saved_bytes(t.bytes_before, t.bytes_after);
  return {{"files", t.files},
          {"optimized", t.optimized},
          {"bytes_before", t.bytes_before},
          {"bytes_after", t.bytes_after},
          {"saved_bytes", saved},
          {"saved_percent", percent(saved, t.bytes_before)},
          {"cpu_s", t.ms / 1e3},
          {"scored", t.scored},
          {"score_min", t.scored ? json(t.score_min) : json(nullptr)},
          {"score_mean", t.scored ? json(t.score_sum / double(t.scored)) : json(nullptr)}};
}

json example_json(const ReportExample& e) {
  return {{"path", e.path},
          {"kind", std::string(kind_name(e.kind))},
          {"action", e.action == Action::kReplaced ? "optimized" : "kept"},
          {"reason", std::string(reason_name(e.reason))},
          {"message", e.message},
          {"bytes_before", e.bytes_before},
          {"bytes_after", e.bytes_after},
          {"ms", e.ms}};
}

json summary_json(const ReportSummary& s) {
  json totals = totals_json(s.total);
  uint64_t failed = 0, left_alone = 0;
  for (const auto& [reason, group] : s.left_alone) {
    left_alone += group.files;
    if (is_failure(reason)) failed += group.files;
  }
  totals["left_alone"] = left_alone;
  totals["failed"] = failed;
  totals["wall_s"] = s.wall_seconds;
  totals["from_earlier_runs"] = s.from_earlier_runs;
  const bool timed = s.wall_seconds > 0 && s.from_earlier_runs == 0;
  totals["mb_per_s"] = timed ? double(s.total.bytes_before) / 1e6 / s.wall_seconds : 0;
  totals["files_per_s"] = timed ? double(s.total.files) / s.wall_seconds : 0;

  json runs = json::array();
  for (const ReportRun& r : s.runs) {
    json policy = json::object();
    for (const auto& [name, value] : r.policy) policy[name] = value;
    runs.push_back({{"run_id", r.run_id},
                    {"started", r.started},
                    {"seconds", r.started_s > 0 ? r.last_done_s - r.started_s : 0},
                    {"policy", policy}});
  }
  // Largest saving first: the order a reader scans the chart in.
  std::vector<std::pair<Kind, ReportTotals>> kinds(s.kinds.begin(), s.kinds.end());
  std::stable_sort(kinds.begin(), kinds.end(), [](const auto& a, const auto& b) {
    return saved_bytes(a.second.bytes_before, a.second.bytes_after) >
           saved_bytes(b.second.bytes_before, b.second.bytes_after);
  });
  json kinds_json = json::array();
  for (const auto& [kind, t] : kinds) {
    json row = totals_json(t);
    row["kind"] = std::string(kind_name(kind));
    kinds_json.push_back(std::move(row));
  }
  std::vector<std::pair<Reason, const ReportReasonGroup*>> groups;
  for (const auto& [reason, group] : s.left_alone) groups.emplace_back(reason, &group);
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.second->files > b.second->files; });
  json reasons = json::array();
  for (const auto& [reason, group] : groups) {
    json examples = json::array();
    for (const ReportExample& e : group->examples) examples.push_back(example_json(e));
    reasons.push_back({{"reason", std::string(reason_name(reason))},
                       {"failure", is_failure(reason)},
                       {"files", group->files},
                       {"bytes", group->bytes},
                       {"advice", std::string(reason_advice(reason, s.journaled))},
                       {"examples", std::move(examples)}});
  }
  json slowest = json::array();
  for (const ReportExample& e : s.slowest) slowest.push_back(example_json(e));

  // Points as arrays, kinds by index: the blob stays small at thousands of points.
  json scatter_kinds = json::array();
  std::map<Kind, size_t> kind_index;
  json points = json::array();
  for (const ReportScatterPoint& p : s.scatter) {
    auto [it, added] = kind_index.try_emplace(p.kind, kind_index.size());
    if (added) scatter_kinds.push_back(std::string(kind_name(p.kind)));
    points.push_back(
        {std::round(p.ssimulacra2 * 100) / 100, p.bytes_saved, p.bytes_before, it->second, p.path});
  }
  return {
      {"schema", "lighten-report/1"},
      {"version", std::string(version())},
      {"source", s.source},
      {"dry_run", s.dry_run},
      {"stopped", {{"because", s.stopped_because}, {"not_started", s.not_started}}},
      {"runs", std::move(runs)},
      {"totals", std::move(totals)},
      {"kinds", std::move(kinds_json)},
      {"left_alone", std::move(reasons)},
      {"savings_bins", s.savings_bins},
      {"bin_percent", 100.0 / double(kSavingsBins)},
      {"slowest", std::move(slowest)},
      {"scatter", {{"population", s.total.scored}, {"kinds", scatter_kinds}, {"points", points}}}};
}

// Per sample, in milliseconds: what one worker spends opening, reading and decoding, and how
// long the training step waits for data (the consumer's idle share of the time per sample).
json probe_tree_json(const json& tree) {
  const json& storage = tree.at("storage");
  const json& loader = tree.at("loader");
  // Per sample, as open and read are: probes from before decode_ms_per_sample give the decoded
  // images' time over every sample (failed decodes' time is not in them).
  double decode_ms = 0;
  if (tree.contains("decode_ms_per_sample")) {
    decode_ms = tree.at("decode_ms_per_sample").get<double>();
  } else if (const double samples = tree.at("sample_files").get<double>(); samples > 0) {
    for (const auto& [label, d] : tree.at("decode").items())
      decode_ms += d.at("ms").at("sum").get<double>() / samples;
  }
  const double samples_per_s = loader.at("samples_per_s").get<double>();
  const double wait = loader.at("consumer_wait").get<double>();
  return {{"path", tree.at("path")},
          {"sample_files", tree.at("sample_files")},
          {"sample_bytes", tree.at("sample_bytes")},
          {"open_ms", storage.at("open_ms").at("mean")},
          {"read_ms", storage.at("read_ms").at("mean")},
          {"decode_ms", decode_ms},
          {"wait_ms", samples_per_s > 0 ? wait * 1000.0 / samples_per_s : 0.0},
          {"samples_per_s", samples_per_s},
          {"consumer_wait", wait},
          {"bound", loader.at("bound")}};
}

json probe_json(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("probe " + path + ": cannot open: " + std::strerror(errno) +
                             "; pass a file written by `lighten probe DATA --compare OUT --json "
                             "FILE`");
  try {
    const json doc = json::parse(in);
    if (doc.value("schema", "") != "lighten-probe/1")
      throw std::runtime_error("schema is not lighten-probe/1");
    const json& options = doc.at("options");
    const json& trees = doc.at("trees");
    json out = {{"file", path},
                {"workers", options.at("workers")},
                {"batch", options.at("batch")},
                {"step_ms", options.at("step_ms")},
                {"bandwidth_bytes_per_s", options.at("bandwidth_bytes_per_s")},
                {"latency_ms", options.at("latency_ms")},
                {"cold", options.at("cold")},
                {"original", probe_tree_json(trees.at("original"))},
                {"optimised", trees.contains("optimised") ? probe_tree_json(trees.at("optimised"))
                                                          : json(nullptr)},
                {"recommendations", doc.value("recommendations", json::array())}};
    return out;
  } catch (const std::exception& e) {
    throw std::runtime_error("probe " + path + ": not a probe report (" + e.what() +
                             "); pass a file written by `lighten probe DATA --compare OUT "
                             "--json FILE`");
  }
}

// Inside <script>, "</script" or "<!--" would end or confuse the element: JSON may escape
// every '<' (it only occurs inside strings), and the scripts are checked for it.
std::string json_for_script(const json& doc) {
  const std::string text = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + 64);
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

std::string script_safe(std::string_view script) {
  std::string out(script);
  for (size_t at = 0; (at = out.find("</", at)) != std::string::npos; at += 3)
    out.replace(at, 2, "<\\/");
  return out;
}

std::string html_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Replaces each {{NAME}} of the template; only the template is scanned, never what is put in.
std::string fill(std::string_view page, const std::map<std::string, std::string>& values) {
  std::string out;
  out.reserve(page.size() + 64);
  for (const auto& [name, value] : values) out.reserve(out.capacity() + value.size());
  size_t at = 0;
  while (true) {
    const size_t open = page.find("{{", at);
    if (open == std::string_view::npos) break;
    const size_t close = page.find("}}", open);
    if (close == std::string_view::npos) break;
    out.append(page.substr(at, open - at));
    const auto it = values.find(std::string(page.substr(open + 2, close - open - 2)));
    if (it != values.end())
      out += it->second;
    else
      out.append(page.substr(open, close + 2 - open));
    at = close + 2;
  }
  out.append(page.substr(at));
  return out;
}
}  // namespace

std::string render_html_report(const ReportSummary& summary,
                               const std::vector<std::string>& probe_json_paths) {
  json data = summary_json(summary);
  data["generated"] = utc_time_text("%Y-%m-%d %H:%M UTC");
  json probes = json::array();
  for (const std::string& path : probe_json_paths) probes.push_back(probe_json(path));
  data["probes"] = std::move(probes);
  const std::string source = summary.source.substr(summary.source.rfind('/') + 1);
  return fill(report_assets::page(),
              {{"TITLE", html_escape("lighten report: " + source)},
               {"STYLE", std::string(report_assets::style())},
               {"CHART_LIBRARY", script_safe(report_assets::chart_library())},
               {"SCRIPT", script_safe(report_assets::script())},
               {"DATA", json_for_script(data)}});
}

void write_html_report(const std::string& path, const ReportSummary& summary,
                       const std::vector<std::string>& probe_json_paths) {
  // A browser or a mail client never picks up half a page.
  write_text_atomically(path, render_html_report(summary, probe_json_paths),
                        "choose a writable place for the report");
}

}  // namespace lighten
