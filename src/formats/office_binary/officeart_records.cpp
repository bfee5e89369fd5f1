#include "formats/office_binary/officeart_records.h"

#include <algorithm>
#include <limits>

namespace lighten::officeart {
namespace {

[[noreturn]] void fail(Reason reason, size_t offset, const std::string& message) {
  throw FormatError(reason, offset, message);
}

// An FBSE's BLIP is rewritten only when it is stored inside the record and `size` agrees.
bool has_embedded_raster_blip(const FbseEntry& e) {
  return e.embedded_offset != 0 && e.blip_size == e.embedded_size;
}

void rewrite_range(ByteView bytes, size_t begin, size_t end, unsigned depth,
                   const PictureRewriter& rewriter, Bytes& out, size_t& changed) {
  size_t pos = begin;
  while (pos < end) {
    const RecordHeader h = read_header(bytes, pos, end);
    const size_t body = pos + kHeaderSize;
    const size_t stop = body + h.length;
    if (h.is_container()) {
      if (depth >= kMaxDepth)
        fail(Reason::kUnsupportedVariant, pos, "OfficeArt records nest too deeply");
      const size_t at = out.size();
      append_header(out, h);
      rewrite_range(bytes, body, stop, depth + 1, rewriter, out, changed);
      const size_t length = out.size() - at - kHeaderSize;
      put_u32le(out, at + 4, uint32_t(length));  // never longer than the original
    } else if (h.type == kFbse) {
      const FbseEntry e = read_fbse(bytes, pos, stop);
      std::optional<Bytes> blip;
      if (has_embedded_raster_blip(e))
        blip = rewrite_raster_blip(bytes.subspan(e.embedded_offset, e.embedded_size), rewriter,
                                   "picture " + std::to_string(changed + 1));
      if (!blip) {
        out.insert(out.end(), bytes.begin() + pos, bytes.begin() + stop);
      } else {
        RecordHeader nh = h;
        nh.length = uint32_t(e.embedded_offset - body + blip->size());
        const size_t at = out.size();
        append_header(out, nh);
        out.insert(out.end(), bytes.begin() + body, bytes.begin() + e.embedded_offset);
        put_u32le(out, at + FbseEntry::kSizeField, uint32_t(blip->size()));
        out.insert(out.end(), blip->begin(), blip->end());
        ++changed;
      }
    } else {
      out.insert(out.end(), bytes.begin() + pos, bytes.begin() + stop);
    }
    pos = stop;
  }
}

void collect_fbse(ByteView bytes, size_t begin, size_t end, unsigned depth,
                  const std::vector<uint16_t>& path_types, std::vector<FbseEntry>& out) {
  size_t pos = begin;
  while (pos < end) {
    const RecordHeader h = read_header(bytes, pos, end);
    const size_t stop = pos + h.total_size();
    const bool on_path =
        h.type == kBStoreContainer ||
        std::find(path_types.begin(), path_types.end(), h.type) != path_types.end();
    if (h.is_container() && on_path) {
      if (depth >= kMaxDepth)
        fail(Reason::kUnsupportedVariant, pos, "OfficeArt records nest too deeply");
      collect_fbse(bytes, pos + kHeaderSize, stop, depth + 1, path_types, out);
    } else if (h.type == kFbse) {
      out.push_back(read_fbse(bytes, pos, stop));
    }
    pos = stop;
  }
}

std::string where(size_t offset) { return " (record at byte " + std::to_string(offset) + ")"; }

std::string compare_fbse(ByteView a, const FbseEntry& x, ByteView b, const FbseEntry& y,
                         std::vector<PicturePair>& changed) {
  const size_t fixed_a =
      x.embedded_offset ? x.embedded_offset - x.record_offset : x.header.total_size();
  const size_t fixed_b =
      y.embedded_offset ? y.embedded_offset - y.record_offset : y.header.total_size();
  if (fixed_a != fixed_b) return "an FBSE changed its layout" + where(x.record_offset);
  for (size_t i = kHeaderSize; i < fixed_a; ++i) {
    const bool size_field = i >= FbseEntry::kSizeField && i < FbseEntry::kSizeField + 4;
    if (!size_field && a[x.record_offset + i] != b[y.record_offset + i])
      return "an FBSE field changed" + where(x.record_offset);
  }
  const ByteView blip_a = a.subspan(x.embedded_offset, x.embedded_size);
  const ByteView blip_b = b.subspan(y.embedded_offset, y.embedded_size);
  if (std::equal(blip_a.begin(), blip_a.end(), blip_b.begin(), blip_b.end())) {
    if (x.blip_size != y.blip_size) return "an FBSE size changed" + where(x.record_offset);
    return {};
  }
  if (y.blip_size != y.embedded_size)
    return "an FBSE size does not match its BLIP" + where(y.record_offset);
  const ByteView image_a = raster_blip_image(blip_a);
  const ByteView image_b = raster_blip_image(blip_b);
  if (image_a.empty() || image_b.empty())
    return "a BLIP other than JPEG or PNG changed" + where(x.record_offset);
  const size_t prefix = blip_a.size() - image_a.size();
  if (blip_b.size() - image_b.size() != prefix ||
      !std::equal(blip_a.begin(), blip_a.begin() + 4, blip_b.begin()) ||
      !std::equal(blip_a.begin() + kHeaderSize, blip_a.begin() + prefix,
                  blip_b.begin() + kHeaderSize))
    return "a BLIP's type, UID or tag changed" + where(x.record_offset);
  changed.push_back({Bytes(image_a.begin(), image_a.end()), Bytes(image_b.begin(), image_b.end()),
                     "picture at byte " + std::to_string(x.record_offset)});
  return {};
}

std::string compare_range(ByteView a, size_t pa, size_t ea, ByteView b, size_t pb, size_t eb,
                          unsigned depth, std::vector<PicturePair>& changed) {
  while (pa < ea && pb < eb) {
    const RecordHeader x = read_header(a, pa, ea);
    const RecordHeader y = read_header(b, pb, eb);
    if (x.version_instance != y.version_instance || x.type != y.type)
      return "a record's type changed" + where(pa);
    if (x.is_container()) {
      if (depth >= kMaxDepth) return "records nest too deeply" + where(pa);
      const std::string problem =
          compare_range(a, pa + kHeaderSize, pa + x.total_size(), b, pb + kHeaderSize,
                        pb + y.total_size(), depth + 1, changed);
      if (!problem.empty()) return problem;
    } else if (x.type == kFbse && x.length != y.length) {
      const std::string problem = compare_fbse(a, read_fbse(a, pa, pa + x.total_size()), b,
                                               read_fbse(b, pb, pb + y.total_size()), changed);
      if (!problem.empty()) return problem;
    } else if (!std::equal(a.begin() + pa, a.begin() + pa + x.total_size(), b.begin() + pb,
                           b.begin() + pb + y.total_size())) {
      return "a record's bytes changed" + where(pa);
    }
    pa += x.total_size();
    pb += y.total_size();
  }
  if (pa != ea || pb != eb) return "the number of records changed" + where(pa);
  return {};
}

}  // namespace

RecordHeader read_header(ByteView bytes, size_t offset, size_t end) {
  if (end > bytes.size() || offset > end || end - offset < kHeaderSize)
    fail(Reason::kTruncated, offset, "an OfficeArt record header is cut short");
  RecordHeader h;
  h.version_instance = uint16_t(bytes[offset] | bytes[offset + 1] << 8);
  h.type = uint16_t(bytes[offset + 2] | bytes[offset + 3] << 8);
  h.length = get_u32le(bytes, offset + 4);
  if (h.length > end - offset - kHeaderSize)
    fail(Reason::kCorrupt, offset,
         "an OfficeArt record of type " + std::to_string(h.type) + " claims " +
             std::to_string(h.length) + " bytes, more than its parent holds");
  return h;
}

void append_header(Bytes& out, const RecordHeader& header) {
  append_u16le(out, header.version_instance);
  append_u16le(out, header.type);
  append_u32le(out, header.length);
}

uint32_t get_u32le(ByteView bytes, size_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < 4)
    fail(Reason::kTruncated, offset, "a 32-bit field is cut short");
  return uint32_t(bytes[offset]) | uint32_t(bytes[offset + 1]) << 8 |
         uint32_t(bytes[offset + 2]) << 16 | uint32_t(bytes[offset + 3]) << 24;
}

