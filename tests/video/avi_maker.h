// Writes small AVIs by hand for tests: Motion-JPEG frames (optionally without DHT, optionally
// as two fields), an optional PCM audio stream, idx1 and, when asked, OpenDML indx/ix00.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "support/jpeg_maker.h"

namespace lighten::testing {

struct AviRecipe {
  int frames = 4;
  int width = 64, height = 48;
  int quality = 85;        // of the first frame; the next ones go up to 9 above it
  bool strip_dht = false;  // frames rely on the standard tables, as camera MJPEG does
  bool two_fields = false;
  size_t field_padding = 0;  // with two_fields: bytes between the fields
  uint8_t padding_byte = 0x00;
  std::vector<uint8_t> frame_tail;  // bytes after each frame's last image
  // Each image gets an APP0 "AVI1" recording its field's sizes (big-endian; FieldSize with the
  // padding after it) as capture cards that pad fields write them; `field_sizes_off` writes
  // sizes that fit no image.
  bool field_sizes = false;
  bool field_sizes_off = false;
  bool field_sizes_little_endian = false;
  bool field_sizes_count_padding = true;
  bool audio = true;
  bool idx1 = true;
  bool open_dml = false;  // indx super index in the video strl, ix00 at the end of movi
  bool absolute_idx1 = false;
  // This frame is written at quality 100, where Huffman tables of its own pay off in small
  // frames that at ordinary qualities gain less than the tables cost.
  int fine_frame = -1;
  int dht_kept_frame = -1;  // with strip_dht: this frame keeps its tables
  // Frames other than dht_kept_frame keep only the luma tables (DC 0, AC 0) and take the
  // chroma ones from elsewhere.
  bool luma_tables_only = false;
  // Frames from this one on have no DQT and take the tables of the frame before, as ffmpeg
  // decodes them; every frame is then made at `quality`, so that those tables are theirs.
  int dqt_left_out_from = -1;
  int dropped_frame = -1;  // this frame's chunk is empty, as ffmpeg writes a dropped frame
  // Where one is given (not empty), frame i's chunk holds exactly these bytes.
  std::vector<std::vector<uint8_t>> given_frames;
};

class RiffBuilder {
 public:
  std::vector<uint8_t> bytes;
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes.push_back(uint8_t(v >> (8 * i)));
  }
  void u16(uint16_t v) { bytes.push_back(uint8_t(v)), bytes.push_back(uint8_t(v >> 8)); }
  void id(const char* s) { bytes.insert(bytes.end(), s, s + 4); }
  size_t open(const char* kind, const char* type) {  // returns where the size field is
    id(kind);
    const size_t at = bytes.size();
    u32(0);
    id(type);
    return at;
  }
  void close(size_t at) { patch(at, uint32_t(bytes.size() - at - 4)); }
  size_t chunk(const char* name, const std::vector<uint8_t>& data) {
    const size_t at = bytes.size();
    id(name);
    u32(uint32_t(data.size()));
    bytes.insert(bytes.end(), data.begin(), data.end());
    if (data.size() % 2) bytes.push_back(0);
    return at;
  }
  void patch(size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes[at + i] = uint8_t(v >> (8 * i));
  }
  void patch64(size_t at, uint64_t v) { patch(at, uint32_t(v)), patch(at + 4, uint32_t(v >> 32)); }
};

// A JPEG with its DHT segments removed (the decoder then uses the K.3 tables it was made with).
inline std::vector<uint8_t> without_dht(const std::vector<uint8_t>& jpeg) {
  std::vector<uint8_t> out(jpeg.begin(), jpeg.begin() + 2);
  size_t pos = 2;
  while (pos + 4 <= jpeg.size() && jpeg[pos + 1] != 0xDA) {
    const size_t len = size_t(jpeg[pos + 2]) << 8 | jpeg[pos + 3];
    if (jpeg[pos + 1] != 0xC4)
      out.insert(out.end(), jpeg.begin() + pos, jpeg.begin() + pos + 2 + len);
    pos += 2 + len;
  }
  out.insert(out.end(), jpeg.begin() + pos, jpeg.end());
  return out;
}

