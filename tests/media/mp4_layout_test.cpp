// What the remux of an MP4 keeps of its structure: boxes it cannot carry are refused before any
// encoding, the moov stays first where it was first, bytes after the last box stay after it,
// and user data the muxer would drop is named; and a VBR MP3 track in an AVI keeps its header.
#include "formats/media/mp4_boxes.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/errors.h"
#include "formats/media/frame_gate.h"
#include "formats/media/mp4_sample_entries.h"
#include "formats/media/mp4_sample_tables.h"
#include "lighten/lighten.h"
#include "support/corpus.h"

namespace lighten::media {
namespace {

namespace fs = std::filesystem;

// Sized once and filled by position (GCC 12 warns falsely on push_back and insert here).
void set32(Bytes& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + size_t(i)] = uint8_t(v >> (24 - 8 * i));
}
uint32_t get32(const Bytes& b, size_t at) {
  return uint32_t(b[at]) << 24 | uint32_t(b[at + 1]) << 16 | uint32_t(b[at + 2]) << 8 | b[at + 3];
}
Bytes box(const std::string& type, const Bytes& body) {
  Bytes b(8 + body.size());
  set32(b, 0, uint32_t(b.size()));
  std::memcpy(b.data() + 4, type.data(), 4);
  if (!body.empty()) std::memcpy(b.data() + 8, body.data(), body.size());
  return b;
}
Bytes cat(std::initializer_list<Bytes> parts) {
  size_t size = 0;
  for (const Bytes& p : parts) size += p.size();
  Bytes out(size);
  size_t at = 0;
  for (const Bytes& p : parts) {
    if (!p.empty()) std::memcpy(out.data() + at, p.data(), p.size());
    at += p.size();
  }
  return out;
}
Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }

// ftyp, an mdat of 64 numbered bytes, then a moov whose tracks' stco point at bytes 10, 30
// and 50 of the mdat's data, and a user data box (unless `moov_user_data` is false: the last
// track then ends the moov). One track, or one per `track_user_data`, each with that user data
// (none where it is empty).
struct MuxerLike {
  Bytes file;
  size_t data = 0;  // where the mdat's data starts
};
MuxerLike muxer_like(const Bytes& user_data, const std::vector<Bytes>& track_user_data = {},
                     bool moov_user_data = true) {
  const Bytes ftyp = box("ftyp", text(std::string("isom\0\0\0\0isom", 12)));
  Bytes media;
  for (int i = 0; i < 64; ++i) media.push_back(uint8_t(i));
  const Bytes mdat = box("mdat", media);
  const size_t data = ftyp.size() + 8;
  Bytes stco(8 + 3 * 4, 0);
  set32(stco, 4, 3);
  for (uint32_t i = 0; i < 3; ++i) set32(stco, 8 + 4 * i, uint32_t(data + 10 + 20 * i));
  const Bytes mdia = box("mdia", box("minf", box("stbl", box("stco", stco))));
  Bytes traks;
  for (size_t t = 0; t < std::max<size_t>(1, track_user_data.size()); ++t) {
    const bool named = t < track_user_data.size() && !track_user_data[t].empty();
    traks = cat({traks, box("trak", named ? cat({mdia, box("udta", track_user_data[t])}) : mdia)});
  }
  const Bytes moov = box("moov", cat({box("mvhd", Bytes(100, 0)), traks,
                                      moov_user_data ? box("udta", user_data) : Bytes{}}));
  return {cat({ftyp, mdat, moov}), data};
}

