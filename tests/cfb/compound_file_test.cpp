#include "formats/cfb/compound_file.h"

#include <gtest/gtest.h>

#include <numeric>

#include "cfb/cfb_maker.h"
#include "lighten/lighten.h"
#include "support/corpus.h"

namespace lighten::cfb {
namespace {

using testing::CfbItem;
using testing::make_cfb;

uint32_t get_le32(const Bytes& b, size_t at) {
  return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 |
         uint32_t(b[at + 3]) << 24;
}
void put_le32(Bytes& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = uint8_t(v >> (8 * i));
}

Bytes pattern(size_t size, uint32_t seed) {
  Bytes b(size);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& v : b) {
    x = x * 1103515245u + 12345u;
    v = uint8_t(x >> 16);
  }
  return b;
}

std::vector<CfbItem> sample_items() {
  return {{"FileHeader", pattern(256, 1)},
          {"DocInfo", pattern(5000, 2)},
          {"BodyText/Section0", pattern(100, 3)},
          {"BodyText/Section1", pattern(4096, 4)},
          {"BinData/BIN0001.jpg", pattern(70000, 5)},
          {"Empty", {}},
          {"\x05HwpSummaryInformation", pattern(4095, 6)},
          {"Scripts", {}, true}};
}

// Every entry, record and stream of `a` is in `b`.
void expect_same(const CompoundFile& a, const CompoundFile& b) {
  ASSERT_EQ(a.entries().size(), b.entries().size());
  for (size_t i = 0; i < a.entries().size(); ++i) {
    const DirectoryEntry& x = a.entries()[i];
    const DirectoryEntry& y = b.entries()[i];
    EXPECT_EQ(x.path, y.path);
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(a.entry_record(i), b.entry_record(i)) << "entry " << i;
    if (x.type == EntryType::kStream) {
      EXPECT_EQ(x.size, y.size);
      EXPECT_EQ(a.read_stream(x.path), b.read_stream(y.path)) << x.path;
    }
  }
}

TEST(CfbCompoundFile, ReadsGeneratedFile) {
  for (bool reverse : {false, true}) {
    const auto items = sample_items();
    const Bytes file = make_cfb(items, {3, reverse});
    const CompoundFile cfb = CompoundFile::parse(file);
    EXPECT_EQ(cfb.major_version(), 3);
    EXPECT_EQ(cfb.entries()[0].type, EntryType::kRoot);
    for (const CfbItem& item : items) {
      if (item.storage) continue;
      auto data = cfb.read_stream(item.path);
      ASSERT_TRUE(data) << item.path;
      EXPECT_EQ(*data, item.data) << item.path;
    }
    EXPECT_FALSE(cfb.read_stream("BinData"));  // a storage, not a stream
    EXPECT_FALSE(cfb.read_stream("Nope"));
    const auto paths = cfb.stream_paths();
    EXPECT_EQ(paths.size(), 7u);
  }
}

// Readers match names regardless of case: a stream is found so, and two streams one name would
// find leave readers to pick either (a PPT with 'PICTURES' beside 'Pictures' lost pictures in
// LibreOffice once lighten rewrote the one it matched exactly).
TEST(CfbCompoundFile, NamesMatchRegardlessOfCaseAndTwoAlikeAreCorrupt) {
  const CompoundFile cfb = CompoundFile::parse(make_cfb(sample_items(), {3, false}));
  ASSERT_TRUE(cfb.read_stream("bindata/bin0001.JPG"));
  EXPECT_EQ(*cfb.read_stream("bindata/bin0001.JPG"), *cfb.read_stream("BinData/BIN0001.jpg"));
  for (const char* twin : {"Pictures", "DocInfo"}) {
    SCOPED_TRACE(twin);
    std::vector<CfbItem> items = sample_items();
    items.push_back({twin, pattern(600, 7)});
    items.push_back({twin == std::string("DocInfo") ? "DOCINFO" : "PICTURES", pattern(600, 8)});
    try {
      CompoundFile::parse(make_cfb(items, {3, false}));
      ADD_FAILURE() << "parsed";
    } catch (const FormatError& e) {
      EXPECT_EQ(e.reason(), Reason::kCorrupt);
      EXPECT_NE(std::string(e.what()).find("regardless of case"), std::string::npos) << e.what();
    }
  }
}

TEST(CfbCompoundFile, RoundTripKeepsEverything) {
  for (uint16_t major : {3, 4}) {
    const Bytes file = make_cfb(sample_items(), {major, major == 4});
    const CompoundFile a = CompoundFile::parse(file);
    const Bytes out = a.serialize();
    const CompoundFile b = CompoundFile::parse(out);
    EXPECT_EQ(b.major_version(), major);
    EXPECT_EQ(b.sector_size(), major == 4 ? 4096u : 512u);
    expect_same(a, b);
    EXPECT_EQ(out, b.serialize()) << "serialising is deterministic and idempotent";
    EXPECT_EQ(out.size() % b.sector_size(), 0u);
  }
}

// Bytes after the last sector in use are data another tool appended: they follow the output's
// last sector. Zero padding there is let go.
TEST(CfbCompoundFile, BytesAfterTheLastSectorAreKept) {
  for (uint16_t major : {3, 4}) {
    SCOPED_TRACE(major);
    const Bytes file = make_cfb(sample_items(), {major, false});
    const Bytes appended = pattern(1000, 9);  // not a whole sector
    Bytes with_tail = file;
    with_tail.insert(with_tail.end(), appended.begin(), appended.end());
    CompoundFile a = CompoundFile::parse(with_tail);
    EXPECT_EQ(a.trailing(), appended);
    a.replace_stream("DocInfo", pattern(3000, 7));
    const Bytes out = a.serialize();
    ASSERT_GT(out.size(), appended.size());
    EXPECT_TRUE(std::equal(appended.begin(), appended.end(), out.end() - long(appended.size())));
    const CompoundFile b = CompoundFile::parse(out);
    EXPECT_EQ(b.trailing(), appended);
    EXPECT_EQ(b.serialize(), out);

    // A FAT sector the FAT does not mark (some writers leave its entry free) is the file's,
    // not something appended. Here the last FAT sector is copied to a new last sector, which
    // the header then names.
    const uint32_t size = major == 3 ? 512 : 4096;
    Bytes moved = file;
    const uint32_t fat_count = moved[44] | moved[45] << 8;
    const size_t slot = 76 + 4 * size_t(fat_count - 1);
    const uint32_t last_fat = moved[slot] | moved[slot + 1] << 8 | moved[slot + 2] << 16 |
                              uint32_t(moved[slot + 3]) << 24;
    const uint32_t fresh = uint32_t(moved.size() / size - 1);
    moved.insert(moved.end(), file.begin() + long((last_fat + 1) * size),
                 file.begin() + long((last_fat + 2) * size));
    for (int i = 0; i < 4; ++i) moved[slot + size_t(i)] = uint8_t(fresh >> (8 * i));
    ASSERT_EQ(CompoundFile::parse(moved).read_stream("DocInfo"),
              CompoundFile::parse(file).read_stream("DocInfo"));
    EXPECT_TRUE(CompoundFile::parse(moved).trailing().empty());

    Bytes padded = file;
    padded.resize(file.size() + 3 * 512, 0);
    EXPECT_TRUE(CompoundFile::parse(padded).trailing().empty());
    EXPECT_EQ(CompoundFile::parse(padded).serialize(), CompoundFile::parse(file).serialize());
  }
}

// A 4096-byte header sector holds 3584 bytes after the header that the specification wants
// zero; what a writer put there is kept, not zeroed without a word.
TEST(CfbCompoundFile, BytesAfterTheHeaderInItsSectorAreKept) {
  Bytes file = make_cfb(sample_items(), {4, false});
  const Bytes hidden = pattern(100, 5);
  std::copy(hidden.begin(), hidden.end(), file.begin() + 512);
  CompoundFile a = CompoundFile::parse(file);
  a.replace_stream("DocInfo", pattern(3000, 7));
  const Bytes out = a.serialize();
  EXPECT_TRUE(std::equal(hidden.begin(), hidden.end(), out.begin() + 512));
  EXPECT_EQ(CompoundFile::parse(out).serialize(), out);
}

TEST(CfbCompoundFile, ReplaceMovesStreamsBetweenMiniAndRegular) {
  CompoundFile cfb = CompoundFile::parse(make_cfb(sample_items()));
  const CompoundFile original = cfb;
  cfb.replace_stream("DocInfo", pattern(10, 7));              // regular -> mini
  cfb.replace_stream("BodyText/Section0", pattern(9000, 8));  // mini -> regular
  cfb.replace_stream("\x05HwpSummaryInformation", Bytes{});   // to empty
  cfb.replace_stream("Empty", pattern(4096, 9));              // from empty, exactly the cutoff
  EXPECT_THROW(cfb.replace_stream("BinData", Bytes{1}), FormatError);
  EXPECT_THROW(cfb.replace_stream("Missing", Bytes{1}), FormatError);
  const CompoundFile back = CompoundFile::parse(cfb.serialize());
  EXPECT_EQ(*back.read_stream("DocInfo"), pattern(10, 7));
  EXPECT_EQ(*back.read_stream("BodyText/Section0"), pattern(9000, 8));
  EXPECT_TRUE(back.read_stream("\x05HwpSummaryInformation")->empty());
  EXPECT_EQ(*back.read_stream("Empty"), pattern(4096, 9));
  EXPECT_EQ(*back.read_stream("BinData/BIN0001.jpg"), pattern(70000, 5));
  for (size_t i = 0; i < back.entries().size(); ++i)
    EXPECT_EQ(back.entry_record(i), original.entry_record(i));
  // The copy taken before the replacements still holds the original streams.
  EXPECT_EQ(*original.read_stream("DocInfo"), pattern(5000, 2));
}

// More than 109 FAT sectors: the FAT is listed in DIFAT sectors (v3: over ~7 MB).
TEST(CfbCompoundFile, LargeFileNeedsDifat) {
  auto items = sample_items();
  items.push_back({"Big", pattern(8u << 20, 10)});
  const Bytes file = make_cfb(items, {3, true});
  const CompoundFile a = CompoundFile::parse(file);
  EXPECT_EQ(a.read_stream("Big")->size(), 8u << 20);
  const Bytes out = a.serialize();
  const uint32_t fat_sectors = get_le32(out, 44), difat_sectors = get_le32(out, 72);
  EXPECT_GT(fat_sectors, 109u);
  EXPECT_GE(difat_sectors, 1u);
  const CompoundFile b = CompoundFile::parse(out);
  expect_same(a, b);
}

TEST(CfbCompoundFile, RejectsBadHeaders) {
  const Bytes file = make_cfb(sample_items());
  EXPECT_THROW(CompoundFile::parse(ByteView(file).first(100)), FormatError);
  Bytes bad = file;
  bad[0] = 0;
  EXPECT_THROW(CompoundFile::parse(bad), FormatError);
  bad = file;
  bad[30] = 10;  // sector shift
  EXPECT_THROW(CompoundFile::parse(bad), FormatError);
  EXPECT_THROW(CompoundFile::parse(Bytes{}), FormatError);
}

Reason reason_of(const Bytes& bytes) {
  try {
    CompoundFile::parse(bytes);
  } catch (const FormatError& e) {
    return e.reason();
  }
  return Reason::kOptimized;
}

// The generated file: streams first, so sectors 0-9 are the chain of DocInfo.
TEST(CfbCompoundFile, RejectsCorruptChains) {
  const Bytes file = make_cfb(sample_items());
  const size_t fat_sector = get_le32(file, 76);
  const size_t fat_at = (fat_sector + 1) * 512;
  Bytes cycle = file;
  put_le32(cycle, fat_at + 4 * 3, 1);  // sector 3 -> 1: a loop
  EXPECT_EQ(reason_of(cycle), Reason::kCorrupt);
  Bytes self = file;
  put_le32(self, fat_at + 4 * 0, 0);
  EXPECT_EQ(reason_of(self), Reason::kCorrupt);
  Bytes outside = file;
  put_le32(outside, fat_at + 4 * 2, 0x00FFFFFF);
  EXPECT_EQ(reason_of(outside), Reason::kCorrupt);
  Bytes early_end = file;
  put_le32(early_end, fat_at + 4 * 2, 0xFFFFFFFE);  // chain shorter than the stream's size
  EXPECT_EQ(reason_of(early_end), Reason::kCorrupt);
  Bytes free_link = file;
  put_le32(free_link, fat_at + 4 * 2, 0xFFFFFFFF);
  EXPECT_EQ(reason_of(free_link), Reason::kCorrupt);
}

TEST(CfbCompoundFile, RejectsDirectoryLoops) {
  const Bytes file = make_cfb(sample_items());
  const size_t dir_at = (get_le32(file, 48) + 1) * 512;
  Bytes loop = file;
  put_le32(loop, dir_at + 128 * 1 + 72, 1);  // entry 1's right sibling is itself
  EXPECT_EQ(reason_of(loop), Reason::kCorrupt);
  Bytes out_of_range = file;
  put_le32(out_of_range, dir_at + 76, 5000);  // root's child
  EXPECT_EQ(reason_of(out_of_range), Reason::kCorrupt);
  Bytes no_root = file;
  no_root[dir_at + 66] = 1;
  EXPECT_EQ(reason_of(no_root), Reason::kCorrupt);
}

// Paths grow with nesting; absurd nesting is refused rather than allowed to use quadratic memory.
TEST(CfbCompoundFile, BoundsNesting) {
  std::string deep;
  for (int i = 0; i < 20; ++i) deep += "s/";
  const CompoundFile ok = CompoundFile::parse(make_cfb({{deep + "leaf", pattern(10, 1)}}));
  EXPECT_EQ(*ok.read_stream(deep + "leaf"), pattern(10, 1));
  for (int i = 20; i < 200; ++i) deep += "s/";
  EXPECT_EQ(reason_of(make_cfb({{deep + "leaf", pattern(10, 1)}})), Reason::kCorrupt);
  // Many streams under long-named storages: their paths together may not outgrow the file
  // many times over (each is held twice); the same streams higher up are read.
  std::string long_named;
  for (int i = 0; i < 100; ++i) long_named += std::string(30, char('a' + i % 26)) + "/";
  std::vector<CfbItem> low, high;
  for (int i = 0; i < 2000; ++i) {
    low.push_back({long_named + "stream" + std::to_string(i), pattern(8, uint32_t(i))});
    high.push_back(
        {long_named.substr(0, 31 * 3) + "stream" + std::to_string(i), pattern(8, uint32_t(i))});
  }
  EXPECT_EQ(reason_of(make_cfb(low)), Reason::kCorrupt);
  EXPECT_EQ(CompoundFile::parse(make_cfb(high)).stream_paths().size(), 2000u);
}

TEST(CfbCompoundFile, RejectsTruncation) {
  const Bytes file = make_cfb(sample_items());
  for (size_t keep : {size_t(512), size_t(1024), file.size() / 2, file.size() - 512}) {
    const Reason r = reason_of(Bytes(file.begin(), file.begin() + keep));
    EXPECT_TRUE(r == Reason::kTruncated || r == Reason::kCorrupt) << keep;
  }
}

// A compound file of no kind lighten optimises is left alone as such, naming what it holds; cut
// short (as a PPT or XLS cut before its directory, which no longer tells its kind), it is left
// alone with what is wrong with it; a password-protected OOXML document is named encrypted.
TEST(CfbFormat, OtherCompoundFilesAreLeftAloneWithAReason) {
  const Bytes file = make_cfb(
      {{"__substg1.0_0037001F", pattern(3000, 1)}, {"\x05SummaryInformation", pattern(700, 2)}});
  ASSERT_EQ(sniff(file), Kind::kCfb);
  const Outcome intact = optimize(file, Policy{});
  EXPECT_FALSE(intact.replaced());
  EXPECT_EQ(intact.reason, Reason::kUnsupportedKind);
  EXPECT_NE(intact.message.find("SummaryInformation"), std::string::npos) << intact.message;
  const Bytes cut(file.begin(), file.begin() + ptrdiff_t(file.size() / 2));
  ASSERT_EQ(sniff(cut), Kind::kCfb);
  const Outcome truncated = optimize(cut, Policy{});
  EXPECT_FALSE(truncated.replaced());
  EXPECT_TRUE(truncated.reason == Reason::kTruncated || truncated.reason == Reason::kCorrupt)
      << reason_name(truncated.reason) << ": " << truncated.message;
  // Office's password protection wraps the OOXML package in a compound file.
  const Bytes encrypted =
      make_cfb({{"EncryptionInfo", pattern(600, 3)}, {"EncryptedPackage", pattern(9000, 4)}});
  ASSERT_EQ(sniff(encrypted), Kind::kCfb);
  const Outcome locked = optimize(encrypted, Policy{});
  EXPECT_FALSE(locked.replaced());
  EXPECT_EQ(locked.reason, Reason::kEncrypted) << locked.message;
}

TEST(CfbCompoundFile, EverySingleByteCorruptionIsHandled) {
  const Bytes file = make_cfb(sample_items());
  for (size_t at = 0; at < file.size(); at += 7) {
    Bytes bad = file;
    bad[at] ^= 0xA5;
    try {
      const CompoundFile cfb = CompoundFile::parse(bad);
      (void)CompoundFile::parse(cfb.serialize());
    } catch (const FormatError&) {
    }
  }
}

// Real compound files: HWP documents and Office 97-2003 files of the shared corpus.
TEST(CfbCompoundFile, CorpusRoundTrip) {
  std::vector<std::filesystem::path> files = testing::corpus_files("hwp");
  LIGHTEN_REQUIRE_CORPUS(files, "hwp");
  for (const auto& f : testing::corpus_files("office"))
    if (f.extension() == ".ppt" || f.extension() == ".xls" || f.extension() == ".doc")
      files.push_back(f);
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    const Bytes bytes = testing::read_file(path);
    const CompoundFile a = CompoundFile::parse(bytes);
    const Bytes out = a.serialize();
    const CompoundFile b = CompoundFile::parse(out);
    expect_same(a, b);
    std::cout << path.filename().string() << ": " << bytes.size() << " -> " << out.size()
              << " bytes, " << a.entries().size() << " entries\n";
  }
}

TEST(CfbCompoundFile, BrokenCorpusFailsCleanly) {
  const auto files = testing::corpus_files("broken");
  LIGHTEN_REQUIRE_CORPUS(files, "broken");
  for (const auto& path : files) {
    const Bytes bytes = testing::read_file(path);
    try {
      const CompoundFile a = CompoundFile::parse(bytes);
      expect_same(a, CompoundFile::parse(a.serialize()));
    } catch (const FormatError&) {
    }
  }
}

}  // namespace
}  // namespace lighten::cfb
