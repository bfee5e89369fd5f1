// Excel drawing-group re-writing on synthetic BIFF8 Workbook streams.
#include "formats/office_binary/xls_workbook.h"

#include <gtest/gtest.h>

#include "formats/office_binary/picture_effects.h"
#include "office_binary/record_maker.h"

namespace lighten::xls {
namespace {

using officeart::PictureRewriter;
using testing::biff;
using testing::get32;
using testing::put32;

const PictureRewriter kHalve = [](ByteView image, const std::string&) -> std::optional<Bytes> {
  return Bytes(image.begin(), image.begin() + image.size() / 2);
};

constexpr uint16_t kDefColWidth = 0x0055, kRow = 0x0208, kDbCell = 0x00D7, kSst = 0x00FC;

struct WorkbookSpec {
  size_t chunk = kMaxPayload;  // how the writer split the drawing group
  std::vector<uint16_t> chain_types = {kDrawingGroup, kDrawingGroup, kContinue};
  bool file_pass = false;
  uint16_t version = kBiff8;
  size_t padding = 0;
  Bytes group_properties;  // records after the drawing group's BLIP store
  Bytes sheet_drawing;     // the first sheet's MsoDrawing payload (none when empty)
};

struct Workbook {
  Bytes stream;
  size_t sst_string = 0;  // stream position of the second SST string
};

// Globals (BOF, two BoundSheets, the drawing group, SST + ExtSST, EOF), then a worksheet with
// an INDEX pointing at its DefColWidth and DBCELL, then an empty chart sheet.
Workbook make_workbook(const WorkbookSpec& spec = {}) {
  const Bytes dgg = testing::container(
      officeart::kDggContainer,
      {testing::officeart(0, 0, 0xF006, Bytes(16, 2)),
       testing::container(officeart::kBStoreContainer,
                          {testing::fbse(5025, 0, testing::jpeg_blip(testing::fake_jpeg(5000))),
                           testing::fbse(12025, 0, testing::png_blip(testing::fake_png(12000)), 6)},
                          2),
       spec.group_properties});
  Workbook w;
  Bytes& s = w.stream;
  Bytes bof = testing::biff_bof(0x0005);
  bof[4] = uint8_t(spec.version);
  bof[5] = uint8_t(spec.version >> 8);
  testing::append(s, bof);
  if (spec.file_pass) testing::append(s, biff(kFilePass, Bytes(6, 0)));
  const size_t sheet1_field = s.size() + 4;
  testing::append(s, biff(kBoundSheet, {0, 0, 0, 0, 0, 0, 2, 0, 'A', 'B'}));
  const size_t sheet2_field = s.size() + 4;
  testing::append(s, biff(kBoundSheet, {0, 0, 0, 0, 0, 2, 2, 0, 'C', 'D'}));
  for (size_t at = 0, k = 0; at < dgg.size(); at += spec.chunk, ++k) {
    const size_t n = std::min(spec.chunk, dgg.size() - at);
    const uint16_t type = k < spec.chain_types.size() ? spec.chain_types[k] : kContinue;
    testing::append(s, biff(type, Bytes(dgg.begin() + at, dgg.begin() + at + n)));
  }
  const size_t sst = s.size();
  testing::append(s, biff(kSst, {2, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 'h', 'i', 2, 0, 0, 'y', 'o'}));
  w.sst_string = sst + 4 + 8 + 5;
  Bytes ext_sst = {8, 0};
  put32(ext_sst, uint32_t(w.sst_string));
  ext_sst.insert(ext_sst.end(), {5, 0, 0, 0});
  testing::append(s, biff(kExtSst, ext_sst));
  testing::append(s, biff(kEof, {}));

  const size_t sheet1 = s.size();
  testing::append(s, testing::biff_bof(0x0010));
  const size_t index_at = s.size();
  testing::append(s, biff(kIndex, Bytes(20, 0)));
  const size_t def_col_width = s.size();
  testing::append(s, biff(kDefColWidth, {8, 0}));
  const size_t row = s.size();
  testing::append(s, biff(kRow, Bytes(16, 0)));
  const size_t db_cell = s.size();
  Bytes db = {};
  put32(db, uint32_t(db_cell - row));
  testing::append(s, biff(kDbCell, db));
  if (!spec.sheet_drawing.empty()) testing::append(s, biff(kDrawing, spec.sheet_drawing));
  testing::append(s, biff(kEof, {}));
  officeart::put_u32le(s, index_at + 4 + 12, uint32_t(def_col_width));
  officeart::put_u32le(s, index_at + 4 + 16, uint32_t(db_cell));

  const size_t sheet2 = s.size();
  testing::append(s, testing::biff_bof(0x0020));
  testing::append(s, biff(kEof, {}));
  officeart::put_u32le(s, sheet1_field, uint32_t(sheet1));
  officeart::put_u32le(s, sheet2_field, uint32_t(sheet2));
  s.resize(s.size() + spec.padding, 0);
  return w;
}

uint16_t type_at(const Bytes& s, size_t at) { return uint16_t(s.at(at) | s.at(at + 1) << 8); }

// Every stream position of `out` points where the input's did.
void expect_positions_valid(const Workbook& in, const Bytes& out) {
  const std::vector<Record> records = read_workbook(out);
  size_t sheets = 0, indexes = 0;
  for (const Record& r : records) {
    const size_t p = r.offset + 4;
    if (r.type == kBoundSheet) {
      EXPECT_EQ(type_at(out, get32(out, p)), kBof);
      ++sheets;
    } else if (r.type == kIndex) {
      EXPECT_EQ(type_at(out, get32(out, p + 12)), kDefColWidth);
      EXPECT_EQ(type_at(out, get32(out, p + 16)), kDbCell);
      ++indexes;
    } else if (r.type == kExtSst) {
      const size_t ib = get32(out, p + 2);
      EXPECT_EQ(out.at(ib + 3), 'y');
      EXPECT_EQ(in.stream.at(in.sst_string + 3), 'y');
    }
  }
  EXPECT_EQ(sheets, 2u);
  EXPECT_EQ(indexes, 1u);
}

TEST(XlsWorkbook, ShrinkingPicturesResplitsTheChainAndMovesPositions) {
  const Workbook w = make_workbook();
  const auto out = rewrite_pictures(w.stream, kHalve);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->changed, 2u);
  EXPECT_EQ(out->workbook.size(), w.stream.size() - 2500 - 6000 - 4);  // one record fewer
  const std::vector<Record> records = read_workbook(out->workbook);
  const auto chain = find_drawing_group(records);
  ASSERT_TRUE(chain);
  EXPECT_EQ(chain->last - chain->first, 2u);
  EXPECT_EQ(records[chain->first].length, kMaxPayload);
  EXPECT_EQ(records[chain->first + 1].type, kDrawingGroup);  // the writer's types are kept
  expect_positions_valid(w, out->workbook);
  std::vector<officeart::PicturePair> changed;
  EXPECT_EQ(compare_workbooks(w.stream, out->workbook, changed), "");
  ASSERT_EQ(changed.size(), 2u);
  EXPECT_EQ(changed[0].before.size(), 5000u);
  EXPECT_EQ(changed[1].after.size(), 6000u);
}

TEST(XlsWorkbook, SmallContinueRecordsAreMergedUpTo8224Bytes) {
  WorkbookSpec spec;
  spec.chunk = 1000;  // a picture straddles many record boundaries
  spec.chain_types = {kDrawingGroup};
  const Workbook w = make_workbook(spec);
  const auto out = rewrite_pictures(w.stream, kHalve);
  ASSERT_TRUE(out);
  const std::vector<Record> records = read_workbook(out->workbook);
  const auto chain = find_drawing_group(records);
  ASSERT_TRUE(chain);
  EXPECT_EQ(chain->last - chain->first, 2u);
  EXPECT_EQ(records[chain->first + 1].type, kContinue);
  expect_positions_valid(w, out->workbook);
  std::vector<officeart::PicturePair> changed;
  EXPECT_EQ(compare_workbooks(w.stream, out->workbook, changed), "");
}

TEST(XlsWorkbook, ExactBoundaryGivesFullRecords) {
  // A picture that shrinks the drawing group to exactly two full records.
  const Workbook w = make_workbook();
  const size_t dgg_size = 8 + 24 + 8 + 36 + 5025 + 36 + 12025 + 8 + 8;
  const PictureRewriter to_fit = [&](ByteView image, const std::string&) -> std::optional<Bytes> {
    if (image.size() != 12000) return std::nullopt;
    return Bytes(image.begin(), image.end() - (dgg_size - 2 * kMaxPayload));
  };
  const auto out = rewrite_pictures(w.stream, to_fit);
  ASSERT_TRUE(out);
  const std::vector<Record> records = read_workbook(out->workbook);
  const auto chain = find_drawing_group(records);
  ASSERT_EQ(chain->last - chain->first, 2u);
  EXPECT_EQ(records[chain->first + 1].length, kMaxPayload);
  expect_positions_valid(w, out->workbook);
}

TEST(XlsWorkbook, PaddingIsKept) {
  WorkbookSpec spec;
  spec.padding = 300;
  const Workbook w = make_workbook(spec);
  const auto out = rewrite_pictures(w.stream, kHalve);
  ASSERT_TRUE(out);
  EXPECT_TRUE(std::all_of(out->workbook.end() - 300, out->workbook.end(),
                          [](uint8_t b) { return b == 0; }));
  std::vector<officeart::PicturePair> changed;
  EXPECT_EQ(compare_workbooks(w.stream, out->workbook, changed), "");
}

Reason reason_of(const Bytes& stream) {
  try {
    rewrite_pictures(stream, kHalve);
  } catch (const FormatError& e) {
    return e.reason();
  }
  return Reason::kOptimized;
}

TEST(XlsWorkbook, RefusesWhatItCannotRewrite) {
  WorkbookSpec spec;
  spec.file_pass = true;
  EXPECT_EQ(reason_of(make_workbook(spec).stream), Reason::kEncrypted);
  spec = {};
  spec.version = 0x0500;
  EXPECT_EQ(reason_of(make_workbook(spec).stream), Reason::kUnsupportedVariant);

  const Workbook w = make_workbook();
  Bytes s = w.stream;
  officeart::put_u32le(s, 20 + 4, uint32_t(s.size() + 10));  // lbPlyPos past the stream
  EXPECT_EQ(reason_of(s), Reason::kCorrupt);
  s = w.stream;
  officeart::put_u32le(s, 20 + 4, 60);  // lbPlyPos into the drawing group
  EXPECT_EQ(reason_of(s), Reason::kCorrupt);
  EXPECT_EQ(reason_of(Bytes(w.stream.begin(), w.stream.end() - 3)), Reason::kTruncated);
  s = w.stream;
  s[2] = 0xFF;  // the BOF runs past the stream
  s[3] = 0xFF;
  EXPECT_NE(reason_of(Bytes(s.begin(), s.begin() + 100)), Reason::kOptimized);
  EXPECT_EQ(reason_of(Bytes{1, 2}), Reason::kTruncated);

  // A second drawing group in the globals.
  s = w.stream;
  const std::vector<Record> records = read_workbook(s);
  const auto sst =
      std::find_if(records.begin(), records.end(), [](const Record& r) { return r.type == kSst; });
  Bytes extra(s.begin() + records[3].offset, s.begin() + records[3].end());
  s.insert(s.begin() + sst->end(), extra.begin(), extra.end());
  EXPECT_NE(reason_of(s), Reason::kOptimized);
}

// Effects are read from the sheets' shapes and from the drawing group's defaults, never from
// the pictures' bytes.
TEST(XlsWorkbook, DrawingsWithoutPicturesHoldTheShapesAndTheGroupsDefaults) {
  using officeart::shows_pictures_through_effects;
  EXPECT_TRUE(drawings_without_pictures(make_workbook().stream).empty());

  const Bytes colour_key = testing::property_table({{officeart::kPictureTransparent, 0xFFFFFF}});
  WorkbookSpec spec;
  spec.group_properties = colour_key;
  const Bytes group = drawings_without_pictures(make_workbook(spec).stream);
  EXPECT_EQ(group, colour_key);
  EXPECT_TRUE(shows_pictures_through_effects(group));
  spec.group_properties = testing::officeart(0, 0, 0xF11E, colour_key);  // SplitMenuColors
  EXPECT_TRUE(drawings_without_pictures(make_workbook(spec).stream).empty());

  spec = {};
  spec.sheet_drawing = testing::container(0xF002, {colour_key});  // a sheet's DgContainer
  EXPECT_TRUE(
      shows_pictures_through_effects(drawings_without_pictures(make_workbook(spec).stream)));
}

TEST(XlsWorkbook, NoDrawingGroupNoChange) {
  Bytes s = testing::biff_bof(0x0005);
  testing::append(s, biff(kEof, {}));
  EXPECT_FALSE(rewrite_pictures(s, kHalve));
}

TEST(XlsWorkbook, CompareRejectsTampering) {
  const Workbook w = make_workbook();
  const auto out = rewrite_pictures(w.stream, kHalve);
  ASSERT_TRUE(out);
  std::vector<officeart::PicturePair> changed;
  Bytes s = out->workbook;
  officeart::put_u32le(s, 20 + 4, get32(s, 20 + 4) + 1);  // lbPlyPos off by one
  EXPECT_NE(compare_workbooks(w.stream, s, changed), "");
  s = out->workbook;
  s[20 + 4 + 8] ^= 1;  // the sheet's name
  EXPECT_NE(compare_workbooks(w.stream, s, changed), "");
  s = out->workbook;
  s.back() ^= 1;  // the chart sheet's EOF
  EXPECT_NE(compare_workbooks(w.stream, s, changed), "");
}

}  // namespace
}  // namespace lighten::xls
