#include "formats/zip/zip_archive.h"

#include <algorithm>
#include <numeric>

#include "core/zip_names.h"

namespace lighten {
namespace {

constexpr uint32_t kLocalSignature = 0x04034b50;
constexpr uint32_t kCentralSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint32_t kDescriptorSignature = 0x08074b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint32_t k32 = 0xFFFFFFFFu;
constexpr size_t kEndSize = 22;

[[noreturn]] void corrupt(size_t offset, const std::string& message) {
  throw FormatError(Reason::kCorrupt, offset, message);
}

// Splits extra fields into the ZIP64 field's values and everything else, kept byte for byte.
struct SplitExtra {
  Bytes others;
  std::vector<uint64_t> zip64;  // the field's 8-byte values in order
  bool has_zip64 = false;
};

SplitExtra split_extra(ByteView extra) {
  SplitExtra out;
  const size_t end = for_each_extra_field(extra, [&](uint16_t id, ByteView data) {
    if (id == kZip64ExtraId) {
      out.has_zip64 = true;
      ByteReader r(data);
      while (r.remaining() >= 8) out.zip64.push_back(r.u64le());
    } else {
      out.others.insert(out.others.end(), data.data() - 4,
                        data.data() + data.size());  // with header
    }
  });
  out.others.insert(out.others.end(), extra.begin() + long(end), extra.end());  // malformed tail
  return out;
}

// A signature record (PK\5\5) after the directory's entries signs the directory as written:
// a rewrite would drop or invalidate it.
void refuse_signature_record(ByteView bytes, uint64_t at) {
  if (starts_with(bytes, "PK\x05\x05", at))
    throw FormatError(Reason::kSigned, at,
                      "the central directory carries a digital signature record, which a "
                      "rewrite would invalidate");
}

struct EndRecord {
  uint64_t entries = 0;
  uint64_t cd_size = 0;
  uint64_t cd_offset = 0;
  uint64_t cd_end = 0;  // where the directory must end: the ZIP64 end record or the end record
  Bytes comment;
  Bytes trailing;
};

EndRecord read_end(ByteView bytes) {
  if (bytes.size() < kEndSize) throw FormatError(Reason::kTruncated, 0, "too short for a ZIP");
  const size_t eocd = find_zip_end_record(bytes);
  if (eocd == std::string::npos)
    throw FormatError(Reason::kTruncated, bytes.size(),
                      "no end-of-central-directory record: the archive is cut short");
  ByteReader r(bytes, eocd + 4);
  const uint16_t disk = r.u16le(), cd_disk = r.u16le();
  const uint16_t entries_here = r.u16le(), entries = r.u16le();
  EndRecord end;
  end.cd_size = r.u32le();
  end.cd_offset = r.u32le();
  const uint16_t comment_len = r.u16le();
  ByteView comment = r.take(comment_len);
  end.comment.assign(comment.begin(), comment.end());
  end.trailing.assign(bytes.begin() + long(r.offset()), bytes.end());
  end.entries = entries;
  end.cd_end = eocd;
  if (disk != 0 || cd_disk != 0 || entries_here != entries)
    throw FormatError(Reason::kUnsupportedVariant, eocd,
                      "multi-volume ZIP archives are not handled");

  if (const auto z64 = read_zip64_end_record(bytes, eocd)) {
    // A record longer than its 44 fixed bytes carries extensible data (central directory
    // encryption, vendor fields) that the writer would not carry over.
    if (z64->size > 44 && z64->size == z64->locator - z64->offset - 12)
      throw FormatError(Reason::kUnsupportedVariant, z64->offset,
                        "the ZIP64 end record carries " + std::to_string(z64->size - 44) +
                            " bytes of extensible data, which are not handled");
    if (z64->offset + 56 != z64->locator) corrupt(eocd, "ZIP64 locator points to the wrong place");
    if (z64->entries_here != z64->entries) corrupt(z64->offset, "ZIP64 entry counts disagree");
    end.entries = z64->entries;
    end.cd_size = z64->cd_size;
    end.cd_offset = z64->cd_offset;
    end.cd_end = z64->offset;
  }
  if (end.cd_offset < end.cd_end && end.cd_end - end.cd_offset > end.cd_size)
    refuse_signature_record(bytes, end.cd_offset + end.cd_size);
  if (end.cd_offset > end.cd_end || end.cd_end - end.cd_offset != end.cd_size)
    corrupt(eocd, "central directory size and offset do not fit the archive");
  return end;
}

ZipEntry read_central_entry(ByteReader& r) {
  const size_t at = r.offset();
  if (r.u32le() != kCentralSignature) corrupt(at, "central directory entry expected");
  ZipEntry e;
  e.version_made_by = r.u16le();
  e.version_needed = r.u16le();
  e.flags = r.u16le();
  e.method = r.u16le();
  e.mod_time = r.u16le();
  e.mod_date = r.u16le();
  e.crc32 = r.u32le();
  uint64_t csize = r.u32le(), usize = r.u32le();
  const uint16_t name_len = r.u16le(), extra_len = r.u16le(), comment_len = r.u16le();
  const uint16_t disk = r.u16le();
  e.internal_attrs = r.u16le();
  e.external_attrs = r.u32le();
  uint64_t offset = r.u32le();
  ByteView name = r.take(name_len);
  e.name.assign(name.begin(), name.end());
  SplitExtra extra = split_extra(r.take(extra_len));
  ByteView comment = r.take(comment_len);
  e.comment.assign(comment.begin(), comment.end());
  e.central_extra = std::move(extra.others);
  // ZIP64 values appear only for the fields whose 32-bit value is saturated, in this order.
  size_t next = 0;
  auto take64 = [&](uint64_t& field) {
    if (field != k32) return;
    if (next >= extra.zip64.size()) corrupt(at, "entry " + e.name + " lacks its ZIP64 sizes");
    field = extra.zip64[next++];
  };
  take64(usize);
  take64(csize);
  take64(offset);
  if (disk != 0 && !(disk == 0xFFFF && next < extra.zip64.size()))
    throw FormatError(Reason::kUnsupportedVariant, at, "multi-volume ZIP archives are not handled");
  e.compressed_size = csize;
  e.uncompressed_size = usize;
  e.local_offset = offset;
  return e;
}

void read_local_header(ByteView bytes, ZipEntry& e, uint64_t cd_offset) {
  ByteReader r(bytes, e.local_offset);
  if (r.u32le() != kLocalSignature)
    corrupt(e.local_offset, "local header of " + e.name + " missing");
  e.local_version_needed = r.u16le();
  e.local_flags = r.u16le();
  const uint16_t method = r.u16le();
  e.local_mod_time = r.u16le();
  e.local_mod_date = r.u16le();
  const uint32_t crc = r.u32le();
  uint64_t csize = r.u32le(), usize = r.u32le();
  const uint16_t name_len = r.u16le(), extra_len = r.u16le();
  ByteView name = r.take(name_len);
  SplitExtra extra = split_extra(r.take(extra_len));
  e.local_extra = std::move(extra.others);
  if (method != e.method || std::string(name.begin(), name.end()) != e.name)
    corrupt(e.local_offset, "local header of " + e.name + " disagrees with the central directory");
  // Streaming readers (Java's ZipInputStream, unzip's checks) go by the local header's CRC and
  // sizes; where it gives them (no data descriptor), they must be the directory's, or the
  // archive reads two ways and a rewrite from the directory would quietly pick one.
  if (!((e.flags | e.local_flags) & kZipFlagDataDescriptor)) {
    size_t next = 0;
    bool known = true;  // a saturated size without its ZIP64 value is not compared
    for (uint64_t* field : {&usize, &csize}) {
      if (*field != k32) continue;
      if (next < extra.zip64.size())
        *field = extra.zip64[next++];
      else
        known = false;
    }
    if (crc != e.crc32 || (known && (csize != e.compressed_size || usize != e.uncompressed_size)))
      corrupt(e.local_offset, "the local header of " + e.name +
                                  " gives another CRC or size than the central directory");
  }
  const uint64_t start = r.offset();
  if (e.compressed_size > cd_offset || start > cd_offset - e.compressed_size)
    corrupt(start, "data of " + e.name + " runs past the central directory");
  e.data = bytes.subspan(start, e.compressed_size);
  e.span_end = start + e.compressed_size;
  if (e.flags & kZipFlagDataDescriptor) {
    ByteReader d(bytes, e.span_end);
    size_t len = 0;
    if (d.remaining() >= 4 && d.u32le() == kDescriptorSignature) len += 4;
    const bool wide = extra.has_zip64 || e.compressed_size >= k32 || e.uncompressed_size >= k32;
    len += 4 + (wide ? 16 : 8);
    if (e.span_end + len > cd_offset)
      corrupt(e.span_end, "data descriptor of " + e.name + " runs past the central directory");
    e.span_end += len;
  }
}

// Every byte before the central directory must belong to exactly one entry.
void check_layout(const ZipArchive& archive, uint64_t cd_offset) {
  const std::vector<ZipEntry>& entries = archive.entries;
  uint64_t expected = 0;
  for (size_t i : local_order(archive)) {
    const ZipEntry& e = entries[i];
    if (e.local_offset < expected)
      corrupt(e.local_offset, "entry " + e.name + " overlaps the entry before it");
    if (e.local_offset > expected)
      throw FormatError(Reason::kUnsupportedVariant, expected,
                        std::to_string(e.local_offset - expected) +
                            " bytes lie outside every entry (a self-extractor stub, a signing "
                            "block or hidden data)");
    expected = e.span_end;
  }
  if (expected != cd_offset)
    throw FormatError(Reason::kUnsupportedVariant, expected,
                      std::to_string(cd_offset - expected) +
                          " bytes lie between the last entry and the central directory (e.g. "
                          "an APK signing block)");
}

void put16(Bytes& out, uint64_t v) {
  out.push_back(uint8_t(v));
  out.push_back(uint8_t(v >> 8));
}
void put32(Bytes& out, uint64_t v) {
  put16(out, v & 0xFFFF);
  put16(out, (v >> 16) & 0xFFFF);
}
void put64(Bytes& out, uint64_t v) {
  put32(out, v & k32);
  put32(out, v >> 32);
}
void append(Bytes& out, ByteView v) { out.insert(out.end(), v.begin(), v.end()); }
void append(Bytes& out, const std::string& v) { out.insert(out.end(), v.begin(), v.end()); }

Bytes zip64_field(const std::vector<uint64_t>& values) {
  Bytes f;
  put16(f, kZip64ExtraId);
  put16(f, values.size() * 8);
  for (uint64_t v : values) put64(f, v);
  return f;
}

}  // namespace

size_t for_each_extra_field(ByteView extra, const std::function<void(uint16_t, ByteView)>& field) {
  size_t pos = 0;
  while (pos + 4 <= extra.size()) {
    const uint16_t id = uint16_t(extra[pos] | extra[pos + 1] << 8);
    const uint16_t size = uint16_t(extra[pos + 2] | extra[pos + 3] << 8);
    if (pos + 4 + size > extra.size()) break;
    field(id, extra.subspan(pos + 4, size));
    pos += 4 + size;
  }
  return pos;
}

bool has_extra_field(ByteView extra, uint16_t id) {
  bool found = false;
  for_each_extra_field(extra, [&](uint16_t field, ByteView) { found = found || field == id; });
  return found;
}

std::vector<size_t> local_order(const ZipArchive& archive) {
  const std::vector<ZipEntry>& entries = archive.entries;
  std::vector<size_t> order(entries.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return entries[a].local_offset < entries[b].local_offset;
  });
  return order;
}

