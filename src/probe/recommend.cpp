#include "probe/recommend.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

namespace lighten::probe {
namespace {

std::string percent(double share) { return fmt::format("{:.0f} %", share * 100); }

std::string duration(double seconds) {
  if (seconds < 120) return fmt::format("{:.1f} s", seconds);
  if (seconds < 7200) return fmt::format("{:.1f} min", seconds / 60);
  if (seconds < 172800) return fmt::format("{:.1f} h", seconds / 3600);
  return fmt::format("{:.1f} days", seconds / 86400);
}

std::string link_text(const ProbeOptions& o) {
  if (o.bandwidth <= 0) return "on this storage";
  return fmt::format("at {}{}", format_bandwidth(o.bandwidth),
                     o.latency_ms > 0 ? fmt::format(" and {:g} ms per open", o.latency_ms) : "");
}

// Decode time per megapixel of one label, 0 when it was not measured.
double ms_per_mp(const TreeProbe& t, const std::string& label) {
  auto it = t.decode.find(label);
  if (it == t.decode.end() || it->second.mp_per_s <= 0) return 0;
  return 1000.0 / it->second.mp_per_s;
}

double modelled_rate(std::span<const SampleTiming> samples, LoaderConfig config) {
  return simulate_loader(samples, config).figures.samples_per_s;
}

}  // namespace

std::vector<std::string> recommend(const ProbeReport& report,
                                   std::span<const SampleTiming> original,
                                   std::span<const SampleTiming> optimised) {
  std::vector<std::string> out;
  const ProbeOptions& o = report.options;
  const TreeProbe& t = report.original;
  const LoaderFigures& l = t.loader;
  const double cores = effective_cores(t, o, report.cores);
  const LoaderConfig config = loader_config(o, cores, original);
  const std::string where = link_text(o);
  // With no consumer step (--step-ms 0) the consumer always waits; saying so tells nothing.
  const std::string wait_clause =
      o.step_ms > 0 ? fmt::format(", and the {:g} ms step waits for data {} of the time", o.step_ms,
                                  percent(l.consumer_wait))
                    : "";

  if (l.bound == "consumer") {
    out.push_back(fmt::format(
        "Consumer-bound {}: the {:g} ms step per batch limits the run and waits for data only {} "
        "of the time; faster storage or smaller files would not speed up this job.",
        where, o.step_ms, percent(l.consumer_wait)));
  } else if (l.bound == "decode") {
    std::string more;
    if (o.workers < report.cores) {
      LoaderConfig wider = config;
      wider.workers = report.cores;
      // The share of each core this machine gave the measured workers, for every core.
      wider.cores = report.cores * std::min(1.0, cores / o.workers);
      more =
          fmt::format(" {} workers (one per core) would give {:.1f} samples/s instead of {:.1f}.",
                      report.cores, modelled_rate(original, wider), l.samples_per_s);
    }
    out.push_back(fmt::format(
        "Decode-bound {}: workers spend {} of their time decoding{}; smaller files alone will "
        "not help much.{} Keep baseline JPEG for training data.",
        where, percent(l.decode_share), wait_clause, more));
  } else if (l.bound == "read" || l.bound == "open") {
    const bool open = l.bound == "open";
    std::string what_if;
    if (!open && optimised.empty()) {
      std::vector<SampleTiming> smaller(original.begin(), original.end());
      for (auto& s : smaller) {
        s.bytes = uint64_t(double(s.bytes) * 0.7);
        s.read_ms *= 0.7;
      }
      what_if = fmt::format(
          " Files 30 % smaller would raise the modelled loader from {:.1f} to {:.1f} samples/s "
          "(probe the output of `lighten optimize` with --compare for the real figure).",
          l.samples_per_s, modelled_rate(smaller, config));
    }
    out.push_back(fmt::format(
        "{} {}: workers spend {} of their time {}{}{}.{}",
        open ? "Open-latency-bound" : "I/O-bound", where,
        percent(open ? l.open_share : l.read_share), open ? "opening files" : "reading",
        l.link_busy > 0 ? fmt::format(" (the link is busy {})", percent(l.link_busy)) : "",
        wait_clause, what_if));
    if (open)
      out.push_back(fmt::format(
          "Opens take {:.2f} ms at p50 and {:.2f} ms at p99: more workers or fewer, larger "
          "files (shards) would help more than smaller ones.",
          t.storage.open_ms.p50, t.storage.open_ms.p99));
  }

  const double base = ms_per_mp(t, "jpeg-baseline");
  const double prog = ms_per_mp(t, "jpeg-progressive");
  if (base > 0 && prog > 0)
    out.push_back(fmt::format(
        "Progressive JPEGs decode at {:.1f} ms per megapixel against {:.1f} ms for baseline "
        "({:+.0f} %); {} of the sampled JPEGs are progressive.",
        prog, base, (prog / base - 1) * 100,
        percent(double(t.inventory.jpeg.progressive) /
                double(std::max<uint64_t>(1, t.inventory.jpeg.files)))));

  if (report.optimised) {
    const TreeProbe& n = *report.optimised;
    const double saved = 1 - double(n.sample_bytes) / double(std::max<uint64_t>(1, t.sample_bytes));
    const double decode_before = [&] {
      double s = 0;
      for (auto& [k, f] : t.decode) s += f.ms.sum;
      return s;
    }();
    double decode_after = 0;
    for (auto& [k, f] : n.decode) decode_after += f.ms.sum;
    const double decode_change = decode_before > 0 ? decode_after / decode_before - 1 : 0;
    const double speedup = n.loader.samples_per_s / std::max(l.samples_per_s, 1e-9) - 1;
    // With no consumer step the consumer always waits; its wait says nothing then.
    const std::string wait =
        o.step_ms > 0 ? fmt::format("the consumer's wait goes from {} to {}, ",
                                    percent(l.consumer_wait), percent(n.loader.consumer_wait))
                      : "";
    out.push_back(fmt::format(
        "lighten's output moves {} fewer bytes {} and changes the loader from {:.1f} to {:.1f} "
        "samples/s ({:+.0f} %); {}one pass over the data set goes from {} to {}.",
        percent(saved), where, l.samples_per_s, n.loader.samples_per_s, speedup * 100, wait,
        duration(t.pass_seconds), duration(n.pass_seconds)));
    // Only more progressive files make decoding reliably slower; smaller changes are within
    // what a shared machine's noise does to paired decodes (about 10 %).
    if (decode_change > 0.05 && n.inventory.jpeg.progressive > t.inventory.jpeg.progressive)
      out.push_back(fmt::format(
          "The optimised files take {:+.0f} % decode time (progressive JPEGs: {} before, {} "
          "after); optimise with --jpeg-scans baseline for training data.",
          decode_change * 100, t.inventory.jpeg.progressive, n.inventory.jpeg.progressive));
    if ((l.bound == "decode" || l.bound == "consumer") && std::abs(speedup) < 0.05)
      out.push_back(
          "Here the smaller files save storage and transfer, not training time: the loader is not "
          "waiting on bytes.");
  }
  if (t.pass_seconds > 0)
    out.push_back(
        fmt::format("At the modelled {:.1f} samples/s, one pass over all {} files takes {}.",
                    l.samples_per_s, t.inventory.files, duration(t.pass_seconds)));
  return out;
}

}  // namespace lighten::probe
