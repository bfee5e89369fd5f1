#include "formats/jpeg/restarts.h"

#include <algorithm>
#include <functional>
#include <map>

#include "core/errors.h"

namespace lighten::jpeg {
namespace {

// One scan of a file libjpeg wrote: its table segments (DHT) and its SOS with the entropy-coded
// data; DRI segments are left out (the splice writes its own).
struct ScanUnit {
  Bytes tables;
  Bytes scan;
};

struct SplitFile {
  Bytes header;  // SOI up to the first scan's segments
  std::vector<ScanUnit> scans;
};

[[noreturn]] void bad_output() {
  throw FormatError(Reason::kInternalError, 0, "unexpected libjpeg output while splicing scans");
}

bool is_rst(uint8_t m) { return m >= 0xD0 && m <= 0xD7; }

// Splits libjpeg's own output: SOI, DQT, SOF, then per scan DHT... [DRI] SOS data, then EOI.
SplitFile split_scans(const Bytes& jpeg) {
  SplitFile out;
  size_t pos = 2;
  bool in_scans = false;
  ScanUnit unit;
  for (;;) {
    if (pos + 2 > jpeg.size() || jpeg[pos] != 0xFF) bad_output();
    const uint8_t marker = jpeg[pos + 1];
    if (marker == 0xD9) break;
    if (pos + 4 > jpeg.size()) bad_output();
    const size_t end = pos + 2 + (size_t(jpeg[pos + 2]) << 8 | jpeg[pos + 3]);
    if (end > jpeg.size()) bad_output();
    const bool scan_segment = marker == 0xC4 || marker == 0xDD || marker == 0xDA;
    if (!in_scans && !scan_segment) {
      out.header.insert(out.header.end(), jpeg.begin() + long(pos), jpeg.begin() + long(end));
      pos = end;
      continue;
    }
    in_scans = true;
    if (marker == 0xC4) {
      unit.tables.insert(unit.tables.end(), jpeg.begin() + long(pos), jpeg.begin() + long(end));
    } else if (marker == 0xDA) {
      size_t data_end = end;  // entropy-coded data runs to a marker other than RSTn or FF00
      while (data_end + 1 < jpeg.size() &&
             !(jpeg[data_end] == 0xFF && jpeg[data_end + 1] != 0x00 && !is_rst(jpeg[data_end + 1])))
        ++data_end;
      if (data_end + 1 >= jpeg.size()) bad_output();
      unit.scan.assign(jpeg.begin() + long(pos), jpeg.begin() + long(data_end));
      out.scans.push_back(std::move(unit));
      unit = ScanUnit{};
      pos = data_end;
      continue;
    } else if (marker != 0xDD) {
      bad_output();
    }
    pos = end;
  }
  out.header.insert(out.header.begin(), jpeg.begin(), jpeg.begin() + 2);
  return out;
}

void append_dri(Bytes& out, unsigned interval) {
  const uint8_t dri[] = {0xFF, 0xDD, 0x00, 0x04, uint8_t(interval >> 8), uint8_t(interval & 0xFF)};
  out.insert(out.end(), std::begin(dri), std::end(dri));
}

}  // namespace

std::vector<unsigned> scan_restart_intervals(const Layout& layout) {
  std::vector<unsigned> intervals;
  unsigned current = 0;
  for (const Segment& s : layout.segments) {
    if (s.marker == kDri && s.payload.size() >= 2)
      current = unsigned(s.payload[0] << 8 | s.payload[1]);
    if (s.marker == kSos) intervals.push_back(current);
  }
  return intervals;
}

unsigned matched_restart_interval(const jpeg_decompress_struct& info, const jpeg_scan_info& scan,
                                  unsigned input_interval) {
  if (scan.comps_in_scan != 1 || info.num_components == 1) return input_interval;
  const jpeg_component_info& c = info.comp_info[scan.component_index[0]];
  const unsigned blocks = unsigned(c.h_samp_factor * c.v_samp_factor);
  return std::min(input_interval * blocks, 65535u);
}

std::optional<unsigned> input_restart_interval(const Layout& layout,
                                               const jpeg_decompress_struct& info) {
  const std::vector<unsigned> intervals = scan_restart_intervals(layout);
  if (intervals.empty()) return 0u;
  if (std::adjacent_find(intervals.begin(), intervals.end(), std::not_equal_to<>()) ==
      intervals.end())
    return intervals.front();
  // Each scan's components, as the SOS names them: Ns, then a selector and tables for each.
  std::vector<jpeg_scan_info> scans;
  for (const Segment& s : layout.segments) {
    if (s.marker != kSos) continue;
    if (s.payload.empty() || s.payload[0] < 1 || s.payload[0] > MAX_COMPS_IN_SCAN ||
        s.payload.size() < 1 + 2 * size_t(s.payload[0]))
      return std::nullopt;
    jpeg_scan_info scan{};
    scan.comps_in_scan = s.payload[0];
    for (int k = 0; k < scan.comps_in_scan; ++k) {
      int index = -1;
      for (int ci = 0; ci < info.num_components; ++ci)
        if (info.comp_info[ci].component_id == s.payload[1 + 2 * size_t(k)]) index = ci;
      if (index < 0) return std::nullopt;
      scan.component_index[k] = index;
    }
    scans.push_back(scan);
  }
  if (scans.size() != intervals.size()) return std::nullopt;
  for (const unsigned n : intervals) {
    if (n == 0) continue;
    bool follows = true;
    for (size_t i = 0; i < scans.size() && follows; ++i)
      follows = matched_restart_interval(info, scans[i], n) == intervals[i];
    if (follows) return n;
  }
  return std::nullopt;
}

std::optional<Bytes> write_with_matched_restarts(CoefficientImage& image,
                                                 const std::vector<jpeg_scan_info>& script,
                                                 unsigned input_interval,
                                                 const Bytes& written_with_input_interval) {
  if (input_interval == 0 || script.empty()) return std::nullopt;
  std::vector<unsigned> intervals;
  for (const jpeg_scan_info& scan : script)
    intervals.push_back(matched_restart_interval(image.info(), scan, input_interval));
  if (std::all_of(intervals.begin(), intervals.end(),
                  [&](unsigned i) { return i == input_interval; }))
    return std::nullopt;

  std::map<unsigned, SplitFile> writings;
  writings.emplace(input_interval, split_scans(written_with_input_interval));
  for (unsigned interval : intervals) {
    if (writings.count(interval)) continue;
    WriteOptions o;
    o.scans = WriteOptions::Scans::kScript;
    o.script = script;
    o.restart_interval = interval;
    writings.emplace(interval, split_scans(write_coefficients(image, o)));
  }
  for (const auto& [interval, split] : writings)
    if (split.scans.size() != script.size()) bad_output();

  Bytes out = writings.at(input_interval).header;
  unsigned current = 0;  // no DRI written yet
  for (size_t i = 0; i < script.size(); ++i) {
    const ScanUnit& unit = writings.at(intervals[i]).scans[i];
    out.insert(out.end(), unit.tables.begin(), unit.tables.end());
    if (intervals[i] != current) append_dri(out, intervals[i]);
    current = intervals[i];
    out.insert(out.end(), unit.scan.begin(), unit.scan.end());
  }
  out.push_back(0xFF);
  out.push_back(0xD9);
  return out;
}

}  // namespace lighten::jpeg