TEST(Mp4Boxes, MovingTheMoovFirstMovesEveryChunkOffsetWithTheData) {
  const MuxerLike m = muxer_like({});
  const Bytes out = with_moov_first(m.file);
  ASSERT_EQ(out.size(), m.file.size());
  const Mp4Layout layout = read_mp4_layout(out);
  ASSERT_EQ(layout.boxes.size(), 3u);
  EXPECT_EQ(layout.boxes[1].type, "moov");
  EXPECT_EQ(layout.boxes[2].type, "mdat");
  EXPECT_TRUE(moov_before_mdat(layout));
  // Each offset still points at the byte it pointed at.
  const size_t stco =
      size_t(std::search(out.begin(), out.end(), std::begin("stco"), std::end("stco") - 1) -
             out.begin()) +
      4;
  ASSERT_EQ(get32(out, stco + 4), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    const uint32_t offset = get32(out, stco + 8 + 4 * i);
    ASSERT_LT(offset, out.size());
    EXPECT_EQ(out[offset], uint8_t(10 + 20 * i)) << i;
  }
  // Already first: nothing moves.
  EXPECT_EQ(with_moov_first(out), out);
}

// A sample table declaring more entries than its box holds, or constant-size samples beyond the
// file, is damage found before libavformat allocates it (2 GB for a 2.7 kB file).
TEST(Mp4Boxes, SampleTablesHoldWhatTheyDeclare) {
  const Bytes fine = muxer_like({}).file;
  EXPECT_NO_THROW(check_sample_tables(fine));
  // A file whose one track's sample table is `table` (a full box's body after its type).
  const auto with_table = [](const std::string& type, const Bytes& table,
                             const std::string& handler = "vide") {
    const Bytes ftyp = box("ftyp", text(std::string("isom\0\0\0\0isom", 12)));
    const bool edit = type == "elst";
    const Bytes stbl = box("stbl", edit ? Bytes{} : box(type, table));
    const Bytes edts = box("edts", edit ? box(type, table) : Bytes{});
    const Bytes hdlr = box("hdlr", cat({Bytes(8, 0), text(handler), Bytes(12, 0)}));
    const Bytes trak = box("trak", cat({edts, box("mdia", cat({hdlr, box("minf", stbl)}))}));
    return cat(
        {ftyp, box("mdat", Bytes(64, 1)), box("moov", cat({box("mvhd", Bytes(100, 0)), trak}))});
  };
  const auto fields = [](std::initializer_list<uint32_t> values) {
    Bytes b(4 * values.size());
    size_t at = 0;
    for (uint32_t v : values) set32(b, (at += 4) - 4, v);
    return b;
  };
  struct Case {
    std::string type;
    Bytes table;
    bool damaged;
  };
  for (const Case& c :
       {Case{"stsz", fields({0, 1, 64}), false},         // 64 one-byte samples
        Case{"stsz", fields({0, 1, 85'000'000}), true},  // beyond the file
        Case{"stsz", fields({0, 0, 3, 5, 6, 7}), false},
        Case{"stsz", fields({0, 0, 4, 5, 6, 7}), true},  // one size missing
        Case{"stco", fields({0, 2, 10, 20}), false},
        Case{"stco", fields({0, 1u << 28, 10, 20}), true},
        Case{"co64", fields({0, 1, 0, 10}), false}, Case{"co64", fields({0, 2, 0, 10}), true},
        Case{"stts", fields({0, 1000000, 1, 1}), true},
        Case{"stz2", fields({0, 8, 2, 0x01020000}), false},
        Case{"stz2", fields({0, 8, 100, 0}), true}, Case{"stsc", fields({0, 2, 1, 1, 1}), true},
        Case{"elst", fields({0, 1, 100, 0, 0x10000}), false},
        Case{"elst", fields({0x01000000, 1, 0, 100, 0, 0}), true}}) {
    SCOPED_TRACE(c.type + " of " + std::to_string(c.table.size()) + " bytes");
    const Bytes file = with_table(c.type, c.table);
    if (!c.damaged) {
      EXPECT_NO_THROW(check_sample_tables(file));
      continue;
    }
    try {
      check_sample_tables(file);
      ADD_FAILURE() << "not refused";
    } catch (const FormatError& e) {
      EXPECT_EQ(e.reason(), Reason::kCorrupt);
      EXPECT_NE(std::string(e.what()).find("'" + c.type + "'"), std::string::npos) << e.what();
    }
  }
  // QuickTime's compressed sound counts uncompressed frames of "1 byte", each lasting 1 tick:
  // more than the file, and libavformat indexes it by chunk. Sound timed otherwise it indexes
  // sample by sample (a 23 kB MOV declaring 40 million took 975 MB): held to the file.
  const auto sound = [&](uint32_t delta) {
    const Bytes ftyp = box("ftyp", text(std::string("qt  \0\0\0\0qt  ", 12)));
    const Bytes stbl =
        box("stbl",
            cat({box("stts", fields({0, 1, 220544, delta})), box("stsz", fields({0, 1, 220544}))}));
    const Bytes hdlr = box("hdlr", cat({Bytes(8, 0), text("soun"), Bytes(12, 0)}));
    const Bytes trak = box("trak", box("mdia", cat({hdlr, box("minf", stbl)})));
    return cat(
        {ftyp, box("mdat", Bytes(64, 1)), box("moov", cat({box("mvhd", Bytes(100, 0)), trak}))});
  };
  EXPECT_NO_THROW(check_sample_tables(sound(1)));
  EXPECT_THROW(check_sample_tables(sound(2)), FormatError);
}