void put_u32le(Bytes& bytes, size_t offset, uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes.at(offset + i) = uint8_t(value >> (8 * i));
}

void append_u32le(Bytes& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(value >> (8 * i)));
}

void append_u16le(Bytes& out, uint16_t value) {
  out.push_back(uint8_t(value));
  out.push_back(uint8_t(value >> 8));
}

size_t raster_blip_prefix(const RecordHeader& header) {
  unsigned uids = 0;
  if (header.type == kBlipJpeg || header.type == kBlipJpegCmyk) {
    if (header.instance() == 0x46A || header.instance() == 0x6E2) uids = 1;
    if (header.instance() == 0x46B || header.instance() == 0x6E3) uids = 2;
  } else if (header.type == kBlipPng) {
    if (header.instance() == 0x6E0) uids = 1;
    if (header.instance() == 0x6E1) uids = 2;
  }
  return uids == 0 ? 0 : kHeaderSize + 16 * uids + 1;
}

ByteView raster_blip_image(ByteView record) {
  if (record.size() < kHeaderSize) return {};
  const RecordHeader h = read_header(record, 0, record.size());
  const size_t prefix = raster_blip_prefix(h);
  if (prefix == 0 || h.total_size() != record.size() || record.size() <= prefix) return {};
  return record.subspan(prefix);
}