ZipArchive read_zip(ByteView bytes, const ZipLimits& limits) {
  const EndRecord end = read_end(bytes);
  if (end.entries > limits.max_entries)
    throw FormatError(Reason::kLimitExceeded, end.cd_offset,
                      "archive lists " + std::to_string(end.entries) + " entries");
  // Each directory entry takes at least 46 bytes: a count that cannot fit is a lie.
  if (end.entries * 46 > end.cd_size) corrupt(end.cd_offset, "entry count exceeds the directory");
  ZipArchive archive;
  archive.comment = end.comment;
  archive.trailing = end.trailing;
  ByteReader r(bytes.first(end.cd_end), end.cd_offset);
  archive.entries.reserve(end.entries);
  for (uint64_t i = 0; i < end.entries; ++i) archive.entries.push_back(read_central_entry(r));
  if (r.offset() != end.cd_end) {
    refuse_signature_record(bytes, r.offset());
    corrupt(r.offset(), "central directory has trailing bytes");
  }
  for (ZipEntry& e : archive.entries) read_local_header(bytes, e, end.cd_offset);
  check_layout(archive, end.cd_offset);
  return archive;
}

Bytes write_zip(const ZipArchive& archive) {
  Bytes out;
  size_t reserve = 0;
  for (const ZipEntry& e : archive.entries) reserve += e.data.size() + 2 * e.name.size() + 128;
  out.reserve(reserve);
  std::vector<uint64_t> offsets(archive.entries.size());
  for (size_t i : local_order(archive)) {
    const ZipEntry& e = archive.entries[i];
    offsets[i] = out.size();
    const bool wide = e.compressed_size >= k32 || e.uncompressed_size >= k32;
    put32(out, kLocalSignature);
    put16(out, wide ? std::max<uint16_t>(e.local_version_needed, 45) : e.local_version_needed);
    put16(out, e.local_flags & ~kZipFlagDataDescriptor);
    put16(out, e.method);
    put16(out, e.local_mod_time);
    put16(out, e.local_mod_date);
    put32(out, e.crc32);
    put32(out, wide ? k32 : e.compressed_size);
    put32(out, wide ? k32 : e.uncompressed_size);
    Bytes extra = wide ? zip64_field({e.uncompressed_size, e.compressed_size}) : Bytes{};
    append(extra, e.local_extra);
    put16(out, e.name.size());
    put16(out, extra.size());
    append(out, e.name);
    append(out, extra);
    append(out, e.data);
  }
  const uint64_t cd_offset = out.size();
  for (size_t i = 0; i < archive.entries.size(); ++i) {
    const ZipEntry& e = archive.entries[i];
    std::vector<uint64_t> wide;
    if (e.uncompressed_size >= k32) wide.push_back(e.uncompressed_size);
    if (e.compressed_size >= k32) wide.push_back(e.compressed_size);
    if (offsets[i] >= k32) wide.push_back(offsets[i]);
    put32(out, kCentralSignature);
    put16(out, e.version_made_by);
    put16(out, wide.empty() ? e.version_needed : std::max<uint16_t>(e.version_needed, 45));
    put16(out, e.flags & ~kZipFlagDataDescriptor);
    put16(out, e.method);
    put16(out, e.mod_time);
    put16(out, e.mod_date);
    put32(out, e.crc32);
    put32(out, std::min<uint64_t>(e.compressed_size, k32));
    put32(out, std::min<uint64_t>(e.uncompressed_size, k32));
    Bytes extra = wide.empty() ? Bytes{} : zip64_field(wide);
    append(extra, e.central_extra);
    put16(out, e.name.size());
    put16(out, extra.size());
    put16(out, e.comment.size());
    put16(out, 0);  // disk
    put16(out, e.internal_attrs);
    put32(out, e.external_attrs);
    put32(out, std::min<uint64_t>(offsets[i], k32));
    append(out, e.name);
    append(out, extra);
    append(out, e.comment);
  }
  const uint64_t cd_size = out.size() - cd_offset;
  const uint64_t count = archive.entries.size();
  if (count >= 0xFFFF || cd_size >= k32 || cd_offset >= k32) {
    const uint64_t z64 = out.size();
    put32(out, kZip64EndSignature);
    put64(out, 44);
    put16(out, 45), put16(out, 45);
    put32(out, 0), put32(out, 0);
    put64(out, count), put64(out, count);
    put64(out, cd_size), put64(out, cd_offset);
    put32(out, kZip64LocatorSignature);
    put32(out, 0);
    put64(out, z64);
    put32(out, 1);
  }
  put32(out, kEndSignature);
  put16(out, 0), put16(out, 0);
  put16(out, std::min<uint64_t>(count, 0xFFFF));
  put16(out, std::min<uint64_t>(count, 0xFFFF));
  put32(out, std::min<uint64_t>(cd_size, k32));
  put32(out, std::min<uint64_t>(cd_offset, k32));
  put16(out, archive.comment.size());
  append(out, archive.comment);
  append(out, archive.trailing);
  return out;
}

}  // namespace lighten
