#include "formats/jpeg/scans.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/errors.h"
#include "formats/jpeg/estimate.h"
#include "formats/jpeg/markers.h"

namespace lighten::jpeg {
namespace {

struct Band {
  int ss, se, ah, al;
};
using AcPlan = std::vector<Band>;  // the AC scans of one component, in order

// Candidate AC progressions, most often best first on camera photos (the effort takes a
// prefix). Luma plan 1 and chroma plan 6 are what jpeg_simple_progression writes.
const std::vector<AcPlan> kLumaPlans = {
    {{1, 8, 0, 2}, {9, 63, 0, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 5, 0, 2}, {6, 63, 0, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 63, 0, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 2, 0, 1}, {3, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 2, 0, 0}, {3, 63, 0, 0}},
    {{1, 8, 0, 0}, {9, 63, 0, 0}},
    {{1, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 5, 0, 1}, {6, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 63, 0, 0}},
};
const std::vector<AcPlan> kChromaPlans = {
    {{1, 2, 0, 1}, {3, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 2, 0, 0}, {3, 63, 0, 0}},
    {{1, 8, 0, 0}, {9, 63, 0, 0}},
    {{1, 5, 0, 0}, {6, 63, 0, 0}},
    {{1, 63, 0, 0}},
    {{1, 63, 0, 2}, {1, 63, 2, 1}, {1, 63, 1, 0}},
    {{1, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 8, 0, 1}, {9, 63, 0, 1}, {1, 63, 1, 0}},
    {{1, 5, 0, 1}, {6, 63, 0, 1}, {1, 63, 1, 0}},
};
constexpr int kDcPlans = 2;  // 0: DC with one bit of successive approximation; 1: DC at once

constexpr int kMaxComponents = 4;
constexpr int kDcGroup = kMaxComponents;  // cost slot of the DC scans

struct Script {
  std::array<int, kMaxComponents> ac{};  // plan index per component
  int dc = 0;
  bool operator==(const Script&) const = default;
};

struct Built {
  std::vector<jpeg_scan_info> scans;
  std::vector<int> group;  // per scan: component index, or kDcGroup
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
      b.group.push_back(kDcGroup);
      return;
    }
    for (int ci = 0; ci < n; ++ci) {
      jpeg_scan_info scan{};
      scan.comps_in_scan = 1;
      scan.component_index[0] = ci;
      scan.Ah = ah;
      scan.Al = al;
      b.scans.push_back(scan);
      b.group.push_back(kDcGroup);
    }
  };
  dc_scans(0, dc_al);
  for (int ci = 0; ci < n; ++ci) {
    for (const Band& band : plans_for(ci, n)[s.ac[ci]]) {
      jpeg_scan_info scan{};
      scan.comps_in_scan = 1;
      scan.component_index[0] = ci;
      scan.Ss = band.ss;
      scan.Se = band.se;
      scan.Ah = band.ah;
      scan.Al = band.al;
      b.scans.push_back(scan);
      b.group.push_back(ci);
    }
  }
  if (dc_al > 0) dc_scans(dc_al, 0);
  return b;
}

// Bytes each scan costs in a written file: its DHT segments, SOS header and entropy data. Every
// progressive scan gets its own optimal tables, so a scan's cost does not depend on the others
// and the costs of different scripts can be combined per component.
std::vector<size_t> scan_costs(ByteView jpeg) {
  Layout layout = parse_layout(jpeg);
  std::vector<size_t> costs;
  size_t pending = 0;
  for (const Segment& s : layout.segments) {
    if (s.marker == kDht) pending += s.length;
    if (s.marker == kSos) {
      costs.push_back(pending + (s.entropy_end - s.offset));
      pending = 0;
    }
  }
  return costs;
}

int trials_for(int effort) {
  static constexpr int kTrials[10] = {1, 1, 1, 2, 3, 4, 5, 6, 8, 9};
  return kTrials[std::clamp(effort, 1, 9)];
}

// How many plans of each list the estimate tries.
size_t plans_for_effort(int effort) { return effort <= 3 ? 4 : effort <= 5 ? 6 : 9; }

bool out_of_time(const Context* c) { return c && c->out_of_time(); }