std::optional<Bytes> rewrite_raster_blip(ByteView record, const PictureRewriter& rewriter,
                                         const std::string& name) {
  const ByteView image = raster_blip_image(record);
  if (image.empty()) return std::nullopt;
  std::optional<Bytes> replacement = rewriter(image, name);
  if (!replacement || replacement->empty()) return std::nullopt;
  const size_t prefix = record.size() - image.size();
  if (replacement->size() > std::numeric_limits<uint32_t>::max() - prefix) return std::nullopt;
  Bytes out(record.begin(), record.begin() + prefix);
  put_u32le(out, 4, uint32_t(prefix - kHeaderSize + replacement->size()));
  out.insert(out.end(), replacement->begin(), replacement->end());
  return out;
}

FbseEntry read_fbse(ByteView bytes, size_t offset, size_t end) {
  FbseEntry e;
  e.record_offset = offset;
  e.header = read_header(bytes, offset, end);
  if (e.header.length < kFbseFixedSize)
    fail(Reason::kCorrupt, offset, "an FBSE record is shorter than its fixed fields");
  e.blip_size = get_u32le(bytes, offset + FbseEntry::kSizeField);
  e.delay_offset = get_u32le(bytes, offset + FbseEntry::kDelayField);
  const size_t name_length = bytes[offset + kHeaderSize + 33];
  const size_t fixed_end = offset + kHeaderSize + kFbseFixedSize + name_length;
  const size_t record_end = offset + e.header.total_size();
  if (fixed_end > record_end) fail(Reason::kCorrupt, offset, "an FBSE's name runs past the record");
  // Bytes after the fields hold the BLIP itself only where they start with a BLIP record that
  // fits; otherwise readers take the picture from the delay stream at foDelay, which must then
  // follow it (an FBSE that swallowed the next one: LibreOffice showed the picture from Pictures,
  // which had moved without it).
  if (record_end - fixed_end >= kHeaderSize) {
    const uint16_t type = uint16_t(bytes[fixed_end + 2] | bytes[fixed_end + 3] << 8);
    const uint64_t blip_end = uint64_t(fixed_end) + kHeaderSize + get_u32le(bytes, fixed_end + 4);
    if (type >= kBlipFirst && type <= kBlipLast && blip_end <= record_end) {
      e.embedded_offset = fixed_end;
      e.embedded_size = record_end - fixed_end;
    }
  }
  return e;
}

std::vector<FbseEntry> find_fbse_records(ByteView bytes, size_t begin, size_t end,
                                         const std::vector<uint16_t>& path_types) {
  std::vector<FbseEntry> out;
  collect_fbse(bytes, begin, end, 0, path_types, out);
  return out;
}

std::optional<Bytes> rewrite_embedded_blips(ByteView records, const PictureRewriter& rewriter,
                                            size_t& changed) {
  Bytes out;
  out.reserve(records.size());
  const size_t before = changed;
  rewrite_range(records, 0, records.size(), 0, rewriter, out, changed);
  if (changed == before) return std::nullopt;
  return out;
}

std::string compare_embedded_blips(ByteView before, ByteView after,
                                   std::vector<PicturePair>& changed) {
  try {
    return compare_range(before, 0, before.size(), after, 0, after.size(), 0, changed);
  } catch (const FormatError& e) {
    return std::string("the drawing records do not parse: ") + e.what();
  }
}

}  // namespace lighten::officeart