// A JPEG whose DHT segments keep only the tables of the classes and slots `keep` lists (as
// Tc << 4 | Th), and whose DQT segments are gone unless `keep_dqt`.
inline std::vector<uint8_t> with_tables_left_out(const std::vector<uint8_t>& jpeg,
                                                 const std::vector<uint8_t>& keep, bool keep_dqt) {
  std::vector<uint8_t> out(jpeg.begin(), jpeg.begin() + 2);
  size_t pos = 2;
  while (pos + 4 <= jpeg.size() && jpeg[pos + 1] != 0xDA) {
    const size_t len = size_t(jpeg[pos + 2]) << 8 | jpeg[pos + 3];
    if (jpeg[pos + 1] == 0xC4) {
      std::vector<uint8_t> tables;
      for (size_t at = pos + 4; at < pos + 2 + len;) {
        size_t count = 0;
        for (size_t i = 1; i <= 16; ++i) count += jpeg[at + i];
        if (std::find(keep.begin(), keep.end(), jpeg[at]) != keep.end())
          tables.insert(tables.end(), jpeg.begin() + at, jpeg.begin() + at + 17 + count);
        at += 17 + count;
      }
      if (!tables.empty()) {
        out.insert(out.end(),
                   {0xFF, 0xC4, uint8_t((tables.size() + 2) >> 8), uint8_t(tables.size() + 2)});
        out.insert(out.end(), tables.begin(), tables.end());
      }
    } else if (jpeg[pos + 1] != 0xDB || keep_dqt) {
      out.insert(out.end(), jpeg.begin() + pos, jpeg.begin() + pos + 2 + len);
    }
    pos += 2 + len;
  }
  out.insert(out.end(), jpeg.begin() + pos, jpeg.end());
  return out;
}

inline std::vector<uint8_t> make_frame(const AviRecipe& r, int index) {
  if (index == r.dropped_frame) return {};
  if (size_t(index) < r.given_frames.size() && !r.given_frames[size_t(index)].empty())
    return r.given_frames[size_t(index)];
  JpegRecipe j;
  j.width = r.width;
  j.height = r.two_fields ? r.height / 2 : r.height;
  j.quality = std::min(100, r.quality + index % 10);  // frames differ a little, as real ones do
  if (index == r.fine_frame) j.quality = 100;
  if (r.dqt_left_out_from >= 0) j.quality = r.quality;
  std::vector<uint8_t> one = make_jpeg(j);
  if (r.strip_dht && index != r.dht_kept_frame) one = without_dht(one);
  if (r.luma_tables_only && index != r.dht_kept_frame)
    one = with_tables_left_out(one, {0x00, 0x10}, true);
  if (r.dqt_left_out_from >= 0 && index >= r.dqt_left_out_from)
    one = with_tables_left_out(one, {0x00, 0x01, 0x10, 0x11}, false);
  auto with_field_sizes = [&](std::vector<uint8_t> image, size_t gap) {
    std::vector<uint8_t> avi1 = {0xFF, 0xE0, 0, 16, 'A', 'V', 'I', '1', 1, 0};
    const uint32_t less = uint32_t(image.size() + avi1.size() + 8);
    const uint32_t full = r.field_sizes_off             ? less / 2
                          : r.field_sizes_count_padding ? uint32_t(less + gap)
                                                        : less;
    for (uint32_t v : {full, less})
      for (int i = 0; i < 4; ++i)
        avi1.push_back(uint8_t(v >> (8 * (r.field_sizes_little_endian ? i : 3 - i))));
    image.insert(image.begin() + 2, avi1.begin(), avi1.end());
    return image;
  };
  if (r.field_sizes) {
    const size_t gap = r.two_fields ? r.field_padding : r.frame_tail.size();
    std::vector<uint8_t> second = with_field_sizes(one, r.frame_tail.size());
    one = with_field_sizes(one, gap);
    if (r.two_fields) {
      std::vector<uint8_t> frame = one;
      frame.insert(frame.end(), r.field_padding, r.padding_byte);
      frame.insert(frame.end(), second.begin(), second.end());
      frame.insert(frame.end(), r.frame_tail.begin(), r.frame_tail.end());
      return frame;
    }
  }
  std::vector<uint8_t> frame = one;
  if (r.two_fields) {
    frame.insert(frame.end(), r.field_padding, r.padding_byte);
    frame.insert(frame.end(), one.begin(), one.end());
  }
  frame.insert(frame.end(), r.frame_tail.begin(), r.frame_tail.end());
  return frame;
}

