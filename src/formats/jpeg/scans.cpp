#include "formats/jpeg/scans.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/errors.h"
#include "formats/jpeg/estimate.h"
#include "formats/jpeg/huffman_stats.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/restarts.h"

namespace lighten::jpeg {
namespace {

struct Band {
  int ss, se, ah, al;
};
using AcPlan = std::vector<Band>;  // the AC scans of one component, in order

// Candidate AC progressions, most often best first on camera photos (the effort takes a
// prefix). Luma plan 11 and chroma plan 7 are what jpeg_simple_progression writes.
const std::vector<AcPlan> kLumaPlans = {
    {{1, 2, 0, 2}, {3, 8, 0, 2}, {9, 63, 0, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 2, 0, 3}, {3, 63, 0, 3}, {1, 63, 3, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 2, 0, 0}, {3, 8, 0, 0}, {9, 63, 0, 0}},
    {{1, 2, 0, 2}, {3, 63, 0, 2}, {1, 63, 2, 1}, {1, 8, 1, 0}, {9, 63, 1, 0}},
    {{1, 2, 0, 2}, {3, 63, 0, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 2, 0, 1}, {3, 8, 0, 1}, {9, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 2, 0, 0}, {3, 5, 0, 0}, {6, 14, 0, 0}, {15, 63, 0, 0}},
    {{1, 63, 0, 3}, {1, 63, 3, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 8, 0, 3}, {9, 63, 0, 3}, {1, 63, 3, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 2, 0, 1}, {3, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 8, 0, 2}, {9, 63, 0, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 5, 0, 2}, {6, 63, 0, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 63, 0, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 2, 0, 0}, {3, 63, 0, 0}},
    {{1, 8, 0, 0}, {9, 63, 0, 0}},
    {{1, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 5, 0, 1}, {6, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 63, 0, 0}},
    {{1, 5, 0, 3}, {6, 63, 0, 3}, {1, 63, 3, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 2, 0, 2},
     {3, 8, 0, 2},
     {9, 63, 0, 2},
     {1, 8, 2, 1},
     {9, 63, 2, 1},
     {1, 8, 1, 0},
     {9, 63, 1, 0}},
};
const std::vector<AcPlan> kChromaPlans = {
    {{1, 1, 0, 0}, {2, 2, 0, 0}, {3, 8, 0, 0}, {9, 63, 0, 0}},
    {{1, 2, 0, 0}, {3, 5, 0, 0}, {6, 14, 0, 0}, {15, 63, 0, 0}},
    {{1, 2, 0, 0}, {3, 8, 0, 0}, {9, 63, 0, 0}},
    {{1, 63, 0, 0}},
    {{1, 2, 0, 1}, {3, 63, 0, 1}, {1, 8, 1, 0}, {9, 63, 1, 0}},
    {{1, 2, 0, 0}, {3, 63, 0, 0}},
    {{1, 2, 0, 1}, {3, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 2, 0, 2}, {3, 63, 0, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 63, 0, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 2, 0, 1}, {3, 8, 0, 1}, {9, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 2, 0, 0}, {3, 14, 0, 0}, {15, 63, 0, 0}},
    {{1, 2, 0, 0}, {3, 8, 0, 0}, {9, 20, 0, 0}, {21, 63, 0, 0}},
    {{1, 8, 0, 0}, {9, 63, 0, 0}},
    {{1, 5, 0, 0}, {6, 63, 0, 0}},
    {{1, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 8, 0, 1}, {9, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 5, 0, 1}, {6, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 1, 0, 0}, {2, 63, 0, 0}},
    {{1, 63, 0, 3}, {1, 63, 3, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 5, 0, 2}, {6, 63, 0, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
};

constexpr int kMaxComponents = 4;

struct Script {
  std::array<int, kMaxComponents> ac{};       // plan index per component
  std::array<AcPlan, kMaxComponents> custom;  // when not empty, replaces the plan
  int dc = 0;
};

struct Built {
  std::vector<jpeg_scan_info> scans;
};

bool uses_luma_plans(int ci, int ncomps) { return ci == 0 || ncomps == 4; }
const std::vector<AcPlan>& plans_for(int ci, int ncomps) {
  return uses_luma_plans(ci, ncomps) ? kLumaPlans : kChromaPlans;
}

Built build(const Script& s, const jpeg_decompress_struct& info) {
  const int n = info.num_components;
  int blocks = 0;
  for (int ci = 0; ci < n; ++ci)
    blocks += info.comp_info[ci].h_samp_factor * info.comp_info[ci].v_samp_factor;
  const bool interleave = n <= MAX_COMPS_IN_SCAN && blocks <= C_MAX_BLOCKS_IN_MCU;
  const int dc_al = s.dc == 0 ? 1 : 0;
  Built b;
  auto dc_scans = [&](int ah, int al) {
    if (interleave) {
      jpeg_scan_info scan{};
      scan.comps_in_scan = n;
      for (int ci = 0; ci < n; ++ci) scan.component_index[ci] = ci;
      scan.Ah = ah;
      scan.Al = al;
      b.scans.push_back(scan);
      return;
    }
    for (int ci = 0; ci < n; ++ci) {
      jpeg_scan_info scan{};
      scan.comps_in_scan = 1;
      scan.component_index[0] = ci;
      scan.Ah = ah;
      scan.Al = al;
      b.scans.push_back(scan);
    }
  };
  dc_scans(0, dc_al);
  for (int ci = 0; ci < n; ++ci) {
    const AcPlan& plan = s.custom[ci].empty() ? plans_for(ci, n)[s.ac[ci]] : s.custom[ci];
    for (const Band& band : plan) {
      jpeg_scan_info scan{};
      scan.comps_in_scan = 1;
      scan.component_index[0] = ci;
      scan.Ss = band.ss;
      scan.Se = band.se;
      scan.Ah = band.ah;
      scan.Al = band.al;
      b.scans.push_back(scan);
    }
  }
  if (dc_al > 0) dc_scans(dc_al, 0);
  return b;
}

// What each effort level searches: plans from the lists, the band search, and the share of
// block rows the estimates read (the ranking needs a sample, not every block).
struct SearchEffort {
  size_t plans;
  bool partition;
  unsigned row_step;
};
constexpr size_t kMinSampleBlocks = 4096;

SearchEffort search_effort(int effort) {
  static constexpr SearchEffort kLevels[10] = {
      {0, false, 1}, {0, false, 1}, {0, false, 1}, {4, false, 2}, {6, false, 2},
      {4, true, 32}, {8, true, 16}, {12, true, 8}, {20, true, 4}, {20, true, 2},
  };
  return kLevels[std::clamp(effort, 1, 9)];
}

bool out_of_time(const Context* c) { return c && c->out_of_time(); }

struct Best {
  Bytes jpeg;
  std::string detail;
  bool progressive = false;
  bool have = false;
  // Ties keep the earlier candidate, unless this one `wins_ties` (baseline does).
  void offer(Bytes&& bytes, std::string what, bool prog, bool wins_ties = false) {
    if (have && (wins_ties ? bytes.size() > jpeg.size() : bytes.size() >= jpeg.size())) return;
    jpeg = std::move(bytes);
    detail = std::move(what);
    progressive = prog;
    have = true;
  }
};

ScanResult finish(Best&& best) {
  if (!best.have) throw FormatError(Reason::kLimitExceeded, 0, "time budget spent");
  return {std::move(best.jpeg), std::move(best.detail), best.progressive};
}

// The cheapest progression over freely chosen bands: for each successive-approximation depth
// Al, the best split of AC 1..63 into first scans (boundaries from kFirstPoints) plus the best
// split of each refinement pass (kRefinePoints). Scans are costed independently, so each
// pass is a shortest path over its boundaries.
constexpr int kFirstPoints[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                12, 14, 16, 18, 20, 23, 26, 30, 35, 42, 64};
constexpr int kMaxFirstAl = 3;

template <class CostFn>
std::pair<size_t, AcPlan> best_partitioned_plan(CostFn& cost_of) {
  static constexpr int kRefinePoints[] = {1, 2, 3, 4, 6, 9, 12, 16, 24, 32, 64};
  auto split = [&](const int* points, int count, int ah, int al) {
    std::vector<size_t> best(size_t(count), SIZE_MAX);
    std::vector<int> from(size_t(count), 0);
    best[0] = 0;
    for (int j = 1; j < count; ++j)
      for (int i = 0; i < j; ++i) {
        size_t c = best[size_t(i)] + cost_of(Band{points[i], points[j] - 1, ah, al});
        if (c < best[size_t(j)]) {
          best[size_t(j)] = c;
          from[size_t(j)] = i;
        }
      }
    AcPlan bands;
    for (int j = count - 1; j > 0; j = from[size_t(j)])
      bands.insert(bands.begin(), Band{points[from[size_t(j)]], points[j] - 1, ah, al});
    return std::pair{best[size_t(count - 1)], bands};
  };
  size_t best_cost = SIZE_MAX;
  AcPlan best_plan;
  for (int al = 0; al <= kMaxFirstAl; ++al) {
    auto [cost, plan] = split(kFirstPoints, int(std::size(kFirstPoints)), 0, al);
    for (int level = al; level > 0; --level) {
      auto [c, bands] = split(kRefinePoints, int(std::size(kRefinePoints)), level, level - 1);
      cost += c;
      plan.insert(plan.end(), bands.begin(), bands.end());
    }
    if (cost < best_cost) {
      best_cost = cost;
      best_plan = std::move(plan);
    }
  }
  return {best_cost, best_plan};
}

// Estimates every candidate plan per component without writing (see estimate.h), then writes
// the script of the cheapest plans once.
void estimated_search(CoefficientImage& image, size_t plan_count, bool partition, unsigned row_step,
                      unsigned restart, const Context* context, Best& best) {
  const auto& info = image.info();
  const int n = info.num_components;
  if (n < 1 || n > kMaxComponents) return;
  bool custom = false;
  Script s;
  s.dc = 1;  // DC in one scan: successive approximation of DC almost never pays
  for (int ci = 0; ci < n; ++ci) {
    if (out_of_time(context)) return;
    // Sample rows only as far as at least kMinSampleBlocks blocks remain.
    const auto& comp = info.comp_info[ci];
    const size_t blocks = size_t(comp.width_in_blocks) * comp.height_in_blocks;
    const unsigned step = static_cast<unsigned>(
        std::clamp<size_t>(blocks / kMinSampleBlocks, 1, std::max(1u, row_step)));
    ComponentIndex index(image, ci, step);
    // Baseline inputs get their restart density back in each scan (see restarts.h).
    jpeg_scan_info own{};
    own.comps_in_scan = 1;
    own.component_index[0] = ci;
    const unsigned band_restart =
        info.progressive_mode ? restart : matched_restart_interval(info, own, restart);
    const auto& plans = plans_for(ci, n);
    // Plans share scans (the refinement scans above all): estimate each band once.
    std::map<std::array<int, 4>, size_t> memo;
    auto cost_of = [&](const Band& b) {
      auto [it, fresh] = memo.try_emplace({b.ss, b.se, b.ah, b.al}, 0);
      if (fresh) it->second = index.estimate({b.ss, b.se, b.ah, b.al}, band_restart);
      return it->second;
    };
    size_t best_cost = SIZE_MAX;
    const size_t count = std::min(plans.size(), plan_count);
    for (size_t p = 0; p < count; ++p) {
      size_t cost = 0;
      for (const Band& b : plans[p]) cost += cost_of(b);
      if (cost < best_cost) {  // ties keep the earlier plan
        best_cost = cost;
        s.ac[ci] = static_cast<int>(p);
      }
    }
    if (partition) {
      // Every first scan the band search may cost, one pass per start (see estimate.h).
      for (size_t i = 0; i + 1 < std::size(kFirstPoints); ++i) {
        const int ss = kFirstPoints[i];
        std::vector<int> ends;
        for (size_t j = i + 1; j < std::size(kFirstPoints); ++j)
          ends.push_back(kFirstPoints[j] - 1);
        for (int al = 0; al <= kMaxFirstAl; ++al) {
          const std::vector<size_t> costs = index.estimate_first_scans(ss, ends, al, band_restart);
          for (size_t j = 0; j < ends.size(); ++j) memo.try_emplace({ss, ends[j], 0, al}, costs[j]);
        }
      }
      auto [cost, plan] = best_partitioned_plan(cost_of);
      if (cost < best_cost) {
        s.custom[ci] = std::move(plan);
        custom = true;
      }
    }
  }
  Built b = build(s, info);
  WriteOptions o;
  o.scans = WriteOptions::Scans::kScript;
  o.script = b.scans;
  o.restart_interval = restart;
  const std::string what = "progressive (" + std::to_string(b.scans.size()) +
                           (custom ? " scans, band search)" : " scans, estimated script)");
  Bytes written;
  try {
    written = write_coefficients(image, o);
  } catch (const FormatError&) {
    return;
  }
  std::optional<Bytes> matched;
  if (restart > 0 && !out_of_time(context)) {
    try {
      matched = write_with_matched_restarts(image, b.scans, restart, written);
    } catch (const FormatError&) {
    }
  }
  best.offer(std::move(written), what, true);
  if (matched) best.offer(std::move(*matched), what + ", restart density of the input", true);
}

// Whether libjpeg can put every component in one scan: at most 10 blocks an MCU (a frame that
// samples luma 4x4 has 16, written in scans of one component each, as its writer did).
bool interleavable(const jpeg_decompress_struct& info) {
  int blocks = 0;
  for (int ci = 0; ci < info.num_components; ++ci)
    blocks += info.comp_info[ci].h_samp_factor * info.comp_info[ci].v_samp_factor;
  return info.num_components <= MAX_COMPS_IN_SCAN && blocks <= C_MAX_BLOCKS_IN_MCU;
}

// A scan of one component over the band [ss, se].
jpeg_scan_info component_scan(int ci, int ss, int se) {
  jpeg_scan_info scan{};
  scan.comps_in_scan = 1;
  scan.component_index[0] = ci;
  scan.Ss = ss;
  scan.Se = se;
  return scan;
}

}  // namespace

ScanResult choose_scans(CoefficientImage& image, ScanMode mode, int effort,
                        unsigned restart_interval, const Context* context) {
  Best best;
  WriteOptions o;
  o.restart_interval = restart_interval;
  const bool interleaved = interleavable(image.info());
  auto write_baseline = [&](const SymbolCounts* counts) {
    o.scans = interleaved ? WriteOptions::Scans::kSequential : WriteOptions::Scans::kScript;
    o.script.clear();
    for (int ci = 0; !interleaved && ci < image.info().num_components; ++ci)
      o.script.push_back(component_scan(ci, 0, 63));
    o.counts = interleaved ? counts : nullptr;
    best.offer(write_coefficients(image, o), "huffman optimised, baseline", false, true);
  };
  // libjpeg's own progression, or where it cannot interleave the DC scan, the same bands in
  // scans of one component.
  auto write_simple_progressive = [&] {
    o.scans = interleaved ? WriteOptions::Scans::kSimpleProgressive : WriteOptions::Scans::kScript;
    o.script.clear();
    for (int ci = 0; !interleaved && ci < image.info().num_components; ++ci)
      o.script.push_back(component_scan(ci, 0, 0));
    for (int ci = 0; !interleaved && ci < image.info().num_components; ++ci)
      o.script.push_back(component_scan(ci, 1, 63));
    o.counts = nullptr;
    best.offer(write_coefficients(image, o), "huffman optimised, progressive", true);
  };
  if (mode == ScanMode::kBaseline || (mode == ScanMode::kKeep && !image.info().progressive_mode)) {
    write_baseline(nullptr);
    return finish(std::move(best));
  }
  if (mode == ScanMode::kKeep) {
    write_simple_progressive();
    return finish(std::move(best));
  }
  // Progressive or smallest. Smallest also weighs baseline, but writes it only where its
  // symbol counts leave it a chance against the progressive candidates.
  std::optional<SymbolCounts> counts;
  if (mode == ScanMode::kSmallest) counts = count_sequential_symbols(image, restart_interval);
  if (effort > 2) {
    const SearchEffort level = search_effort(effort);
    estimated_search(image, level.plans, level.partition, level.row_step, restart_interval, context,
                     best);
  }
  // No script fitted (or effort asked for none): libjpeg's own progression.
  if (!best.have && !(mode == ScanMode::kSmallest && out_of_time(context)))
    write_simple_progressive();
  if (mode == ScanMode::kSmallest &&
      (!best.have || !counts || sequential_bytes_lower_bound(*counts) < best.jpeg.size())) {
    try {
      write_baseline(counts ? &*counts : nullptr);
    } catch (const FormatError& e) {
      // A layout one sequential scan cannot hold: the progressive candidate stands.
      if (!best.have || e.reason() != Reason::kUnsupportedVariant) throw;
    }
  }
  return finish(std::move(best));
}

}  // namespace lighten::jpeg
