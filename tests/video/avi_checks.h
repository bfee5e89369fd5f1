// Checks shared by the video tests: an output's frames decode to the input's pixels, every other
// chunk is unchanged, every index entry points at the same chunk as before.
#pragma once

#include <gtest/gtest.h>

#include "formats/video/avi_file.h"
#include "formats/video/avi_index.h"
#include "formats/video/mjpeg.h"
#include "support/jpeg_maker.h"

namespace lighten::video {

inline Bytes chunk_data(const Bytes& file, const RiffChunk& c) {
  return Bytes(file.begin() + long(c.data_offset()), file.begin() + long(c.data_offset() + c.size));
}

// The data of every MJPEG frame chunk of `avi`, in file order.
inline std::vector<Bytes> frame_chunks(const Bytes& avi) {
  const AviFile a = parse_avi(avi);
  std::vector<Bytes> frames;
  for (const RiffChunk& c : a.tree.chunks)
    if (!c.is_list && a.is_mjpeg_frame(c)) frames.push_back(chunk_data(avi, c));
  return frames;
}

// Every frame of `out` decodes to the pixels of the same frame of `in` (fields concatenated).
inline void expect_same_frames(const Bytes& in, const Bytes& out) {
  const AviFile a = parse_avi(in), b = parse_avi(out);
  ASSERT_EQ(a.tree.chunks.size(), b.tree.chunks.size());
  size_t frames = 0;
  for (size_t i = 0; i < a.tree.chunks.size(); ++i) {
    const RiffChunk& x = a.tree.chunks[i];
    const RiffChunk& y = b.tree.chunks[i];
    ASSERT_EQ(x.id, y.id);
    if (x.is_list) continue;
    const Bytes u = chunk_data(in, x), v = chunk_data(out, y);
    if (!a.is_mjpeg_frame(x)) {
      if (index_kind(in, x) == IndexKind::kNone) {
        EXPECT_EQ(u, v) << fourcc_text(x.id);
      }
      continue;
    }
    ++frames;
    const auto su = split_mjpeg_chunk(u), sv = split_mjpeg_chunk(v);
    ASSERT_EQ(su.size(), sv.size());
    for (size_t k = 0; k < su.size(); ++k) {
      const Bytes p(u.begin() + long(su[k].begin), u.begin() + long(su[k].end));
      const Bytes q(v.begin() + long(sv[k].begin), v.begin() + long(sv[k].end));
      EXPECT_EQ(sv[k].huffman_from_elsewhere, 0) << "written frames carry their tables";
      const auto pixels = testing::decode_jpeg_pixels(p);
      ASSERT_FALSE(pixels.empty());
      EXPECT_EQ(testing::decode_jpeg_pixels(q), pixels);
    }
  }
  EXPECT_GT(frames, 0u);
  // Every index entry of the output resolves to the chunk the input's entry pointed at.
  for (size_t i = 0; i < a.tree.chunks.size(); ++i) {
    if (index_kind(in, a.tree.chunks[i]) == IndexKind::kNone) continue;
    EXPECT_EQ(resolve_index(in, a, i).targets, resolve_index(out, b, i).targets);
  }
}

}  // namespace lighten::video
