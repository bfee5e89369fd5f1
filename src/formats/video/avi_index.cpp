#include "formats/video/avi_index.h"

#include <algorithm>
#include <string>

namespace lighten::video {
namespace {

constexpr uint32_t kNotKeyframe = 0x80000000u;  // bit 31 of an OpenDML entry's size

[[noreturn]] void damaged(const RiffChunk& index, const std::string& what) {
  throw FormatError(Reason::kCorrupt, index.offset,
                    fourcc_text(index.id) + " " + what +
                        " (a damaged index lighten does not rebuild by guessing)");
}

// The leaf or list an idx1 entry at `pos` names, or -1.
long idx1_target(const RiffTree& tree, uint64_t pos, uint32_t id, uint32_t size) {
  const long t = tree.find_at(pos);
  if (t < 0) return -1;
  const RiffChunk& c = tree.chunks[t];
  const bool same_id = c.is_list ? c.list_type == id : c.id == id;
  return same_id && c.size == size ? t : -1;
}

uint32_t entry_count(const RiffChunk& c, const uint8_t* p, size_t entry_bytes) {
  const uint32_t n = load_le32(p + 4);
  if ((c.size - 24) / entry_bytes < n) damaged(c, "claims more entries than it holds");
  return n;
}

}  // namespace

ResolvedIndex resolve_index(ByteView in, const AviFile& avi, size_t chunk) {
  const RiffTree& tree = avi.tree;
  const RiffChunk& c = tree.chunks[chunk];
  ResolvedIndex r;
  r.kind = index_kind(in, c);
  r.chunk = chunk;
  const uint8_t* p = in.data() + c.data_offset();
  switch (r.kind) {
    case IndexKind::kIdx1: {
      const size_t n = c.size / 16;
      r.targets.reserve(n);
      // Offsets count from the movi list's type field in most files, from the file start in some.
      const uint64_t movi = tree.chunks[avi.movi].offset + 8;
      r.relative = true;
      r.base = movi;
      if (n > 0) {
        const uint32_t id = load_le32(p), off = load_le32(p + 8), size = load_le32(p + 12);
        if (idx1_target(tree, movi + off, id, size) < 0 && idx1_target(tree, off, id, size) >= 0) {
          r.relative = false;
          r.base = 0;
        }
      }
      for (size_t i = 0; i < n; ++i, p += 16) {
        const long t =
            idx1_target(tree, r.base + load_le32(p + 8), load_le32(p), load_le32(p + 12));
        if (t < 0) damaged(c, "entry " + std::to_string(i) + " points at no matching chunk");
        r.targets.push_back(t);
      }
      break;
    }
    case IndexKind::kStandard: {
      const uint32_t n = entry_count(c, p, 8);
      const uint32_t id = load_le32(p + 8);
      r.base = load_le64(p + 12);
      r.targets.reserve(n);
      for (uint32_t i = 0; i < n; ++i) {
        const uint8_t* e = p + 24 + 8ull * i;
        const uint64_t data = r.base + load_le32(e);
        const long t = data >= 8 && data >= r.base ? tree.find_at(data - 8) : -1;
        if (t < 0 || tree.chunks[t].is_list || tree.chunks[t].id != id ||
            tree.chunks[t].size != (load_le32(e + 4) & ~kNotKeyframe))
          damaged(c, "entry " + std::to_string(i) + " points at no matching chunk");
        r.targets.push_back(t);
      }
      break;
    }
    case IndexKind::kSuper: {
      const uint32_t n = entry_count(c, p, 16);
      r.targets.reserve(n);
      for (uint32_t i = 0; i < n; ++i) {
        const long t = tree.find_at(load_le64(p + 24 + 16ull * i));
        if (t < 0 || index_kind(in, tree.chunks[t]) != IndexKind::kStandard)
          damaged(c, "entry " + std::to_string(i) + " points at no standard index");
        r.targets.push_back(t);
      }
      break;
    }
    case IndexKind::kNone:
      break;
  }
  return r;
}

void patch_index(const AviFile& avi, const ResolvedIndex& r, const ChunkMoves& moves,
                 std::span<uint8_t> out) {
  const RiffChunk& c = avi.tree.chunks[r.chunk];
  uint8_t* p = out.data() + moves.offset[r.chunk] + (c.data_offset() - c.offset);
  const auto fits = [&](uint64_t value) {
    if (value > UINT32_MAX)
      throw FormatError(Reason::kUnsupportedVariant, c.offset,
                        fourcc_text(c.id) + " offsets no longer fit after the rewrite");
    return uint32_t(value);
  };
  switch (r.kind) {
    case IndexKind::kIdx1: {
      const uint64_t base = r.relative ? moves.offset[moves.movi] + 8 : 0;
      for (size_t i = 0; i < r.targets.size(); ++i) {
        store_le32(p + 16 * i + 8, fits(moves.offset[r.targets[i]] - base));
        store_le32(p + 16 * i + 12, moves.size[r.targets[i]]);
      }
      break;
    }
    case IndexKind::kStandard: {
      // The base moves with the chunk it falls in (the movi list, as writers set it).
      const auto& chunks = avi.tree.chunks;
      auto it = std::upper_bound(chunks.begin(), chunks.end(), r.base,
                                 [](uint64_t o, const RiffChunk& k) { return o < k.offset; });
      uint64_t base = r.base;
      if (it != chunks.begin()) {
        const size_t j = size_t(it - chunks.begin()) - 1;
        base = moves.offset[j] + (r.base - chunks[j].offset);
      }
      store_le64(p + 12, base);
      for (size_t i = 0; i < r.targets.size(); ++i) {
        uint8_t* e = p + 24 + 8 * i;
        const uint64_t data = moves.offset[r.targets[i]] + 8;
        if (data < base) fits(UINT64_MAX);
        store_le32(e, fits(data - base));
        if (moves.size[r.targets[i]] & kNotKeyframe) fits(UINT64_MAX);
        store_le32(e + 4, (load_le32(e + 4) & kNotKeyframe) | moves.size[r.targets[i]]);
      }
      break;
    }
    case IndexKind::kSuper:
      for (size_t i = 0; i < r.targets.size(); ++i)
        store_le64(p + 24 + 16 * i, moves.offset[r.targets[i]]);
      break;
    case IndexKind::kNone:
      break;
  }
}

Bytes index_without_positions(ByteView in, const RiffChunk& c, IndexKind kind) {
  Bytes b(in.begin() + c.data_offset(), in.begin() + c.data_offset() + c.data_size());
  const auto zero = [&](size_t at, size_t n) {
    if (at + n <= b.size()) std::fill_n(b.begin() + at, n, 0);
  };
  if (kind == IndexKind::kIdx1) {
    for (size_t at = 0; at + 16 <= b.size(); at += 16) zero(at + 8, 8);
  } else if (kind == IndexKind::kStandard) {
    zero(12, 8);
    const uint32_t n = load_le32(b.data() + 4);
    for (uint64_t i = 0; i < n && 24 + 8 * i + 8 <= b.size(); ++i) {
      zero(24 + 8 * i, 4);
      store_le32(b.data() + 24 + 8 * i + 4, load_le32(b.data() + 24 + 8 * i + 4) & kNotKeyframe);
    }
  } else if (kind == IndexKind::kSuper) {
    const uint32_t n = load_le32(b.data() + 4);
    for (uint64_t i = 0; i < n && 24 + 16 * i + 16 <= b.size(); ++i) zero(24 + 16 * i, 8);
  }
  return b;
}

}  // namespace lighten::video