TEST(Mp4Boxes, BytesAfterTheLastBoxAreTrailingAndACutBoxIsTruncated) {
  const Bytes file = muxer_like({}).file;
  Bytes appended = file;
  const std::string tail = "TRAILINGDATA appended by some tool";
  appended.insert(appended.end(), tail.begin(), tail.end());
  EXPECT_EQ(read_mp4_layout(appended).trailing, file.size());
  EXPECT_EQ(read_mp4_layout(file).trailing, file.size());
  // The moov cut short: a box readers know, running past the end.
  const Bytes cut(file.begin(), file.end() - 5);
  try {
    read_mp4_layout(cut);
    ADD_FAILURE() << "a cut moov was read";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.reason(), Reason::kTruncated);
  }
}

TEST(Mp4Boxes, BoxesTheRemuxCannotCarryAreNamed) {
  const Bytes file = muxer_like({}).file;
  EXPECT_FALSE(remux_obstacle(file, read_mp4_layout(file)));
  const Bytes xmp = cat({file, box("uuid", text("BE7ACFCB97A942E89C71999491E3AFAC<x:xmpmeta/>"))});
  const auto why = remux_obstacle(xmp, read_mp4_layout(xmp));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("top-level 'uuid' box"), std::string::npos) << *why;
  const Bytes fragmented = cat({file, box("moof", Bytes(16, 0)), box("mdat", Bytes(8, 0))});
  EXPECT_NE(remux_obstacle(fragmented, read_mp4_layout(fragmented)).value_or("").find("fragmented"),
            std::string::npos);
}

TEST(Mp4Boxes, UserDataTheOutputLacksIsNamed) {
  const Bytes location = box("\xA9xyz", text("+48.85+002.29/"));
  const Bytes extra = box("XTRA", text("camera settings"));
  const Bytes in = muxer_like(cat({extra, location, box("meta", Bytes(12, 0))})).file;
  // 'meta' is the muxer's to write again (its items compared as tags); a location atom is not
  // (the MP4 muxer writes a 'loci' instead).
  const Bytes rewritten = muxer_like(box("meta", Bytes(20, 1))).file;
  const std::vector<std::string> lost = user_data_lost(in, rewritten);
  ASSERT_EQ(lost.size(), 2u);
  EXPECT_EQ(lost[0], "'XTRA' (23 bytes)");
  EXPECT_EQ(lost[1], "'\\xA9xyz' (22 bytes)");
  EXPECT_TRUE(user_data_lost(in, muxer_like(cat({location, extra})).file).empty());
  // Put back into the muxer's own user data box, which ends its moov.
  const Bytes back = with_user_data_of(in, rewritten);
  EXPECT_TRUE(user_data_lost(in, back).empty());
  const Mp4Layout layout = read_mp4_layout(back);
  ASSERT_EQ(layout.boxes.back().type, "moov");
  const std::vector<Mp4Box> moov =
      read_boxes(back, layout.boxes.back().body, layout.boxes.back().end);
  EXPECT_EQ(
      std::count_if(moov.begin(), moov.end(), [](const Mp4Box& b) { return b.type == "udta"; }), 1);
}

