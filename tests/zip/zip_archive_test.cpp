// Reading and writing ZIP archives: order, fields, descriptors, and refusal of damaged layouts.
#include <gtest/gtest.h>

#include "formats/zip/zip_archive.h"
#include "support/zip_maker.h"

namespace lighten {
namespace {

using testing::make_zip;
using testing::text_bytes;

TEST(ZipArchive, RoundTripKeepsEntriesInOrder) {
  const auto zip = make_zip(
      {{.name = "mimetype", .content = text_bytes("application/hwp+zip"), .deflate = false},
       {.name = "b.xml", .content = text_bytes(std::string(500, 'b'))},
       {.name = "a.xml", .content = text_bytes("<a/>")}},
      "a comment");
  const ZipArchive archive = read_zip(zip);
  ASSERT_EQ(archive.entries.size(), 3u);
  EXPECT_EQ(archive.entries[0].name, "mimetype");
  EXPECT_EQ(archive.entries[1].name, "b.xml");
  EXPECT_EQ(archive.entries[2].name, "a.xml");
  EXPECT_EQ(std::string(archive.comment.begin(), archive.comment.end()), "a comment");
  EXPECT_EQ(archive.entries[1].external_attrs, 0x81A40000u);
  // Written back unchanged, the archive is byte-identical.
  EXPECT_EQ(write_zip(archive), zip);
}

TEST(ZipArchive, DataDescriptorsAreNotWrittenBack) {
  const auto zip = make_zip(
      {{.name = "x.xml", .content = text_bytes(std::string(300, 'x')), .data_descriptor = true}});
  const ZipArchive archive = read_zip(zip);
  ASSERT_EQ(archive.entries.size(), 1u);
  EXPECT_TRUE(archive.entries[0].flags & kZipFlagDataDescriptor);
  const Bytes rewritten = write_zip(archive);
  EXPECT_LT(rewritten.size(), zip.size());
  const ZipArchive again = read_zip(rewritten);
  EXPECT_FALSE(again.entries[0].flags & kZipFlagDataDescriptor);
  EXPECT_EQ(again.entries[0].crc32, archive.entries[0].crc32);
  EXPECT_TRUE(std::equal(again.entries[0].data.begin(), again.entries[0].data.end(),
                         archive.entries[0].data.begin(), archive.entries[0].data.end()));
}

// Streaming readers take the CRC and sizes from the local header: one that disagrees with the
// directory is damage, not something a rewrite from the directory should quietly settle.
TEST(ZipArchive, ALocalHeaderGivingAnotherCrcOrSizeIsRefused) {
  const auto zip = make_zip({{.name = "a.xml", .content = text_bytes(std::string(200, 'a'))}});
  for (const size_t field : {14u, 18u, 22u}) {  // CRC, compressed size, uncompressed size
    auto damaged = zip;
    damaged[field] ^= 0x01;
    try {
      read_zip(damaged);
      ADD_FAILURE() << "local field at " << field << " was not compared";
    } catch (const FormatError& e) {
      EXPECT_EQ(e.reason(), Reason::kCorrupt);
      EXPECT_NE(std::string(e.what()).find("local header of a.xml"), std::string::npos) << e.what();
    }
  }
  // With a data descriptor the local fields are zero, and the directory's count.
  const auto described = make_zip(
      {{.name = "a.xml", .content = text_bytes(std::string(200, 'a')), .data_descriptor = true}});
  EXPECT_EQ(read_zip(described).entries.size(), 1u);
}

TEST(ZipArchive, BytesAfterTheEndRecordAreKept) {
  auto zip = make_zip({{.name = "a.xml", .content = text_bytes("<a/>")}});
  zip.push_back(0x0A);  // seen in the wild: a newline appended by a web server
  const ZipArchive archive = read_zip(zip);
  EXPECT_EQ(archive.trailing, Bytes{0x0A});
  EXPECT_EQ(write_zip(archive), zip);
}

TEST(ZipArchive, TruncatedArchiveIsRefused) {
  auto zip = make_zip({{.name = "a.xml", .content = text_bytes("<a/>")}});
  zip.resize(zip.size() - 5);
  EXPECT_THROW(read_zip(zip), FormatError);
}

TEST(ZipArchive, BytesOutsideEntriesAreRefused) {
  auto zip = make_zip({{.name = "a.xml", .content = text_bytes("<a/>")}});
  // A stub before the first entry shifts every offset: the local header is not where the
  // directory says.
  Bytes prefixed(16, 'X');
  prefixed.insert(prefixed.end(), zip.begin(), zip.end());
  EXPECT_THROW(read_zip(prefixed), FormatError);
}

TEST(ZipArchive, OverlappingEntriesAreRefused) {
  auto zip = make_zip({{.name = "a.xml", .content = text_bytes("<a/>"), .deflate = false},
                       {.name = "b.xml", .content = text_bytes("<b/>"), .deflate = false}});
  ZipArchive archive = read_zip(zip);
  // Point the second directory entry at the first local header.
  const size_t cd = zip.size() - 22 - 2 * 46 - 10;
  const size_t second_offset_field = cd + 46 + 5 + 42;
  ASSERT_EQ(zip[second_offset_field], archive.entries[1].local_offset & 0xFF);
  zip[second_offset_field] = 0;
  EXPECT_THROW(read_zip(zip), FormatError);
}

TEST(ZipArchive, LyingEntryCountIsRefusedWithoutHugeAllocation) {
  auto zip = make_zip({{.name = "a.xml", .content = text_bytes("<a/>")}});
  zip[zip.size() - 22 + 8] = 0xFF;  // entries on this disk
  zip[zip.size() - 22 + 9] = 0xFF;
  zip[zip.size() - 22 + 10] = 0xFF;  // entries in total
  zip[zip.size() - 22 + 11] = 0xFF;
  EXPECT_THROW(read_zip(zip), FormatError);
}

uint64_t read_le(const Bytes& b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | b[at + size_t(i)];
  return v;
}

void put_le(Bytes& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(uint8_t(v >> (8 * i)));
}

// Puts a ZIP64 end record, with `extensible` bytes after its 44 fixed ones, and its locator
// before the end record of an archive without a comment, as a streaming writer may.
Bytes with_zip64_end(const Bytes& zip, const Bytes& extensible) {
  const size_t eocd = zip.size() - 22;
  const uint64_t entries = read_le(zip, eocd + 10, 2), cd_size = read_le(zip, eocd + 12, 4),
                 cd_offset = read_le(zip, eocd + 16, 4);
  Bytes out(zip.begin(), zip.begin() + long(eocd));
  const uint64_t z64 = out.size();
  put_le(out, 0x06064b50, 4);
  put_le(out, 44 + extensible.size(), 8);
  put_le(out, 45, 2), put_le(out, 45, 2), put_le(out, 0, 4), put_le(out, 0, 4);
  put_le(out, entries, 8), put_le(out, entries, 8);
  put_le(out, cd_size, 8), put_le(out, cd_offset, 8);
  out.insert(out.end(), extensible.begin(), extensible.end());
  put_le(out, 0x07064b50, 4), put_le(out, 0, 4), put_le(out, z64, 8), put_le(out, 1, 4);
  out.insert(out.end(), zip.begin() + long(eocd), zip.end());
  return out;
}

Reason refusal(const Bytes& zip) {
  try {
    read_zip(zip);
  } catch (const FormatError& e) {
    return e.reason();
  }
  return Reason::kOptimized;
}

TEST(ZipArchive, Zip64EndRecordIsReadAndExtensibleDataIsRefused) {
  const auto zip = make_zip({{.name = "a.xml", .content = text_bytes("<a/>")},
                             {.name = "b.xml", .content = text_bytes(std::string(90, 'b'))}});
  const Bytes wide_zip = with_zip64_end(zip, {});  // the archive's entries point into it
  const ZipArchive wide = read_zip(wide_zip);
  ASSERT_EQ(wide.entries.size(), 2u);
  EXPECT_EQ(write_zip(wide), zip);  // small enough for the plain end record alone
  // Eight bytes of vendor data after the fixed fields: valid, but a rewrite would lose them.
  EXPECT_EQ(refusal(with_zip64_end(zip, text_bytes("vendor!!"))), Reason::kUnsupportedVariant);
  // A locator that points into the middle of the record is damage, not a variant.
  Bytes damaged = with_zip64_end(zip, {});
  damaged[damaged.size() - 22 - 20 + 8] += 4;
  EXPECT_EQ(refusal(damaged), Reason::kCorrupt);
}

// A signature record after the directory entries signs the directory as it is written.
TEST(ZipArchive, SignedCentralDirectoryIsRefused) {
  const auto zip = make_zip({{.name = "a.xml", .content = text_bytes("<a/>")}});
  const size_t eocd = zip.size() - 22;
  Bytes signature = text_bytes("PK\x05\x05");
  put_le(signature, 6, 2);
  const Bytes sig_data = text_bytes("sig123");
  signature.insert(signature.end(), sig_data.begin(), sig_data.end());
  // Writers differ on whether the directory's size counts the record; both are refused.
  for (const bool counted : {true, false}) {
    Bytes signed_zip(zip.begin(), zip.begin() + long(eocd));
    signed_zip.insert(signed_zip.end(), signature.begin(), signature.end());
    Bytes end(zip.begin() + long(eocd), zip.end());
    if (counted) {
      end.resize(12);
      put_le(end, read_le(zip, eocd + 12, 4) + signature.size(), 4);
      end.insert(end.end(), zip.begin() + long(eocd) + 16, zip.end());
    }
    signed_zip.insert(signed_zip.end(), end.begin(), end.end());
    EXPECT_EQ(refusal(signed_zip), Reason::kSigned) << counted;
  }
}

}  // namespace
}  // namespace lighten
