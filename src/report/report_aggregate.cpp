// Folding files into the report's aggregates: totals per kind, files left alone by reason with
// the largest as examples, a savings histogram, the slowest files and a sampled scatter. Every
// list is bounded, so a journal of millions of rows makes a page of the same size as a small one.
#include <xxhash.h>

#include <algorithm>

#include "core/worst_quality.h"
#include "lighten/report.h"

namespace lighten {
namespace {

ReportExample example_of(const ReportFile& f) {
  return {std::string(f.path),    f.kind,         f.action,      f.reason,
          std::string(f.message), f.bytes_before, f.bytes_after, f.ms};
}

// Heap orders: the heap's top is the entry to drop first. Ties fall to the path, so the
// result does not depend on the order rows arrive in.
bool larger_first(const ReportExample& a, const ReportExample& b) {
  if (a.bytes_before != b.bytes_before) return a.bytes_before > b.bytes_before;
  return a.path < b.path;
}
bool slower_first(const ReportExample& a, const ReportExample& b) {
  if (a.ms != b.ms) return a.ms > b.ms;
  return a.path < b.path;
}

// Keeps the `limit` entries that sort first under `before`, as a heap whose top sorts last.
template <typename Before>
void keep_best(std::vector<ReportExample>& heap, size_t limit, const ReportFile& f,
               const ReportExample& probe, Before before) {
  if (limit == 0) return;
  if (heap.size() < limit) {
    heap.push_back(example_of(f));
    std::push_heap(heap.begin(), heap.end(), before);
  } else if (before(probe, heap.front())) {
    std::pop_heap(heap.begin(), heap.end(), before);
    heap.back() = example_of(f);
    std::push_heap(heap.begin(), heap.end(), before);
  }
}

void add_to(ReportTotals& t, const ReportFile& f) {
  ++t.files;
  if (f.action == Action::kReplaced) ++t.optimized;
  t.bytes_before += f.bytes_before;
  t.bytes_after += f.bytes_after;
  t.ms += f.ms;
  if (f.ssimulacra2) {
    t.score_min = t.scored == 0 ? *f.ssimulacra2 : std::min(t.score_min, *f.ssimulacra2);
    ++t.scored;
    t.score_sum += *f.ssimulacra2;
  }
}

}  // namespace

std::string_view reason_advice(Reason reason, bool journaled) {
  switch (reason) {
    case Reason::kOptimized:
      return "";
    case Reason::kNoGain:
      return "Nothing to do: no output was smaller by the minimum gain; the file is already tight.";
    case Reason::kUnsupportedKind:
      return "Nothing to do: lighten has no optimiser for this kind yet; the file is kept as is.";
    case Reason::kUnsupportedVariant:
      return "Nothing to do: this variant (named in the message) cannot be carried safely yet.";
    case Reason::kCorrupt:
      return "Check the file: it does not parse, so other readers may fail on it too; restore "
             "it from a good copy.";
    case Reason::kTruncated:
      return "Check the file: it ends early (an interrupted copy?); restore it from its source.";
    case Reason::kEncrypted:
      return "Nothing to do: encrypted content cannot be optimised without the key.";
    case Reason::kSigned:
      return "Nothing to do: rewriting the file would break its signature.";
    case Reason::kVerifyFailed:
      return "The original is kept. Please report it with `lighten info FILE` so the optimiser "
             "can be fixed.";
    case Reason::kLimitExceeded:
      return "Raise the limit named in the message (--max-input-size, --max-pixels, --max-depth, "
             "--time-budget, --memory-budget) and run again to include it.";
    case Reason::kAlreadyOptimized:
      return "Nothing to do: an earlier run already optimised it under this policy.";
    case Reason::kModeNotAvailable:
      return "Choose another --mode, or use a build with the library the message names.";
    case Reason::kInternalError:
      return "The original is kept. This is a bug in lighten: please report it with the file "
             "or `lighten info FILE`.";
    case Reason::kEmpty:
      return "Nothing to do: the file is empty.";
    case Reason::kIoError:
      return journaled ? "Fix the cause in the message (permissions, free space, a vanished "
                         "mount) and run again: finished files are skipped."
                       : "Fix the cause in the message (permissions, free space, a vanished "
                         "mount) and run again.";
    case Reason::kSkipped:
      return "Read the message: the file changed while it was read (run again), or this run "
             "was set not to take it (--shard, --plain-zip, symbolic links).";
    case Reason::kMisnamed:
      return "Check the file: its extension names another kind than its content (readers that "
             "go by the name may fail on it); rename it to its kind and run again.";
  }
  return "";
}

std::optional<double> ssimulacra2_from_detail(std::string_view detail) {
  // A document's or a video's worst picture or frame, in the engine's words.
  if (const std::optional<double> worst = worst_score_in(detail)) return worst;
  // Only requantised outputs carry a score; "lossless only (no requantisation met
  // SSIMULACRA2 85.0 ...)" names the floor, not a score, and "lossless only (requantised image
  // data would be ...)" none.
  if (detail.starts_with("lossless only")) return std::nullopt;
  const size_t requantised = detail.find("requantised");
  if (requantised == std::string_view::npos) return std::nullopt;
  constexpr std::string_view kLabel = "SSIMULACRA2 ";
  const size_t at = detail.find(kLabel, requantised);
  if (at == std::string_view::npos) return std::nullopt;
  return number_at(detail, at + kLabel.size());
}

ReportAggregator::ReportAggregator(ReportLimits limits) : limits_(limits) {}

void ReportAggregator::add(const ReportFile& f) {
  add_to(summary_.total, f);
  add_to(summary_.kinds[f.kind], f);
  // Cheap probes for the heaps: only their sort keys matter.
  ReportExample probe;
  probe.path = f.path;
  probe.bytes_before = f.bytes_before;
  probe.ms = f.ms;

  if (f.action == Action::kKept) {
    ReportReasonGroup& group = summary_.left_alone[f.reason];
    ++group.files;
    group.bytes += f.bytes_before;
    keep_best(group.examples, limits_.examples_per_reason, f, probe, larger_first);
  } else if (f.bytes_before > 0 && f.bytes_after < f.bytes_before) {
    const double saved = double(f.bytes_before - f.bytes_after) / double(f.bytes_before);
    const size_t bin = std::min(kSavingsBins - 1, size_t(saved * double(kSavingsBins)));
    ++summary_.savings_bins[bin];
  }
  keep_best(summary_.slowest, limits_.slowest, f, probe, slower_first);

  if (f.ssimulacra2 && limits_.scatter_points > 0) {
    // Priority sampling by a hash of the path: the same files are drawn whatever the order or
    // the sharding of the runs, and the sample is uniform over scored files.
    const uint64_t priority = XXH3_64bits(f.path.data(), f.path.size());
    auto by_priority = [](const Sampled& a, const Sampled& b) { return a.priority < b.priority; };
    if (scatter_heap_.size() >= limits_.scatter_points) {
      if (priority >= scatter_heap_.front().priority) return;
      std::pop_heap(scatter_heap_.begin(), scatter_heap_.end(), by_priority);
      scatter_heap_.pop_back();
    }
    scatter_heap_.push_back({priority,
                             {*f.ssimulacra2, f.bytes_before,
                              f.bytes_after < f.bytes_before ? f.bytes_before - f.bytes_after : 0,
                              f.kind, std::string(f.path)}});
    std::push_heap(scatter_heap_.begin(), scatter_heap_.end(), by_priority);
  }
}

ReportSummary ReportAggregator::finish() const {
  ReportSummary out = summary_;
  for (auto& [reason, group] : out.left_alone)
    std::sort(group.examples.begin(), group.examples.end(), larger_first);
  std::sort(out.slowest.begin(), out.slowest.end(), slower_first);
  out.scatter.clear();
  out.scatter.reserve(scatter_heap_.size());
  for (const Sampled& s : scatter_heap_) out.scatter.push_back(s.point);
  std::sort(
      out.scatter.begin(), out.scatter.end(),
      [](const ReportScatterPoint& a, const ReportScatterPoint& b) { return a.path < b.path; });
  return out;
}

}  // namespace lighten