// A scope may hold up to 65,536 items: each is looked up, not compared with every other (that
// took over a minute per scope).
TEST(Mp4Boxes, ManyUserDataItemsAreMatchedByTheirBytes) {
  Bytes items, all_but_one;
  for (uint32_t i = 0; i < 60000; ++i) {
    Bytes body(4);
    set32(body, 0, i);
    const Bytes item = box("XTRA", body);
    items.insert(items.end(), item.begin(), item.end());
    if (i != 31337) all_but_one.insert(all_but_one.end(), item.begin(), item.end());
  }
  const Bytes in = muxer_like(items).file;
  EXPECT_TRUE(user_data_lost(in, in).empty());
  const Bytes out = muxer_like(all_but_one).file;
  EXPECT_EQ(user_data_lost(in, out), std::vector<std::string>{"'XTRA' (12 bytes)"});
  EXPECT_TRUE(user_data_lost(in, with_user_data_of(in, out)).empty());
}

// Every box at every level of `file` down to the chunk offset tables parses, and every track's
// offsets still point at bytes 10, 30 and 50 of the media data. Returns the tracks' 'udta'
// boxes, track by track.
std::vector<std::vector<Mp4Box>> check_tracks(const Bytes& file) {
  const Mp4Layout layout = read_mp4_layout(file);
  EXPECT_EQ(layout.trailing, file.size());
  EXPECT_EQ(layout.boxes.back().type, "moov");
  std::vector<std::vector<Mp4Box>> udta;
  for (const Mp4Box& trak : read_boxes(file, layout.boxes.back().body, layout.boxes.back().end)) {
    if (trak.type != "trak") continue;
    udta.emplace_back();
    for (const Mp4Box& b : read_boxes(file, trak.body, trak.end)) {
      if (b.type == "udta") udta.back().push_back(b);
      if (b.type != "mdia") continue;
      auto first_child = [&](const Mp4Box& parent) {
        return read_boxes(file, parent.body, parent.end).at(0);
      };
      const Mp4Box stco = first_child(first_child(first_child(b)));  // mdia/minf/stbl/stco
      EXPECT_EQ(stco.type, "stco");
      for (uint32_t i = 0; i < 3; ++i)
        EXPECT_EQ(file.at(get32(file, stco.body + 8 + 4 * i)), uint8_t(10 + 20 * i));
    }
  }
  return udta;
}

TEST(Mp4Boxes, EveryTracksUserDataIsNamedAndPutBackIntoItsTrack) {
  const Bytes name1 = box("name", text("Camera A")), name3 = box("name", text("Director's mic"));
  const Bytes kind = box("kind", text("urn:mpeg:dash:role:2011main"));
  const Bytes extra = box("XTRA", text("camera settings"));
  const Bytes in = muxer_like(extra, {name1, {}, name3}).file;
  // The muxer's: no track user data but a 'kind' in the first track; its own moov user data.
  const Bytes rewritten = muxer_like(box("meta", Bytes(20, 1)), {kind, {}, {}}).file;
  const std::vector<std::string> lost = user_data_lost(in, rewritten);
  ASSERT_EQ(lost.size(), 3u);
  EXPECT_EQ(lost[0], "'XTRA' (23 bytes)");
  EXPECT_EQ(lost[1], "track 1's 'name' (16 bytes)");
  EXPECT_EQ(lost[2], "track 3's 'name' (22 bytes)");
  // A track in the same place, not another's: the first track's name in the third is lost.
  EXPECT_EQ(user_data_lost(muxer_like({}, {name1}).file, muxer_like({}, {{}, {}, name1}).file),
            std::vector<std::string>{"track 1's 'name' (16 bytes)"});
  const Bytes back = with_user_data_of(in, rewritten);
  EXPECT_TRUE(user_data_lost(in, back).empty());
  const std::vector<std::vector<Mp4Box>> udta = check_tracks(back);
  ASSERT_EQ(udta.size(), 3u);
  // Into the muxer's 'udta' where it ends the track, else one of its own; none where none lacked.
  ASSERT_EQ(udta[0].size(), 1u);
  EXPECT_EQ(udta[0][0].end - udta[0][0].body, kind.size() + name1.size());
  ASSERT_EQ(udta[2].size(), 1u);
  EXPECT_EQ(udta[2][0].end - udta[2][0].body, name3.size());
  EXPECT_TRUE(udta[1].empty());
  EXPECT_EQ(with_user_data_of(in, back), back);
  // A muxer's moov that its last track ends: the track's items go into the track, the moov's
  // after it.
  const Bytes bare = muxer_like({}, {{}, {}, {}}, false).file;
  const Bytes into_bare = with_user_data_of(in, bare);
  EXPECT_TRUE(user_data_lost(in, into_bare).empty());
  const std::vector<std::vector<Mp4Box>> bare_udta = check_tracks(into_bare);
  ASSERT_EQ(bare_udta.size(), 3u);
  ASSERT_EQ(bare_udta[2].size(), 1u);
  EXPECT_EQ(bare_udta[2][0].end - bare_udta[2][0].body, name3.size());
}

