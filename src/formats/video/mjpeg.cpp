#include "formats/video/mjpeg.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include "formats/jpeg/metadata.h"

namespace lighten::video {
namespace {

constexpr uint8_t kSoi = 0xD8, kEoi = 0xD9, kSos = 0xDA, kDht = 0xC4;

// The DHT payload (without marker and length) of the K.3 tables: DC 0, DC 1, AC 0, AC 1.
constexpr std::array<uint8_t, 416> kStandardDht = {
    0x00, 0x00, 0x01, 0x05, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x01, 0x00, 0x03,
    0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x10, 0x00, 0x02, 0x01, 0x03, 0x03,
    0x02, 0x04, 0x03, 0x05, 0x05, 0x04, 0x04, 0x00, 0x00, 0x01, 0x7d, 0x01, 0x02, 0x03, 0x00, 0x04,
    0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07, 0x22, 0x71, 0x14, 0x32, 0x81,
    0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33, 0x62, 0x72, 0x82,
    0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x34, 0x35, 0x36,
    0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56,
    0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76,
    0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95,
    0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3,
    0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca,
    0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7,
    0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0x11, 0x00, 0x02,
    0x01, 0x02, 0x04, 0x04, 0x03, 0x04, 0x07, 0x05, 0x04, 0x04, 0x00, 0x01, 0x02, 0x77, 0x00, 0x01,
    0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71, 0x13, 0x22,
    0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0, 0x15, 0x62,
    0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26, 0x27, 0x28,
    0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a,
    0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a,
    0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
    0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
    0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5,
    0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe2, 0xe3,
    0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa};

// Calls visit(slot, table) for each table a DHT payload defines, by class and slot (0x00-0x13):
// its 16 counts and its values. False when the payload does not parse (the tables before the
// damage visited).
template <typename Visit>
bool for_each_dht_table(ByteView payload, const Visit& visit) {
  size_t at = 0;
  while (at < payload.size()) {
    if (payload.size() - at < 17) return false;
    size_t count = 0;
    for (size_t i = 1; i <= 16; ++i) count += payload[at + i];
    if (payload.size() - at - 17 < count) return false;
    visit(payload[at], payload.subspan(at + 1, 16 + count));
    at += 17 + count;
  }
  return true;
}

bool read_dht_tables(ByteView payload, std::map<uint8_t, Bytes>& tables) {
  return for_each_dht_table(payload, [&](uint8_t slot, ByteView table) {
    tables[slot].assign(table.begin(), table.end());
  });
}

// The K.3 tables by class and slot.
const std::map<uint8_t, Bytes>& standard_tables() {
  static const std::map<uint8_t, Bytes> tables = [] {
    std::map<uint8_t, Bytes> t;
    read_dht_tables(ByteView(kStandardDht.data(), kStandardDht.size()), t);
    return t;
  }();
  return tables;
}

bool is_rst(uint8_t m) { return m >= 0xD0 && m <= 0xD7; }

// Bit of JpegImageSpan::huffman_from_elsewhere for a table's class (0 DC, 1 AC) and slot.
uint8_t huffman_bit(unsigned table_class, unsigned slot) {
  return table_class > 1 || slot > 3 ? 0 : uint8_t(1u << (table_class * 4 + slot));
}

// Which tables an image defines and uses as its segments go by (what is malformed is left to the
// decoders, which fail on it: nothing counts as taken from elsewhere for it).
struct TableUse {
  uint8_t huffman_defined = 0;
  uint8_t quantisation_defined = 0;            // bits 0-3
  uint8_t frame_type = 0;                      // the SOF marker
  std::array<uint8_t, 256> component_table{};  // component identifier -> its quantisation table

  uint8_t huffman_not_standard = 0;  // defined last with a table other than K.3's

