// The terminal table: one row per figure, the optimised tree beside the original when given.
#include <fmt/format.h>

#include <optional>
#include <set>

#include "lighten/probe.h"
#include "lighten/report.h"

namespace lighten {
namespace {

class Table {
 public:
  Table(std::ostream& out, bool compare) : out_(out), compare_(compare) {}

  void section(std::string_view title) { out_ << "\n" << title << "\n"; }

  // A row of text cells.
  void row(std::string_view label, const std::string& a, const std::string& b = "",
           const std::string& change = "") {
    if (compare_)
      out_ << fmt::format("  {:<30} {:>20} {:>20} {:>9}\n", label, a, b, change);
    else
      out_ << fmt::format("  {:<30} {:>20}\n", label, a);
  }

  // A row of numbers; the change column shows the relative difference.
  void number(std::string_view label, double a, std::optional<double> b, std::string_view fmt_spec,
              std::string_view unit = "") {
    auto cell = [&](double v) {
      return fmt::format(fmt::runtime(fmt_spec), v) + std::string(unit);
    };
    std::string change;
    if (b && a != 0) change = fmt::format("{:+.1f}%", (*b / a - 1) * 100);
    row(label, cell(a), b ? cell(*b) : "", change);
  }

 private:
  std::ostream& out_;
  bool compare_;
};

std::string ms3(const Distribution& d) {
  return fmt::format("{:.2f}/{:.2f}/{:.2f}", d.p50, d.p95, d.p99);
}

std::string share(double v) { return fmt::format("{:.0f}%", v * 100); }

std::string subsampling_text(const JpegSampleFacts& j) {
  std::string s;
  for (const auto& [name, n] : j.subsampling) {
    if (!s.empty()) s += ", ";
    s += fmt::format("{} x{}", name, n);
  }
  return s.empty() ? "-" : s;
}

std::string pass_text(double seconds) {
  if (seconds < 120) return fmt::format("{:.1f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

}  // namespace

void print_probe_report(std::ostream& out, const ProbeReport& report) {
  const ProbeOptions& o = report.options;
  const TreeProbe& a = report.original;
  const TreeProbe* b = report.optimised ? &*report.optimised : nullptr;
  auto opt = [&](auto get) -> std::optional<double> {
    if (!b) return std::nullopt;
    return double(get(*b));
  };
  out << fmt::format(
      "lighten probe {}{}\nsample {} of {} files; {} workers, batch {}, step {:g} ms; {}{}; {} "
      "cache; {} cores\n",
      a.path, b ? " vs " + b->path : "", a.sample_files, a.inventory.files, o.workers, o.batch,
      o.step_ms, o.bandwidth > 0 ? "link " + format_bandwidth(o.bandwidth) : "local reads",
      o.latency_ms > 0 ? fmt::format(" + {:g} ms per open", o.latency_ms) : "",
      o.cold ? "cold" : "warm", report.cores);
  Table t(out, b != nullptr);
  if (b) t.row("", "original", "optimised", "change");

  t.section("inventory");
  t.number("files", double(a.inventory.files), opt([](auto& x) { return x.inventory.files; }),
           "{:.0f}");
  t.row(
      "bytes", format_bytes(a.inventory.bytes), b ? format_bytes(b->inventory.bytes) : "",
      b ? fmt::format(
              "{:+.1f}%",
              (double(b->inventory.bytes) / double(std::max<uint64_t>(a.inventory.bytes, 1)) - 1) *
                  100)
        : "");
  std::set<Kind> kinds;
  for (const auto& [k, c] : a.inventory.by_kind) kinds.insert(k);
  if (b)
    for (const auto& [k, c] : b->inventory.by_kind) kinds.insert(k);
  auto kind_cell = [](const TreeProbe& tree, Kind k) {
    auto it = tree.inventory.by_kind.find(k);
    if (it == tree.inventory.by_kind.end()) return std::string("-");
    return fmt::format("{} / {}", it->second.files, format_bytes(it->second.bytes));
  };
  for (Kind k : kinds)
    t.row(fmt::format("  {} (files / bytes)", kind_name(k)), kind_cell(a, k),
          b ? kind_cell(*b, k) : "");
  t.row("file size p50 / p95", fmt::format("{} / {}", format_bytes(uint64_t(a.inventory.size.p50)),
                                           format_bytes(uint64_t(a.inventory.size.p95))));
  t.row("megapixels p50 / p95 (sample)",
        fmt::format("{:.1f} / {:.1f}", a.inventory.megapixels.p50, a.inventory.megapixels.p95));
  if (a.inventory.jpeg.files > 0) {
    auto prog = [](const TreeProbe& x) {
      return fmt::format("{} of {}", x.inventory.jpeg.progressive, x.inventory.jpeg.files);
    };
    t.row("progressive JPEGs (sample)", prog(a), b ? prog(*b) : "");
    t.row("subsampling (sample)", subsampling_text(a.inventory.jpeg));
    t.row("estimated quality p50 (min)",
          fmt::format("q{:.0f} (q{:.0f})", a.inventory.jpeg.quality.p50,
                      a.inventory.jpeg.quality.min));
  }

  t.section(fmt::format("storage ({})", o.cold ? "cold" : "warm"));
  t.number("bytes read per sample pass", double(a.sample_bytes) / 1e6,
           opt([](auto& x) { return double(x.sample_bytes) / 1e6; }), "{:.1f}", " MB");
  t.row("open ms p50/p95/p99", ms3(a.storage.open_ms), b ? ms3(b->storage.open_ms) : "");
  t.row("read ms p50/p95/p99", ms3(a.storage.read_ms), b ? ms3(b->storage.read_ms) : "");
  t.number("read time, one stream", a.storage.read_ms.sum / 1000,
           opt([](auto& x) { return x.storage.read_ms.sum / 1000; }), "{:.2f}", " s");
  t.number("MB/s, one stream", a.storage.single_stream_mbps,
           opt([](auto& x) { return x.storage.single_stream_mbps; }), "{:.1f}");
  t.number(fmt::format("MB/s, {}", counted(o.workers, "reader")), a.storage.parallel_mbps,
           opt([](auto& x) { return x.storage.parallel_mbps; }), "{:.1f}");

  t.section(o.decoder == DecoderStyle::kPil ? "decode (full size, as Pillow holds it, one core)"
                                            : "decode (full-size packed RGB, one core)");
  std::set<std::string> labels;
  for (const auto& [l, f] : a.decode) labels.insert(l);
  if (b)
    for (const auto& [l, f] : b->decode) labels.insert(l);
  auto dec = [](const TreeProbe& x, const std::string& l) -> std::optional<DecodeFigures> {
    auto it = x.decode.find(l);
    if (it == x.decode.end()) return std::nullopt;
    return it->second;
  };
  for (const auto& l : labels) {
    auto da = dec(a, l);
    auto db = b ? dec(*b, l) : std::nullopt;
    auto files = [](const std::optional<DecodeFigures>& d) {
      return d ? fmt::format("{}{}", d->files,
                             d->failed ? fmt::format(" ({} failed)", d->failed) : "")
               : std::string("-");
    };
    t.row(fmt::format("{} files", l), files(da), b ? files(db) : "");
    t.row("  ms per file p50 / p95",
          da ? fmt::format("{:.1f} / {:.1f}", da->ms.p50, da->ms.p95) : "-",
          db ? fmt::format("{:.1f} / {:.1f}", db->ms.p50, db->ms.p95) : (b ? "-" : ""));
    t.row("  decode time, all files", da ? fmt::format("{:.2f} s", da->ms.sum / 1000) : "-",
          db ? fmt::format("{:.2f} s", db->ms.sum / 1000) : (b ? "-" : ""),
          da && db && da->ms.sum > 0 ? fmt::format("{:+.1f}%", (db->ms.sum / da->ms.sum - 1) * 100)
                                     : "");
    t.row("  MP/s per core", da ? fmt::format("{:.1f}", da->mp_per_s) : "-",
          db ? fmt::format("{:.1f}", db->mp_per_s) : (b ? "-" : ""));
  }

  t.number(fmt::format("decode slowdown, {} at once", o.workers), a.parallel_decode_slowdown,
           opt([](auto& x) { return x.parallel_decode_slowdown; }), "x{:.2f}");

  t.section(fmt::format("loader model ({} workers, batch {}, step {:g} ms)", o.workers, o.batch,
                        o.step_ms));
  t.row("batch ms p50 / p95",
        fmt::format("{:.1f} / {:.1f}", a.loader.batch_ms.p50, a.loader.batch_ms.p95),
        b ? fmt::format("{:.1f} / {:.1f}", b->loader.batch_ms.p50, b->loader.batch_ms.p95) : "");
  t.number("samples/s", a.loader.samples_per_s, opt([](auto& x) { return x.loader.samples_per_s; }),
           "{:.1f}");
  t.number("MB/s", a.loader.mb_per_s, opt([](auto& x) { return x.loader.mb_per_s; }), "{:.1f}");
  t.row("consumer waits", share(a.loader.consumer_wait), b ? share(b->loader.consumer_wait) : "");
  auto split = [](const LoaderFigures& l) {
    return fmt::format("{}/{}/{}/{}", share(l.open_share), share(l.read_share),
                       share(l.decode_share), share(l.idle_share));
  };
  t.row("worker open/read/decode/idle", split(a.loader), b ? split(b->loader) : "");
  if (o.bandwidth > 0)
    t.row("link busy", share(a.loader.link_busy), b ? share(b->loader.link_busy) : "");
  t.row("bound by", a.loader.bound, b ? b->loader.bound : "");
  t.row("one pass over all files", pass_text(a.pass_seconds), b ? pass_text(b->pass_seconds) : "",
        b && a.pass_seconds > 0
            ? fmt::format("{:+.1f}%", (b->pass_seconds / a.pass_seconds - 1) * 100)
            : "");

  if (!report.recommendations.empty()) {
    out << "\nrecommendations\n";
    for (const auto& r : report.recommendations) out << "  - " << r << "\n";
  }
  for (const auto& w : report.warnings) out << "warning: " << w << "\n";
}

}  // namespace lighten
