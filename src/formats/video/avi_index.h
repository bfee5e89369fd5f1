// AVI indexes (idx1 and OpenDML indx/ix##): which chunk every entry points at, and rewriting the
// offsets and sizes once chunks have moved.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "formats/video/avi_file.h"

namespace lighten::video {

struct ResolvedIndex {
  IndexKind kind = IndexKind::kNone;
  size_t chunk = 0;           // the index chunk in the tree
  uint64_t base = 0;          // idx1: origin of the offsets (0 or movi); standard: qwBaseOffset
  bool relative = false;      // idx1 offsets relative to the movi list
  std::vector<long> targets;  // the chunk each entry in use points at, in entry order
};

// Resolves every entry of index chunk `chunk` against the tree. Throws FormatError(kCorrupt)
// when an entry points at no chunk of the id and size it names: a damaged index, which lighten
// does not rebuild by guessing.
ResolvedIndex resolve_index(ByteView input, const AviFile& avi, size_t chunk);

// Where chunks went in the output: header offset and size field per chunk of the input's tree.
struct ChunkMoves {
  std::span<const uint64_t> offset;
  std::span<const uint32_t> size;
  long movi = -1;
};

// Rewrites the index's offsets and sizes in `out`, where the chunk was copied unchanged to
// moves.offset[index.chunk]. Flags, keyframe bits, durations and unused slots stay as they were.
void patch_index(const AviFile& avi, const ResolvedIndex& index, const ChunkMoves& moves,
                 std::span<uint8_t> out);

// The index chunk's bytes with every offset and size field zeroed: what must not change.
Bytes index_without_positions(ByteView input, const RiffChunk& chunk, IndexKind kind);

}  // namespace lighten::video
