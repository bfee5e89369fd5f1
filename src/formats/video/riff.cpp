#include "formats/video/riff.h"

#include <algorithm>

namespace lighten::video {
namespace {

// AVI nests hdrl > strl > chunk and movi > rec > chunk; anything much deeper is not AVI.
constexpr uint32_t kMaxDepth = 8;

// Parses the chunks in [begin, end) at `depth`, appending them in pre-order.
void parse_range(ByteView in, uint64_t begin, uint64_t end, uint32_t depth, RiffTree& tree) {
  uint64_t pos = begin;
  while (pos < end) {
    if (end - pos < 8) {
      throw FormatError(Reason::kCorrupt, pos,
                        std::to_string(end - pos) + " stray bytes at the end of a list");
    }
    RiffChunk c;
    c.offset = pos;
    c.id = load_le32(in.data() + pos);
    c.size = load_le32(in.data() + pos + 4);
    c.depth = depth;
    // A 'RIFF' chunk holds a list only at the top (AVI, AVIX); inside one, readers (ffmpeg)
    // skip it as a chunk of data, and so does lighten, or it would count streams they do not.
    c.is_list = c.id == fourcc("LIST") || (depth == 0 && c.id == fourcc("RIFF"));
    if (c.size > end - pos - 8) {
      throw FormatError(pos + 8 + c.size > in.size() ? Reason::kTruncated : Reason::kCorrupt, pos,
                        "chunk " + fourcc_text(c.id) + " of " + std::to_string(c.size) +
                            " bytes overruns its list");
    }
    const uint64_t data_end = pos + 8 + c.size;
    if (c.size % 2 == 1) {
      if (data_end < end) {
        c.has_pad = true;
      } else if (data_end != in.size()) {  // only the very last chunk of the file may lack it
        throw FormatError(Reason::kCorrupt, pos,
                          "odd-sized chunk " + fourcc_text(c.id) + " has no pad byte");
      }
    }
    const size_t index = tree.chunks.size();
    if (c.is_list) {
      if (c.size < 4) throw FormatError(Reason::kCorrupt, pos, "list shorter than its list type");
      if (depth + 1 >= kMaxDepth)
        throw FormatError(Reason::kCorrupt, pos, "RIFF lists nested too deep");
      c.list_type = load_le32(in.data() + pos + 8);
      tree.chunks.push_back(c);
      parse_range(in, pos + 12, data_end, depth + 1, tree);
    } else {
      tree.chunks.push_back(c);
    }
    tree.chunks[index].end = tree.chunks.size();
    pos = data_end + (c.has_pad ? 1 : 0);
  }
}

}  // namespace

std::string fourcc_text(uint32_t code) {
  std::string s(4, '?');
  for (int i = 0; i < 4; ++i) {
    const char ch = char(code >> (8 * i));
    if (ch >= 0x20 && ch < 0x7f) s[i] = ch;
  }
  return s;
}

long RiffTree::find_at(uint64_t offset) const {
  auto it = std::lower_bound(chunks.begin(), chunks.end(), offset,
                             [](const RiffChunk& c, uint64_t o) { return c.offset < o; });
  if (it == chunks.end() || it->offset != offset) return -1;
  return long(it - chunks.begin());
}

RiffTree parse_riff(ByteView in) {
  RiffTree tree;
  uint64_t pos = 0;
  // Top-level chunks are RIFF lists (AVI, then AVIX for OpenDML); whatever follows is kept.
  while (in.size() - pos >= 12 && starts_with(in, "RIFF", pos)) {
    const uint64_t size = load_le32(in.data() + pos + 4);
    const uint64_t end = std::min<uint64_t>(in.size(), pos + 8 + size + (size & 1));
    parse_range(in, pos, end, 0, tree);
    pos = end;
  }
  if (tree.chunks.empty()) throw FormatError(Reason::kCorrupt, 0, "no RIFF chunk at the start");
  tree.trailing_offset = pos;
  return tree;
}

}  // namespace lighten::video