  // Walked in place (every frame's DHT passes here): each table compared with K.3's as it lies.
  void define_huffman(ByteView payload) {
    const std::map<uint8_t, Bytes>& k3 = standard_tables();
    const bool parsed = for_each_dht_table(payload, [&](uint8_t slot, ByteView table) {
      const uint8_t bit = huffman_bit(slot >> 4, slot & 15);
      huffman_defined |= bit;
      const auto standard = k3.find(slot);
      if (standard != k3.end() && same_bytes(standard->second, table))
        huffman_not_standard &= uint8_t(~bit);
      else
        huffman_not_standard |= bit;
    });
    if (!parsed) huffman_not_standard = 0xFF;  // cannot be told
  }
  void define_quantisation(ByteView payload) {
    for (size_t at = 0; at < payload.size();) {
      const size_t size = 1 + ((payload[at] >> 4) ? 128 : 64);
      if (payload.size() - at < size) return;
      if ((payload[at] & 15) < 4) quantisation_defined |= uint8_t(1u << (payload[at] & 15));
      at += size;
    }
  }
  void frame(uint8_t marker, ByteView payload) {
    frame_type = marker;
    if (payload.size() < 6) return;
    for (size_t k = 0, n = payload[5]; k < n && 6 + 3 * k + 3 <= payload.size(); ++k)
      component_table[payload[6 + 3 * k]] = payload[6 + 3 * k + 2] & 15;
  }
  // What a scan uses that is not defined by now.
  void scan(ByteView payload, JpegImageSpan& span) const {
    if (payload.empty() || payload.size() < 1 + 2 * size_t(payload[0]) + 3) return;
    const size_t n = payload[0];
    const uint8_t ss = payload[1 + 2 * n], se = payload[2 + 2 * n], ah = payload[3 + 2 * n] >> 4;
    const bool lossless = frame_type == 0xC3 || frame_type == 0xC7;
    const bool arithmetic = frame_type >= 0xC9;
    for (size_t k = 0; k < n; ++k) {
      const uint8_t tables = payload[2 + 2 * k];
      if (!arithmetic) {
        uint8_t used = 0;
        if (lossless || (ss == 0 && ah == 0)) used |= huffman_bit(0, tables >> 4);
        if (!lossless && se > 0) used |= huffman_bit(1, tables & 15);
        span.huffman_from_elsewhere |= uint8_t(used & ~huffman_defined);
      }
      const uint8_t q = component_table[payload[1 + 2 * k]];
      if (!lossless && !(quantisation_defined >> q & 1)) span.quantisation_from_elsewhere = true;
    }
  }
};
// SOF0-SOF15 but DHT, JPG and DAC.
bool is_frame_header(uint8_t m) {
  return m >= 0xC0 && m <= 0xCF && m != kDht && m != 0xC8 && m != 0xCC;
}

// Walks one JPEG image from `begin` (its SOI); fills `span` and returns true when it reaches a
// well-formed EOI, false for anything else.
bool walk_image(ByteView in, size_t begin, JpegImageSpan& span) {
  span = {};
  span.begin = begin;
  if (in.size() - begin < 4 || in[begin] != 0xFF || in[begin + 1] != kSoi) return false;
  size_t pos = begin + 2;
  bool in_scan_data = false;
  TableUse tables;
  while (pos + 1 < in.size()) {
    if (in[pos] != 0xFF) {
      if (!in_scan_data) return false;  // junk between segments: not ours to interpret
      ++pos;
      continue;
    }
    const uint8_t m = in[pos + 1];
    if (m == 0xFF) {  // fill byte
      ++pos;
      continue;
    }
    if (in_scan_data && (m == 0x00 || is_rst(m))) {
      pos += 2;
      continue;
    }
    in_scan_data = false;
    if (m == kEoi) {
      if (span.first_sos == 0) return false;
      span.end = pos + 2;
      span.huffman_defined = tables.huffman_defined;
      span.huffman_not_standard = tables.huffman_not_standard;
      return true;
    }
    if (m == kSoi || m == 0x00 || m == 0x01 || is_rst(m)) return false;
    if (in.size() - pos < 4) return false;
    const size_t len = size_t(in[pos + 2]) << 8 | in[pos + 3];
    if (len < 2 || in.size() - pos - 2 < len) return false;
    const ByteView payload = in.subspan(pos + 4, len - 2);
    if (m == kDht) tables.define_huffman(payload);
    if (m == 0xDB) tables.define_quantisation(payload);
    if (is_frame_header(m) && span.first_sos == 0) {
      tables.frame(m, payload);
      if (len >= 7) span.height = uint32_t(in[pos + 5]) << 8 | in[pos + 6];
    }
    if (m == kSos) {
      tables.scan(payload, span);
      if (span.first_sos == 0) span.first_sos = pos;
      in_scan_data = true;
    }
    pos += 2 + len;
  }
  return false;
}

// Where the next image may start after one that ended at `pos`: writers pad fields with zero or
// 0xFF bytes, which ffmpeg skips on its way to the next marker.
size_t after_padding(ByteView in, size_t pos) {
  while (pos < in.size() && (in[pos] == 0x00 || in[pos] == 0xFF) &&
         !(in[pos] == 0xFF && pos + 1 < in.size() && in[pos + 1] == kSoi))
    ++pos;
  return pos;
}

}  // namespace

std::vector<JpegImageSpan> split_mjpeg_chunk(ByteView chunk) {
  std::vector<JpegImageSpan> images;
  size_t pos = 0;
  // Two fields at most in practice; a few more are tolerated, an endless list is not.
  while (images.size() < 8 && pos < chunk.size()) {
    JpegImageSpan span;
    if (!walk_image(chunk, images.empty() ? pos : after_padding(chunk, pos), span)) break;
    images.push_back(span);
    pos = span.end;
  }
  if (images.empty() || (pos < chunk.size() && images.size() == 8)) return {};
  return images;
}

bool carries_quality_marker(ByteView chunk) {
  if (chunk.size() < 2 || chunk[0] != 0xFF || chunk[1] != kSoi) return false;
  size_t pos = 2;
  while (chunk.size() - pos >= 4) {
    if (chunk[pos] != 0xFF) return false;
    const uint8_t m = chunk[pos + 1];
    if (m == 0xFF) {  // fill byte
      ++pos;
      continue;
    }
    if (m == kSos || m == kEoi) return false;
    const size_t len = size_t(chunk[pos + 2]) << 8 | chunk[pos + 3];
    if (len < 2 || chunk.size() - pos - 2 < len) return false;
    const ByteView payload = chunk.subspan(pos + 4, len - 2);
    if (m == 0xEF && payload.size() >= jpeg::kQualityMarkerId.size() &&
        std::equal(jpeg::kQualityMarkerId.begin(), jpeg::kQualityMarkerId.end(), payload.begin(),
                   [](char a, uint8_t b) { return uint8_t(a) == b; }))
      return true;
    pos += 2 + len;
  }
  return false;
}

bool holds_unwalked_scan(ByteView chunk, const std::vector<JpegImageSpan>& images,
                         uint32_t stream_height) {
  if (!images.empty() && stream_height != 0) {
    const bool interlaced = images.front().height < uint64_t(stream_height) * 3 / 4;
    if (!interlaced || images.size() % 2 == 0) return false;  // the picture is complete
  }
  // Padding between images holds no marker; what follows the last one may.
  for (size_t i = images.empty() ? 0 : images.back().end; i + 1 < chunk.size(); ++i)
    if (chunk[i] == 0xFF && chunk[i + 1] == kSos) return true;
  return false;
}

namespace {

// Where an image's AVI1 segment holds FieldSize (FieldSizeLessPadding follows), or 0.
size_t field_sizes_offset(ByteView image) {
  constexpr size_t kSizesInPayload = 6;  // after "AVI1", the polarity and a reserved byte
  size_t pos = 2;
  while (pos + 4 <= image.size() && image[pos] == 0xFF && image[pos + 1] != kSos) {
    if (image[pos + 1] == 0xFF) {  // a fill byte before the marker
      ++pos;
      continue;
    }
    const size_t len = size_t(image[pos + 2]) << 8 | image[pos + 3];
    if (len < 2 || image.size() - pos - 2 < len) return 0;
    const ByteView payload = image.subspan(pos + 4, len - 2);
    if (image[pos + 1] == 0xE0 && payload.size() >= kSizesInPayload + 8 &&
        std::equal(payload.begin(), payload.begin() + 4, "AVI1"))
      return pos + 4 + kSizesInPayload;
    pos += 2 + len;
  }
  return 0;
}

uint32_t read32(ByteView b, size_t at, bool big_endian) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(b[at + (big_endian ? 3 - i : i)]) << (8 * i);
  return v;
}

void write32(Bytes& b, size_t at, uint32_t v, bool big_endian) {
  for (int i = 0; i < 4; ++i) b[at + (big_endian ? 3 - i : i)] = uint8_t(v >> (8 * i));
}

// The layout the original's sizes follow: byte order, and whether FieldSize counts the gap.
struct SizesLayout {
  bool big_endian = true;
  bool counts_gap = false;
};

std::optional<SizesLayout> sizes_layout(ByteView chunk, const JpegImageSpan& image, size_t gap) {
  const ByteView bytes = chunk.subspan(image.begin, image.end - image.begin);
  const size_t at = field_sizes_offset(bytes);
  if (at == 0) return std::nullopt;
  for (bool big_endian : {true, false}) {
    const uint64_t full = read32(bytes, at, big_endian), less = read32(bytes, at + 4, big_endian);
    if (less != bytes.size()) continue;
    if (full == bytes.size() + gap) return SizesLayout{big_endian, gap != 0};
    if (full == bytes.size()) return SizesLayout{big_endian, false};
  }
  return std::nullopt;
}

size_t gap_after(ByteView chunk, const std::vector<JpegImageSpan>& images, size_t k) {
  return (k + 1 < images.size() ? images[k + 1].begin : chunk.size()) - images[k].end;
}

}  // namespace