TEST(Mp4Boxes, BoxesTheMuxerDoesNotWriteAgainInTheMoovOrATrackAreNamed) {
  const Bytes in = muxer_like({}).file;
  const Mp4Layout layout = read_mp4_layout(in);
  // A camera's 'uuid' as the moov's last child.
  Bytes camera = cat({in, box("uuid", text("85C0B687820F11E08111F4CE462B6A48CNCV"))});
  const size_t moov = layout.boxes.back().begin;
  set32(camera, moov, get32(camera, moov) + 8 + 36);
  const auto why = remux_obstacle(camera, read_mp4_layout(camera));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("'uuid' box in the moov"), std::string::npos) << *why;
  // Padding holds nothing a reader uses: losing it is no obstacle.
  Bytes padded = cat({in, box("free", Bytes(64, 0))});
  set32(padded, moov, get32(padded, moov) + 8 + 64);
  EXPECT_FALSE(remux_obstacle(padded, read_mp4_layout(padded)));
}

class Mp4Structure : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("ffmpeg -version > /dev/null 2>&1") != 0) GTEST_SKIP() << "ffmpeg is absent";
    dir_ = fs::temp_directory_path() / ("lighten_mp4_structure_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Bytes make(const std::string& name, const std::string& args) {
    const fs::path out = dir_ / name;
    const std::string cmd =
        "ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=320x240:rate=25 -f lavfi -i "
        "sine=f=440:r=44100 -t 1 -map 0 -map 1 -c:v libx264 -crf 8 -pix_fmt yuv420p " +
        args + " " + out.string();
    return std::system(cmd.c_str()) == 0 ? testing::read_file(out) : Bytes{};
  }
  fs::path dir_;
};

Policy compact() {
  Policy p;
  p.mode = Mode::kCompact;
  return p;
}

TEST_F(Mp4Structure, AFaststartFileStaysFaststartAndAppendedBytesStayAppended) {
  Bytes in = make("fast.mp4", "-c:a aac -movflags +faststart");
  ASSERT_FALSE(in.empty());
  ASSERT_TRUE(moov_before_mdat(read_mp4_layout(in)));
  const std::string tail = "TRAILINGDATA appended after the last box";
  in.insert(in.end(), tail.begin(), tail.end());
  const Outcome o = optimize(in, compact());
  ASSERT_TRUE(o.replaced()) << o.message;
  const Mp4Layout out = read_mp4_layout(o.bytes);
  EXPECT_TRUE(moov_before_mdat(out));
  EXPECT_EQ(std::string(o.bytes.end() - long(tail.size()), o.bytes.end()), tail);
  EXPECT_EQ(out.trailing, o.bytes.size() - tail.size());
  // Every frame decodes from where the moved moov says it is (the engine's verifier passed).
  EXPECT_EQ(probe_video(o.bytes).packets, probe_video(in).packets);
}