struct Best {
  Bytes jpeg;
  std::string detail;
  bool progressive = false;
  bool have = false;
  void offer(Bytes&& bytes, std::string what, bool prog) {
    if (have && bytes.size() >= jpeg.size()) return;  // ties keep the earlier candidate
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

// Writes `trials` paired scripts (luma plan i with chroma plan i), measures what each
// component's scans cost, then writes the script that combines each component's cheapest plan.
void search_progressive(CoefficientImage& image, int trials, unsigned restart,
                        const Context* context, Best& best) {
  const auto& info = image.info();
  const int n = info.num_components;
  if (n < 1 || n > kMaxComponents) return;
  trials = std::min<int>(trials, static_cast<int>(std::min(kLumaPlans.size(), kChromaPlans.size())));
  constexpr size_t kUnknown = SIZE_MAX;
  // cost[group][plan]
  std::vector<std::vector<size_t>> cost(kMaxComponents + 1,
                                        std::vector<size_t>(kLumaPlans.size(), kUnknown));
  size_t fixed = 0;  // bytes outside the scans (SOI, DQT, SOF, DRI, EOI)
  std::vector<Script> written;
  for (int t = 0; t < trials; ++t) {
    if (t > 0 && out_of_time(context)) break;
    Script s;
    s.dc = t % kDcPlans;
    for (int ci = 0; ci < n; ++ci) s.ac[ci] = t;
    Built b = build(s, info);
    WriteOptions o;
    o.scans = WriteOptions::Scans::kScript;
    o.script = b.scans;
    o.restart_interval = restart;
    Bytes out;
    try {
      out = write_coefficients(image, o);
    } catch (const FormatError&) {
      continue;  // a script this image's sampling cannot carry
    }
    std::vector<size_t> costs = scan_costs(out);
    if (costs.size() != b.scans.size()) continue;
    size_t sum = 0;
    std::vector<size_t> group_cost(kMaxComponents + 1, 0);
    for (size_t k = 0; k < costs.size(); ++k) {
      group_cost[b.group[k]] += costs[k];
      sum += costs[k];
    }
    fixed = out.size() - sum;
    cost[kDcGroup][s.dc] = group_cost[kDcGroup];
    for (int ci = 0; ci < n; ++ci) cost[ci][t] = group_cost[ci];
    written.push_back(s);
    best.offer(std::move(out),
               "progressive (script " + std::to_string(t + 1) + " of " +
                   std::to_string(trials + 1) + ")",
               true);
  }
  if (written.empty() || out_of_time(context)) return;
  Script combined;
  size_t predicted = fixed;
  auto cheapest = [&](int group) {
    int arg = 0;
    for (size_t p = 1; p < cost[group].size(); ++p)
      if (cost[group][p] < cost[group][arg]) arg = static_cast<int>(p);
    predicted += cost[group][arg];
    return arg;
  };
  combined.dc = cheapest(kDcGroup);
  for (int ci = 0; ci < n; ++ci) combined.ac[ci] = cheapest(ci);
  if (std::find(written.begin(), written.end(), combined) != written.end()) return;
  if (best.have && predicted >= best.jpeg.size()) return;
  Built b = build(combined, info);
  WriteOptions o;
  o.scans = WriteOptions::Scans::kScript;
  o.script = b.scans;
  o.restart_interval = restart;
  try {
    best.offer(write_coefficients(image, o),
               "progressive (script " + std::to_string(trials + 1) + " of " +
                   std::to_string(trials + 1) + ", combined)",
               true);
  } catch (const FormatError&) {
  }
}

// Estimates every candidate plan per component without writing (see estimate.h), then writes
// the script of the cheapest plans once.
void estimated_search(CoefficientImage& image, size_t plan_count, unsigned restart,
                      const Context* context, Best& best) {
  const auto& info = image.info();
  const int n = info.num_components;
  if (n < 1 || n > kMaxComponents) return;
  Script s;
  s.dc = 1;  // DC in one scan: successive approximation of DC almost never pays
  for (int ci = 0; ci < n; ++ci) {
    if (out_of_time(context)) return;
    ComponentIndex index(image, ci);
    const auto& plans = plans_for(ci, n);
    // Plans share scans (the refinement scans above all): estimate each band once.
    std::map<std::array<int, 4>, size_t> memo;
    auto cost_of = [&](const Band& b) {
      auto [it, fresh] = memo.try_emplace({b.ss, b.se, b.ah, b.al}, 0);
      if (fresh) it->second = index.estimate({b.ss, b.se, b.ah, b.al}, restart);
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
  }
  Built b = build(s, info);
  WriteOptions o;
  o.scans = WriteOptions::Scans::kScript;
  o.script = b.scans;
  o.restart_interval = restart;
  std::string what = "progressive (estimated script: luma plan " + std::to_string(s.ac[0] + 1);
  if (n == 3) what += ", chroma plans " + std::to_string(s.ac[1] + 1) + "/" + std::to_string(s.ac[2] + 1);
  what += ")";
  try {
    best.offer(write_coefficients(image, o), what, true);
  } catch (const FormatError&) {
  }
}

}  // namespace

ScanResult choose_scans(CoefficientImage& image, ScanMode mode, int effort,
                        unsigned restart_interval, const Context* context) {
  const bool input_progressive = image.info().progressive_mode;
  Best best;
  WriteOptions o;
  o.restart_interval = restart_interval;
  if (mode == ScanMode::kBaseline || (mode == ScanMode::kKeep && !input_progressive) ||
      mode == ScanMode::kSmallest) {
    o.scans = WriteOptions::Scans::kSequential;
    best.offer(write_coefficients(image, o), "huffman optimised, baseline", false);
    if (mode != ScanMode::kSmallest) return finish(std::move(best));
  }
  if (mode == ScanMode::kKeep) {
    o.scans = WriteOptions::Scans::kSimpleProgressive;
    best.offer(write_coefficients(image, o), "huffman optimised, progressive", true);
    return finish(std::move(best));
  }
  if (out_of_time(context) && best.have) return finish(std::move(best));
  if (effort <= 2) {
    o.scans = WriteOptions::Scans::kSimpleProgressive;
    best.offer(write_coefficients(image, o), "huffman optimised, progressive", true);
    return finish(std::move(best));
  }
  estimated_search(image, plans_for_effort(effort), restart_interval, context, best);
  // The highest efforts also write paired trial scripts and measure each scan's real cost.
  if (effort >= 8 && !out_of_time(context))
    search_progressive(image, trials_for(effort), restart_interval, context, best);
  if (!best.have) {  // no script fitted: fall back to libjpeg's own progression
    o.scans = WriteOptions::Scans::kSimpleProgressive;
    best.offer(write_coefficients(image, o), "huffman optimised, progressive", true);
  }
  return finish(std::move(best));
}

}  // namespace lighten::jpeg
