#include "formats/jpeg/markers.h"

#include <algorithm>
#include <array>
#include <cstring>

#include <cstdio>
#include <string>

namespace lighten::jpeg {
namespace {

// More scans than any encoder writes; a file with thousands of tiny scans is a decoding-time
// bomb (each scan is a pass over the coefficients), so it is refused.
constexpr size_t kMaxScans = 1000;

bool is_rst(uint8_t m) { return m >= 0xD0 && m <= 0xD7; }

// Finds where entropy-coded data starting at `pos` ends: the FF of the next marker that is not
// a stuffed zero or a restart marker.
size_t skip_entropy(ByteView in, size_t pos) {
  while (pos < in.size()) {
    // memchr finds the next FF many bytes at a time; most of a scan holds none.
    const void* ff = std::memchr(in.data() + pos, 0xFF, in.size() - pos);
    if (ff == nullptr) return in.size();
    pos = size_t(static_cast<const uint8_t*>(ff) - in.data());
    size_t next = pos + 1;
    while (next < in.size() && in[next] == 0xFF) ++next;  // fill bytes
    if (next >= in.size()) return in.size();
    uint8_t b = in[next];
    if (b == 0x00 || is_rst(b)) {
      pos = next + 1;
      continue;
    }
    return next - 1;  // the FF right before the marker code
  }
  return in.size();
}

// Huffman coding spends at least one bit on every block (its DC code; a sequential scan also
// an end-of-block code), so scans shorter than that cannot hold the image: a 236 kB file whose
// frame header claims 20000x20000 had libjpeg allocate 1.2 GB for coefficients before it found
// the data missing. Arithmetic coding can spend less, so it is not checked.
void check_scans_hold_frame(const Layout& layout) {
  const FrameInfo& f = layout.frame;
  const bool arithmetic = f.marker >= 0xC9;
  if (arithmetic) return;
  int h_max = 1, v_max = 1;
  for (const FrameInfo::Component& c : f.components)
    h_max = std::max<int>(h_max, c.h), v_max = std::max<int>(v_max, c.v);
  uint64_t blocks = 0;
  for (const FrameInfo::Component& c : f.components) {
    const uint64_t w = (uint64_t(f.width) * c.h + h_max - 1) / h_max;
    const uint64_t h = (uint64_t(f.height) * c.v + v_max - 1) / v_max;
    blocks += ((w + 7) / 8) * ((h + 7) / 8);
  }
  uint64_t scan_bytes = 0;
  for (const Segment& s : layout.segments)
    if (s.marker == kSos) scan_bytes += s.entropy_end - s.end();
  if (blocks > 8 * scan_bytes)
    throw FormatError(Reason::kCorrupt, 0,
                      "its scans hold " + std::to_string(scan_bytes) + " bytes, too few for the " +
                          std::to_string(blocks) + " blocks of a " + std::to_string(f.width) + "x" +
                          std::to_string(f.height) +
                          " image (Huffman coding spends at least a bit on each): damaged");
}

// A sequential frame codes each component in exactly one scan. libjpeg lays a second scan of a
// component over the first without a word, and other decoders keep one or the other: what the
// file shows is not defined, so it is damaged. A component no scan codes is grey in libjpeg.
void check_each_component_scanned_once(const Layout& layout) {
  const FrameInfo& f = layout.frame;
  if (f.marker != 0xC0 && f.marker != 0xC1 && f.marker != 0xC9) return;
  std::array<int, 256> expected{}, coded{};
  for (const FrameInfo::Component& c : f.components) ++expected[c.id];
  for (const Segment& s : layout.segments) {
    if (s.marker != kSos || s.payload.empty()) continue;
    const size_t count = s.payload[0];
    for (size_t i = 0; i < count && 1 + 2 * i < s.payload.size(); ++i)
      ++coded[s.payload[1 + 2 * i]];
  }
  for (const FrameInfo::Component& c : f.components) {
    if (coded[c.id] > expected[c.id])
      throw FormatError(Reason::kCorrupt, 0,
                        "component " + std::to_string(c.id) +
                            " is coded in more than one scan of a sequential JPEG: damaged");
    if (coded[c.id] < expected[c.id])
      throw FormatError(Reason::kCorrupt, 0,
                        "component " + std::to_string(c.id) + " is coded in no scan: damaged");
  }
}

}  // namespace

bool is_sof(uint8_t m) { return m >= 0xC0 && m <= 0xCF && m != kDht && m != 0xC8 && m != 0xCC; }

FrameInfo parse_frame(const Segment& sof) {
  FrameInfo f;
  f.marker = sof.marker;
  ByteReader r(sof.payload);
  f.precision = r.u8();
  f.height = r.u16be();
  f.width = r.u16be();
  uint8_t n = r.u8();
  // A header whose length does not hold its components is damaged, whatever the count says.
  if (sof.payload.size() != 6 + 3 * size_t(n))
    throw FormatError(Reason::kCorrupt, sof.offset,
                      "frame header of " + std::to_string(sof.payload.size()) + " bytes for " +
                          std::to_string(n) + " components");
  if (n == 0 || n > 4)
    throw FormatError(Reason::kUnsupportedVariant, sof.offset,
                      "JPEG with " + std::to_string(n) + " components is not supported");
  for (uint8_t i = 0; i < n; ++i) {
    FrameInfo::Component c;
    c.id = r.u8();
    uint8_t hv = r.u8();
    c.h = hv >> 4;
    c.v = hv & 15;
    c.tq = r.u8();
    if (c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 || c.tq > 3)
      throw FormatError(Reason::kCorrupt, sof.offset, "bad component in the frame header");
    f.components.push_back(c);
  }
  return f;
}

Layout parse_layout(ByteView in) {
  if (in.size() < 2 || in[0] != 0xFF || in[1] != kSoi)
    throw FormatError(in.empty() ? Reason::kEmpty : Reason::kCorrupt, 0,
                      "not a JPEG: no SOI marker at the start");
  Layout layout;
  bool have_sof = false;
  size_t pos = 2;
  for (;;) {
    if (pos >= in.size())
      throw FormatError(Reason::kTruncated, pos, "JPEG ends before its EOI marker");
    if (in[pos] != 0xFF) {  // junk between segments: libjpeg skips it with a warning
      ++pos;
      ++layout.junk_bytes;
      continue;
    }
    size_t start = pos;
    while (pos + 1 < in.size() && in[pos + 1] == 0xFF) ++pos;  // fill bytes before a marker
    if (pos + 1 >= in.size())
      throw FormatError(Reason::kTruncated, pos, "JPEG ends before its EOI marker");
    layout.fill_bytes += pos - start;
    uint8_t m = in[pos + 1];
    if (m == kEoi) {
      if (!have_sof || layout.scans == 0)
        throw FormatError(Reason::kCorrupt, pos, "EOI before any image data");
      layout.image_end = pos + 2;
      check_scans_hold_frame(layout);
      check_each_component_scanned_once(layout);
      return layout;
    }
    if (m == 0x00 || m == 0x01 || is_rst(m)) {  // stray marker outside entropy data
      pos += 2;
      layout.junk_bytes += 2;
      continue;
    }
    if (m == kSoi) throw FormatError(Reason::kCorrupt, pos, "second SOI before EOI");
    if (m == 0xDE || m == 0xDF)
      throw FormatError(Reason::kUnsupportedVariant, pos, "hierarchical JPEG is not supported");
    if (m == 0xF7)  // SOF55: ITU-T T.87, another codec in JPEG's markers
      throw FormatError(Reason::kUnsupportedVariant, pos, "JPEG-LS is not supported");
    if (pos + 4 > in.size())
      throw FormatError(Reason::kTruncated, pos, "JPEG ends inside a marker segment");
    size_t len = size_t(in[pos + 2]) << 8 | in[pos + 3];
    if (len < 2) throw FormatError(Reason::kCorrupt, pos, "marker segment length below 2");
    if (pos + 2 + len > in.size())
      throw FormatError(Reason::kTruncated, pos, "JPEG ends inside a marker segment");
    Segment s;
    s.marker = m;
    s.offset = pos;
    s.length = 2 + len;
    s.payload = in.subspan(pos + 4, len - 2);
    s.entropy_end = s.end();
    if (is_sof(m)) {
      if (have_sof) throw FormatError(Reason::kCorrupt, pos, "second frame header");
      switch (m) {
        case 0xC3:
        case 0xCB:
          throw FormatError(Reason::kUnsupportedVariant, pos, "lossless JPEG is not supported");
        case 0xC5:
        case 0xC6:
        case 0xC7:
        case 0xCD:
        case 0xCE:
        case 0xCF:
          throw FormatError(Reason::kUnsupportedVariant, pos, "hierarchical JPEG is not supported");
        default:
          break;
      }
      layout.frame = parse_frame(s);
      // ITU T.81 allows 8 and 12 bits (2 to 16 in lossless frames, refused above); any other
      // precision is a damaged header.
      if (layout.frame.precision != 8)
        throw FormatError(
            layout.frame.precision == 12 ? Reason::kUnsupportedVariant : Reason::kCorrupt, pos,
            std::to_string(layout.frame.precision) + "-bit JPEG is not supported (8-bit only)");
      if (layout.frame.width == 0 || layout.frame.height == 0)
        throw FormatError(Reason::kUnsupportedVariant, pos,
                          "JPEG with zero or DNL-defined dimensions is not supported");
      have_sof = true;
      layout.sof_index = layout.segments.size();
    }
    if (m == kSos) {
      if (!have_sof) throw FormatError(Reason::kCorrupt, pos, "scan before the frame header");
      if (++layout.scans > kMaxScans)
        throw FormatError(Reason::kLimitExceeded, pos, "more than 1000 scans");
      s.entropy_end = skip_entropy(in, s.end());
    }
    layout.segments.push_back(s);
    pos = s.entropy_end;
  }
}

const char* marker_name(uint8_t m) {
  static const char* const kApp[16] = {"APP0",  "APP1",  "APP2",  "APP3", "APP4",  "APP5",
                                       "APP6",  "APP7",  "APP8",  "APP9", "APP10", "APP11",
                                       "APP12", "APP13", "APP14", "APP15"};
  static const char* const kSof[16] = {"SOF0", "SOF1",  "SOF2",  "SOF3", "DHT",   "SOF5",
                                       "SOF6", "SOF7",  "JPG",   "SOF9", "SOF10", "SOF11",
                                       "DAC",  "SOF13", "SOF14", "SOF15"};
  if (m >= 0xE0 && m <= 0xEF) return kApp[m - 0xE0];
  if (m >= 0xC0 && m <= 0xCF) return kSof[m - 0xC0];
  switch (m) {
    case kSos:
      return "SOS";
    case kDqt:
      return "DQT";
    case kDri:
      return "DRI";
    case kCom:
      return "COM";
    case 0xDC:
      return "DNL";
    default:
      return "marker";
  }
}

}  // namespace lighten::jpeg