// `file` with a user data box of the muxer's unknown kind added at the end of its moov (which
// must be its last box).
Bytes with_vendor_box(const Bytes& file) {
  const Mp4Layout layout = read_mp4_layout(file);
  if (layout.boxes.back().type != "moov") return {};
  const Bytes udta = box("udta", box("XTRA", text("settings the camera wrote")));
  Bytes out = cat({file, udta});
  const size_t moov = layout.boxes.back().begin;
  set32(out, moov, get32(out, moov) + uint32_t(udta.size()));
  return out;
}

TEST_F(Mp4Structure, UserDataTheMuxerDropsIsPutBack) {
  const Bytes plain = make("plain.mp4", "-c:a aac");
  ASSERT_FALSE(plain.empty());
  for (bool faststart : {false, true}) {
    SCOPED_TRACE(faststart ? "moov first" : "moov last");
    // The box goes in while the moov is last; a faststart input then has its moov moved first.
    const Bytes in = faststart ? with_moov_first(with_vendor_box(plain)) : with_vendor_box(plain);
    ASSERT_FALSE(in.empty());
    ASSERT_EQ(moov_before_mdat(read_mp4_layout(in)), faststart);
    ASSERT_EQ(user_data_lost(in, plain).size(), 1u);
    const Outcome o = optimize(in, compact());
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_TRUE(user_data_lost(in, o.bytes).empty());
    EXPECT_EQ(moov_before_mdat(read_mp4_layout(o.bytes)), moov_before_mdat(read_mp4_layout(in)));
    EXPECT_EQ(probe_video(o.bytes).packets, probe_video(in).packets);
  }
  // Into a muxer's output whose moov is not last, it cannot go.
  const Bytes in = with_vendor_box(make("vendor.mp4", "-c:a aac"));
  Bytes not_last = make("other.mp4", "-c:a aac");
  const Bytes free_box = box("free", Bytes(4, 0));
  not_last = cat({not_last, free_box});
  EXPECT_THROW(with_user_data_of(in, not_last), FormatError);
}

// `file` (its moov last) with a 'name' in a user data box of its own at the end of its first
// track, as QuickTime writes a track's name.
Bytes with_track_name(const Bytes& file) {
  const Mp4Layout layout = read_mp4_layout(file);
  const Mp4Box& moov = layout.boxes.back();
  if (moov.type != "moov") return {};
  for (const Mp4Box& trak : read_boxes(file, moov.body, moov.end)) {
    if (trak.type != "trak") continue;
    const Bytes udta = box("udta", box("name", text("Camera A")));
    Bytes out = cat({Bytes(file.begin(), file.begin() + long(trak.end)), udta,
                     Bytes(file.begin() + long(trak.end), file.end())});
    set32(out, trak.begin, get32(out, trak.begin) + uint32_t(udta.size()));
    set32(out, moov.begin, get32(out, moov.begin) + uint32_t(udta.size()));
    return out;
  }
  return {};
}

TEST_F(Mp4Structure, ATracksUserDataIsPutBack) {
  const Bytes plain = make("plain.mp4", "-c:a aac");
  ASSERT_FALSE(plain.empty());
  for (bool faststart : {false, true}) {
    SCOPED_TRACE(faststart ? "moov first" : "moov last");
    const Bytes in = faststart ? with_moov_first(with_track_name(plain)) : with_track_name(plain);
    ASSERT_FALSE(in.empty());
    ASSERT_EQ(user_data_lost(in, plain), std::vector<std::string>{"track 1's 'name' (16 bytes)"});
    const Outcome o = optimize(in, compact());
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_TRUE(user_data_lost(in, o.bytes).empty());
    EXPECT_EQ(probe_video(o.bytes).packets, probe_video(in).packets);
  }
}

