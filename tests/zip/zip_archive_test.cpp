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

}  // namespace
}  // namespace lighten