bool records_field_sizes(ByteView chunk, const JpegImageSpan& image) {
  const ByteView bytes = chunk.subspan(image.begin, image.end - image.begin);
  const size_t at = field_sizes_offset(bytes);
  return at != 0 && (read32(bytes, at, true) != 0 || read32(bytes, at + 4, true) != 0);
}

bool recorded_field_sizes_hold(ByteView chunk, const std::vector<JpegImageSpan>& images) {
  for (size_t k = 0; k < images.size(); ++k)
    if (records_field_sizes(chunk, images[k]) &&
        !sizes_layout(chunk, images[k], gap_after(chunk, images, k)))
      return false;
  return true;
}

bool carry_field_sizes(ByteView chunk, const std::vector<JpegImageSpan>& images, size_t k,
                       Bytes& image) {
  const size_t gap = gap_after(chunk, images, k);
  const std::optional<SizesLayout> layout = sizes_layout(chunk, images[k], gap);
  const size_t at = field_sizes_offset(image);
  if (!layout || at == 0) return false;
  write32(image, at, uint32_t(image.size() + (layout->counts_gap ? gap : 0)), layout->big_endian);
  write32(image, at + 4, uint32_t(image.size()), layout->big_endian);
  return true;
}

Bytes with_original_field_sizes(ByteView original, ByteView image) {
  Bytes out(image.begin(), image.end());
  const size_t from = field_sizes_offset(original), to = field_sizes_offset(image);
  if (from != 0 && to != 0) std::copy_n(original.begin() + from, 8, out.begin() + to);
  return out;
}