TEST_F(Mp4Structure, WhatTheRemuxCannotCarryLeavesTheFileAloneWithAReason) {
  const Bytes plain = make("plain.mp4", "-c:a aac");
  ASSERT_FALSE(plain.empty());
  // A top-level XMP box, and a fragmented file.
  Outcome o = optimize(
      cat({plain, box("uuid", text("BE7ACFCB97A942E89C71999491E3AFAC<x:xmpmeta/>"))}), compact());
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
  EXPECT_NE(o.message.find("'uuid'"), std::string::npos) << o.message;
  const Bytes fragmented = make("frag.mp4", "-c:a aac -movflags frag_keyframe+empty_moov");
  ASSERT_FALSE(fragmented.empty());
  o = optimize(fragmented, compact());
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
  EXPECT_NE(o.message.find("fragmented"), std::string::npos) << o.message;
}

// `file` (its moov last) with `extra` appended to the first sample entry of its first track
// whose handler is `handler`, every box around it grown to hold it; or with that entry twice.
Bytes with_sample_entry_box(const Bytes& file, const std::string& handler, const Bytes& extra,
                            bool entry_twice = false, int entry_version = -1) {
  const Mp4Layout layout = read_mp4_layout(file);
  const Mp4Box& moov = layout.boxes.back();
  if (moov.type != "moov") return {};
  for (const Mp4Box& trak : read_boxes(file, moov.body, moov.end)) {
    if (trak.type != "trak" || handler_of(file, trak) != handler) continue;
    const auto mdia = box_below(file, trak, {"mdia"});
    const auto minf = box_below(file, *mdia, {"minf"});
    const auto stbl = box_below(file, *minf, {"stbl"});
    const auto stsd = box_below(file, *stbl, {"stsd"});
    const Mp4Box entry = read_boxes(file, stsd->body + 8, stsd->end).front();
    const Bytes added =
        entry_twice ? Bytes(file.begin() + long(entry.begin), file.begin() + long(entry.end))
                    : extra;
    Bytes out = cat({Bytes(file.begin(), file.begin() + long(entry.end)), added,
                     Bytes(file.begin() + long(entry.end), file.end())});
    for (const Mp4Box& b : {moov, trak, *mdia, *minf, *stbl, *stsd})
      set32(out, b.begin, get32(out, b.begin) + uint32_t(added.size()));
    if (entry_twice)
      set32(out, stsd->body + 4, get32(out, stsd->body + 4) + 1);
    else
      set32(out, entry.begin, get32(out, entry.begin) + uint32_t(added.size()));
    if (entry_version >= 0) {  // ISO's AudioSampleEntryV1 lives in a version 1 'stsd'
      out[entry.body + 9] = uint8_t(entry_version);
      out[stsd->body] = 1;
    }
    return out;
  }
  return {};
}