inline std::vector<uint8_t> make_avi(const AviRecipe& r) {
  RiffBuilder b;
  const size_t riff = b.open("RIFF", "AVI ");
  const size_t hdrl = b.open("LIST", "hdrl");
  std::vector<uint8_t> avih(56, 0);
  avih[0] = 0x40, avih[1] = 0x9C;  // 40000 us per frame
  avih[16] = uint8_t(r.frames), avih[24] = r.audio ? 2 : 1;
  avih[32] = uint8_t(r.width), avih[36] = uint8_t(r.height);
  b.chunk("avih", avih);
  const size_t strl = b.open("LIST", "strl");
  RiffBuilder strh;
  strh.id("vids"), strh.id("MJPG"), strh.u32(0), strh.u32(0), strh.u32(0);
  strh.u32(1), strh.u32(25), strh.u32(0), strh.u32(uint32_t(r.frames));
  strh.u32(0), strh.u32(0xFFFFFFFF), strh.u32(0), strh.u32(0), strh.u32(0);
  b.chunk("strh", strh.bytes);
  RiffBuilder strf;
  strf.u32(40), strf.u32(uint32_t(r.width)), strf.u32(uint32_t(r.height)), strf.u16(1);
  strf.u16(24), strf.id("MJPG"), strf.u32(uint32_t(r.width * r.height * 3));
  strf.u32(0), strf.u32(0), strf.u32(0), strf.u32(0);
  b.chunk("strf", strf.bytes);
  size_t indx = 0;
  if (r.open_dml) indx = b.chunk("indx", std::vector<uint8_t>(24 + 16 * 4, 0));
  b.close(strl);
  if (r.audio) {
    const size_t astrl = b.open("LIST", "strl");
    RiffBuilder ah;
    ah.id("auds"), ah.u32(0), ah.u32(0), ah.u32(0), ah.u32(0);
    ah.u32(1), ah.u32(8000), ah.u32(0), ah.u32(uint32_t(320 * r.frames));
    ah.u32(0), ah.u32(0xFFFFFFFF), ah.u32(1), ah.u32(0), ah.u32(0);
    b.chunk("strh", ah.bytes);
    RiffBuilder wf;
    wf.u16(1), wf.u16(1), wf.u32(8000), wf.u32(8000), wf.u16(1), wf.u16(8);
    b.chunk("strf", wf.bytes);
    b.close(astrl);
  }
  b.close(hdrl);
  b.chunk("JUNK", std::vector<uint8_t>(13, 0));  // odd: exercises pad bytes
  const size_t movi_size = b.open("LIST", "movi");
  const size_t movi = movi_size - 4;
  struct Entry {
    const char* id;
    size_t at;
    uint32_t size;
    uint32_t flags;
  };
  std::vector<Entry> entries;
  for (int i = 0; i < r.frames; ++i) {
    const auto frame = make_frame(r, i);
    entries.push_back({"00dc", b.chunk("00dc", frame), uint32_t(frame.size()), 0x10});
    if (r.audio) {
      std::vector<uint8_t> pcm(321, uint8_t(128 + i));  // odd-sized, with a pad byte
      entries.push_back({"01wb", b.chunk("01wb", pcm), uint32_t(pcm.size()), 0x10});
    }
  }
  if (r.open_dml) {
    RiffBuilder ix;
    ix.u16(2), ix.bytes.push_back(0), ix.bytes.push_back(1), ix.u32(uint32_t(r.frames));
    ix.id("00dc"), ix.u32(0), ix.u32(0), ix.u32(0);
    for (const Entry& e : entries) {
      if (std::string(e.id) != "00dc") continue;
      ix.u32(uint32_t(e.at + 8 - movi)), ix.u32(e.size | (&e == &entries[0] ? 0 : 0x80000000u));
    }
    ix.patch64(12, movi);
    const size_t at = b.chunk("ix00", ix.bytes);
    // Super index: wLongsPerEntry 4, type 0 (index of indexes), one entry in use.
    b.bytes[indx + 8] = 4, b.patch(indx + 12, 1);
    std::copy_n("00dc", 4, b.bytes.begin() + long(indx + 16));
    b.patch64(indx + 32, at);
    b.patch(indx + 40, uint32_t(ix.bytes.size() + 8));
    b.patch(indx + 44, uint32_t(r.frames));
  }
  b.close(movi_size);
  if (r.idx1) {
    RiffBuilder idx;
    for (const Entry& e : entries) {
      idx.id(e.id), idx.u32(e.flags);
      idx.u32(uint32_t(r.absolute_idx1 ? e.at : e.at - movi - 8)), idx.u32(e.size);
    }
    b.chunk("idx1", idx.bytes);
  }
  b.close(riff);
  return b.bytes;
}

}  // namespace lighten::testing