bool same_field_sizes(ByteView original, ByteView image) {
  const size_t from = field_sizes_offset(original), to = field_sizes_offset(image);
  if (from == 0 || to == 0) return from == to;
  return std::equal(original.begin() + from, original.begin() + from + 8, image.begin() + to);
}

Bytes with_standard_huffman_tables(ByteView image, const JpegImageSpan& span) {
  Bytes dht;
  for (const auto& [slot, table] :
       standard_tables()) {  // DC 0, DC 1, AC 0, AC 1, as K.3 lists them
    if (!(span.huffman_from_elsewhere & huffman_bit(slot >> 4, slot & 15))) continue;
    dht.push_back(slot);
    dht.insert(dht.end(), table.begin(), table.end());
  }
  Bytes out;
  out.reserve(span.end - span.begin + 4 + dht.size());
  out.insert(out.end(), image.begin() + span.begin, image.begin() + span.first_sos);
  if (!dht.empty()) {
    const size_t len = dht.size() + 2;
    out.insert(out.end(), {0xFF, kDht, uint8_t(len >> 8), uint8_t(len)});
    out.insert(out.end(), dht.begin(), dht.end());
  }
  out.insert(out.end(), image.begin() + span.first_sos, image.begin() + span.end);
  return out;
}

}  // namespace lighten::video