TEST_F(Mp4Structure, SampleDescriptionBoxesTheMuxerDropsLeaveTheFileAlone) {
  const Bytes plain = make("plain.mp4", "-c:a aac");
  ASSERT_FALSE(plain.empty());
  // An ambisonic sound track's 'SA3D' (YouTube's spatial audio) and a clean aperture: libavformat
  // writes neither again.
  Bytes sa3d_body(1 + 1 + 4 + 1 + 1 + 4 + 16, 0);
  sa3d_body[5] = 1;   // first order
  sa3d_body[11] = 4;  // four channels
  const Bytes sa3d = box("SA3D", sa3d_body);
  const Bytes clap = box("clap", Bytes(32, 1));
  struct Case {
    const char* handler;
    Bytes extra;
    std::string named;
  };
  for (const Case& c : {Case{"soun", sa3d, "'SA3D' (36 bytes) in track 2's sample description"},
                        Case{"vide", clap, "'clap' (40 bytes) in track 1's sample description"}}) {
    SCOPED_TRACE(c.named);
    const Bytes in = with_sample_entry_box(plain, c.handler, c.extra);
    ASSERT_FALSE(in.empty());
    EXPECT_EQ(sample_descriptions_lost(in, plain), std::vector<std::string>{c.named});
    EXPECT_TRUE(sample_descriptions_lost(in, in).empty());
    const Outcome o = optimize(in, compact());
    EXPECT_FALSE(o.replaced());
    EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
    EXPECT_NE(o.message.find(c.named), std::string::npos) << o.message;
  }
  // An ISO AudioSampleEntryV1 (in a version 1 'stsd') has QuickTime's version 1 number but not
  // its 16 more bytes: its boxes are found all the same.
  const Bytes v1 = with_sample_entry_box(plain, "soun", sa3d, false, 1);
  ASSERT_FALSE(v1.empty());
  EXPECT_EQ(sample_descriptions_lost(v1, plain),
            std::vector<std::string>{"'SA3D' (36 bytes) in track 2's sample description"});
  // A second description (samples coded with other parameters) the muxer writes as one.
  const Bytes twice = with_sample_entry_box(plain, "vide", {}, true);
  ASSERT_FALSE(twice.empty());
  EXPECT_EQ(sample_descriptions_lost(twice, plain),
            std::vector<std::string>{"track 1's second sample description ('avc1')"});
  const Outcome o = optimize(twice, compact());
  EXPECT_EQ(o.reason, Reason::kUnsupportedVariant);
  EXPECT_NE(o.message.find("second sample description"), std::string::npos) << o.message;
  // An ICC profile in a 'colr' must come out byte for byte (libavformat carries it as side
  // data); the figures of an 'nclx' travel in the H.264 stream, so its box may go.
  const Bytes icc = box("colr", cat({text("prof"), Bytes(128, 7)}));
  const Bytes nclx = box("colr", cat({text("nclx"), Bytes{0, 1, 0, 1, 0, 1, 0}}));
  const Bytes profiled = with_sample_entry_box(plain, "vide", icc);
  const Bytes described = with_sample_entry_box(plain, "vide", nclx);
  ASSERT_FALSE(profiled.empty());
  ASSERT_FALSE(described.empty());
  EXPECT_EQ(sample_descriptions_lost(profiled, plain),
            std::vector<std::string>{"'colr' (140 bytes) in track 1's sample description"});
  EXPECT_TRUE(sample_descriptions_lost(described, plain).empty());
  for (const Bytes* in : {&profiled, &described}) {
    const Outcome o = optimize(*in, compact());
    ASSERT_TRUE(o.replaced()) << o.message;
    EXPECT_TRUE(sample_descriptions_lost(*in, o.bytes).empty());
  }
}

TEST_F(Mp4Structure, VbrMp3InAnAviKeepsItsLength) {
  const Bytes in = make("mp3.avi", "-bf 0 -c:a libmp3lame -b:a 64k");
  if (in.empty()) GTEST_SKIP() << "this ffmpeg cannot write MP3 into AVI";
  const Outcome o = optimize(in, compact());
  ASSERT_TRUE(o.replaced()) << o.message;
  const VideoFrames a = probe_video(in), b = probe_video(o.bytes);
  ASSERT_EQ(a.lengths.size(), 2u);
  ASSERT_EQ(b.lengths.size(), 2u);
  EXPECT_EQ(b.lengths[1].packets, a.lengths[1].packets);
  EXPECT_GE(b.lengths[1].seconds, 0.0);
  EXPECT_NEAR(b.lengths[1].seconds, a.lengths[1].seconds, 0.03);
  // With B-frames ffmpeg's AVI muxer states a longer MP3 stream than it holds (three frames
  // more); the remux would state the true length, shorter than readers were told: left alone,
  // with the reason.
  const Bytes delayed = make("mp3_b.avi", "-bf 2 -c:a libmp3lame -b:a 64k");
  ASSERT_FALSE(delayed.empty());
  const Outcome kept = optimize(delayed, compact());
  if (!kept.replaced()) {
    EXPECT_EQ(kept.reason, Reason::kUnsupportedVariant);
    EXPECT_NE(kept.message.find("audio mp3"), std::string::npos) << kept.message;
  }
}

}  // namespace
}  // namespace lighten::media
