#include "formats/media/mp4_boxes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "core/errors.h"

namespace lighten::media {
uint32_t be32(ByteView b, size_t at) {
  return uint32_t(b[at]) << 24 | uint32_t(b[at + 1]) << 16 | uint32_t(b[at + 2]) << 8 | b[at + 3];
}

std::string printable(std::string_view type) {
  std::string out;
  for (unsigned char c : type)
    out += c >= 0x20 && c <= 0x7E ? std::string(1, char(c)) : fmt::format("\\x{:02X}", c);
  return out;
}

namespace {

uint64_t be64(ByteView b, size_t at) { return uint64_t(be32(b, at)) << 32 | be32(b, at + 4); }
void put_be32(uint8_t* at, uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = uint8_t(v >> (24 - 8 * i));
}
void put_be64(uint8_t* at, uint64_t v) {
  put_be32(at, uint32_t(v >> 32));
  put_be32(at + 4, uint32_t(v));
}

bool printable_type(ByteView b, size_t at) {
  return std::all_of(b.begin() + ptrdiff_t(at), b.begin() + ptrdiff_t(at + 4),
                     [](uint8_t c) { return c >= 0x20 && c <= 0x7E; });
}

// The box at `pos` of [pos, end): its size and header length, or nullopt when the bytes there
// cannot be one (fewer than 8, a size under the header or past `end`).
std::optional<Mp4Box> box_at(ByteView file, size_t pos, size_t end) {
  if (end - pos < 8) return std::nullopt;
  const uint32_t size32 = be32(file, pos);
  size_t header = 8;
  uint64_t size = size32;
  if (size32 == 1) {
    if (end - pos < 16) return std::nullopt;
    size = be64(file, pos + 8);
    header = 16;
  } else if (size32 == 0) {
    size = end - pos;
  }
  if (size < header || size > end - pos) return std::nullopt;
  return Mp4Box{std::string(reinterpret_cast<const char*>(file.data() + pos + 4), 4), pos,
                pos + header, pos + size_t(size)};
}

const Mp4Box* find_box(const std::vector<Mp4Box>& boxes, std::string_view type) {
  for (const Mp4Box& b : boxes)
    if (b.type == type) return &b;
  return nullptr;
}

std::vector<Mp4Box> children(ByteView file, const Mp4Box* box) {
  return box ? read_boxes(file, box->body, box->end) : std::vector<Mp4Box>{};
}

// The boxes of every user data box directly in `parent` (a moov or a trak), but 'meta' (its
// items libavformat reads into tags and writes afresh; the tags are compared instead).
// QuickTime's text atoms are kept as they are: the MP4 muxer writes a location as a 'loci' and
// a tag, never as the '\xA9xyz' that Android's readers look for, and atoms libavformat has no
// tag for it drops. The MP4 muxer writes no track's user data but its own 'kind' boxes, so a
// track's name or a camera's per-track atoms are put back too.
std::vector<Mp4Box> user_data_in(ByteView file, const Mp4Box* parent) {
  std::vector<Mp4Box> out;
  for (const Mp4Box& b : children(file, parent)) {
    if (b.type != "udta") continue;
    for (const Mp4Box& item : children(file, &b))
      if (item.type != "meta") out.push_back(item);
  }
  return out;
}

// A file's user data: the moov's, then each track's in the order of its 'trak' boxes (which
// is the order of the streams the muxer writes back).
struct UserData {
  Mp4Box parent;   // the moov or the track's 'trak'
  int track = -1;  // -1: the moov's own
  std::vector<Mp4Box> items;
};
// The moov's first (empty without a moov), then one per track.
std::vector<UserData> user_data(ByteView file) {
  std::vector<UserData> scopes;
  const std::vector<Mp4Box> top = read_mp4_layout(file).boxes;
  const Mp4Box* moov = find_box(top, "moov");
  if (!moov) return scopes;
  scopes.push_back({*moov, -1, user_data_in(file, moov)});
  int track = 0;
  for (const Mp4Box& b : children(file, moov))
    if (b.type == "trak") scopes.push_back({b, track++, user_data_in(file, &b)});
  return scopes;
}

// The scope of `scopes` for `track` (-1: the moov's), or null.
const UserData* scope_of(const std::vector<UserData>& scopes, int track) {
  for (const UserData& s : scopes)
    if (s.track == track) return &s;
  return nullptr;
}

std::string_view text_of(ByteView file, const Mp4Box& box) {
  return {reinterpret_cast<const char*>(file.data()) + box.begin, box.end - box.begin};
}

// The items of `in` (from `input`) that `out` (of `output`, possibly null) lacks byte for byte.
// Looked up by hash: a scope may hold 65,536 items, and pairwise comparison took a minute.
std::vector<const Mp4Box*> lacking_items(ByteView input, const UserData& in, ByteView output,
                                         const UserData* out) {
  std::unordered_set<std::string_view> kept;
  if (out)
    for (const Mp4Box& y : out->items) kept.insert(text_of(output, y));
  std::vector<const Mp4Box*> lacking;
  for (const Mp4Box& x : in.items)
    if (!kept.contains(text_of(input, x))) lacking.push_back(&x);
  return lacking;
}

// Sets the size of the box at `box` (its header as written) to `size`; throws where a 32-bit
// size field cannot hold it. A size of 0 (to the end of the file) stays.
void resize_box(Bytes& file, const Mp4Box& box, uint64_t size) {
  if (box.body - box.begin == 16) {
    put_be64(file.data() + box.begin + 8, size);
  } else if (be32(file, box.begin) != 0) {
    if (size > UINT32_MAX)
      throw FormatError(Reason::kUnsupportedVariant, box.begin,
                        fmt::format("the '{}' box would outgrow its size field", box.type));
    put_be32(file.data() + box.begin, uint32_t(size));
  }
}

// Appends `items` (whole boxes) to `parent` of `file`: into its last child where that is a
// 'udta' that ends it (as libavformat writes its own), else in a 'udta' of their own at its end.
// Returns the number of bytes inserted; `parent`'s size is left to the caller.
size_t append_user_data(Bytes& file, const Mp4Box& parent, Bytes items) {
  const std::vector<Mp4Box> kids = children(file, &parent);
  const bool into_last = !kids.empty() && kids.back().type == "udta" &&
                         kids.back().end == parent.end && kids.back().body - kids.back().begin == 8;
  if (into_last) {
    resize_box(file, kids.back(), kids.back().end - kids.back().begin + items.size());
  } else {
    if (8 + items.size() > UINT32_MAX)
      throw FormatError(Reason::kUnsupportedVariant, 0, "the user data would outgrow its box");
    Bytes header(8);
    put_be32(header.data(), uint32_t(8 + items.size()));
    std::memcpy(header.data() + 4, "udta", 4);
    items.insert(items.begin(), header.begin(), header.end());
  }
  file.insert(file.begin() + ptrdiff_t(parent.end), items.begin(), items.end());
  return items.size();
}

// The boxes the muxer writes again in a moov and in a track (with 'udta' and 'meta' compared as
// above): any other would be lost, a camera's 'uuid' in the moov or a 360-degree video's in a
// track among them.
// Padding ('free', 'skip', 'wide') holds nothing a reader uses: dropping it loses nothing. A
// track's 'tref' and 'tapt' must come out byte for byte (track_headers_changed).
bool padding(std::string_view type) { return type == "free" || type == "skip" || type == "wide"; }
bool rewritten_in_moov(std::string_view type) {
  return type == "mvhd" || type == "trak" || type == "udta" || type == "meta" || type == "iods" ||
         padding(type);
}
bool rewritten_in_track(std::string_view type) {
  return type == "tkhd" || type == "edts" || type == "mdia" || type == "tref" || type == "udta" ||
         type == "meta" || type == "tapt" || padding(type);
}

// Whether a QuickTime 'tapt' (the track's clean, production and encoded apertures) says no more
// than the track header's display size: every aperture that size, so dropping it changes
// nothing a player shows. Each child: version and flags, then width and height in 16.16.
bool apertures_are_the_display_size(ByteView file, const Mp4Box& tapt, uint32_t width,
                                    uint32_t height) {
  const std::vector<Mp4Box> apertures = children(file, &tapt);
  for (const Mp4Box& a : apertures) {
    if (a.end - a.body < 12) return false;
    if (be32(file, a.body + 4) != width || be32(file, a.body + 8) != height) return false;
  }
  return !apertures.empty();
}

// What players read in a track header (ISO 14496-12 8.3.2): whether the track is enabled, its
// alternate group (tracks of one group are played one at a time), its volume and its display
// size (16.16 fixed point).
struct TrackHeader {
  bool enabled = false;
  uint16_t alternate_group = 0, volume = 0;
  uint32_t width = 0, height = 0;
};

std::optional<TrackHeader> track_header(ByteView file, const Mp4Box& tkhd) {
  const ByteView body = file.subspan(tkhd.body, tkhd.end - tkhd.body);
  if (body.empty()) return std::nullopt;
  const size_t times = body[0] == 1 ? 32 : 20;  // creation to duration, after version and flags
  const size_t fields = 4 + times + 8;          // then reserved (8), layer, group, volume, ...
  if (body.size() < fields + 52) return std::nullopt;
  TrackHeader h;
  h.enabled = body[3] & 1;
  h.alternate_group = uint16_t(body[fields + 2] << 8 | body[fields + 3]);
  h.volume = uint16_t(body[fields + 4] << 8 | body[fields + 5]);
  h.width = be32(body, fields + 44);
  h.height = be32(body, fields + 48);
  return h;
}

// For each track, the tracks played instead of it: those of its alternate group (0: none).
std::vector<std::vector<size_t>> alternatives(const std::vector<TrackHeader>& tracks) {
  std::vector<std::vector<size_t>> out(tracks.size());
  for (size_t i = 0; i < tracks.size(); ++i)
    for (size_t k = 0; k < tracks.size(); ++k)
      if (k != i && tracks[i].alternate_group != 0 &&
          tracks[k].alternate_group == tracks[i].alternate_group)
        out[i].push_back(k);
  return out;
}

// More boxes than this at one level are refused: each costs memory, and no file needs them.
constexpr size_t kMaxBoxesPerLevel = 1 << 16;

// Types that begin a box at the top level: one of them running past the end is a cut file.
bool top_level_type(std::string_view type) {
  static constexpr std::string_view kTypes[] = {"ftyp", "moov", "mdat", "free", "skip", "wide",
                                                "uuid", "meta", "moof", "mfra", "sidx", "styp",
                                                "ssix", "pdin", "prft", "emsg"};
  return std::find(std::begin(kTypes), std::end(kTypes), type) != std::end(kTypes);
}

}  // namespace

std::vector<Mp4Box> read_boxes(ByteView file, size_t begin, size_t end) {
  std::vector<Mp4Box> boxes;
  for (size_t pos = begin; end - pos >= 8;) {
    const std::optional<Mp4Box> box = box_at(file, pos, end);
    if (!box) throw FormatError(Reason::kCorrupt, pos, "a box runs past the one that holds it");
    if (boxes.size() == kMaxBoxesPerLevel)
      throw FormatError(Reason::kLimitExceeded, pos, "more than 65,536 boxes at one level");
    boxes.push_back(*box);
    pos = box->end;
  }
  return boxes;
}

std::optional<Mp4Box> box_below(ByteView file, const Mp4Box& from,
                                std::initializer_list<std::string_view> path) {
  std::optional<Mp4Box> at = from;
  for (std::string_view type : path) {
    const std::vector<Mp4Box> kids = children(file, &*at);
    const Mp4Box* next = find_box(kids, type);
    if (!next) return std::nullopt;
    at = *next;
  }
  return at;
}

std::string handler_of(ByteView file, const Mp4Box& trak) {
  const std::optional<Mp4Box> hdlr = box_below(file, trak, {"mdia", "hdlr"});
  // version and flags, pre_defined, then the handler type
  if (!hdlr || hdlr->end - hdlr->body < 12) return "";
  return std::string(reinterpret_cast<const char*>(file.data()) + hdlr->body + 8, 4);
}

std::vector<Mp4Box> tracks_of(ByteView file) {
  std::vector<Mp4Box> tracks;
  for (const Mp4Box& b : children(file, find_box(read_mp4_layout(file).boxes, "moov")))
    if (b.type == "trak") tracks.push_back(b);
  return tracks;
}

Mp4Layout read_mp4_layout(ByteView file) {
  Mp4Layout layout;
  size_t pos = 0;
  while (pos < file.size()) {
    const std::optional<Mp4Box> box = box_at(file, pos, file.size());
    if (!box) {
      // A top-level box that runs past the end is a cut file; other bytes are data appended
      // after the last box, which readers skip.
      if (file.size() - pos >= 8 &&
          top_level_type({reinterpret_cast<const char*>(file.data() + pos + 4), 4}))
        throw FormatError(
            Reason::kTruncated, pos,
            fmt::format("the '{}' box runs past the end of the file",
                        std::string_view(reinterpret_cast<const char*>(file.data() + pos + 4), 4)));
      break;
    }
    if (!printable_type(file, pos + 4)) break;
    if (layout.boxes.size() == kMaxBoxesPerLevel)
      throw FormatError(Reason::kLimitExceeded, pos, "more than 65,536 top-level boxes");
    layout.boxes.push_back(*box);
    pos = box->end;
  }
  layout.trailing = pos;
  return layout;
}

bool moov_before_mdat(const Mp4Layout& layout) {
  for (const Mp4Box& b : layout.boxes) {
    if (b.type == "moov") return true;
    if (b.type == "mdat") return false;
  }
  return false;
}

bool has_video_track(ByteView file, const Mp4Layout& layout) {
  try {
    for (const Mp4Box& trak : children(file, find_box(layout.boxes, "moov"))) {
      if (trak.type != "trak") continue;
      const std::string handler = handler_of(file, trak);
      if (handler.empty() || handler == "vide") return true;
    }
    return false;
  } catch (const FormatError&) {
    return true;
  }
}

std::optional<std::string> remux_obstacle(ByteView file, const Mp4Layout& layout) {
  static constexpr std::string_view kKept[] = {"ftyp", "moov", "mdat", "free", "skip", "wide"};
  static constexpr std::string_view kFragments[] = {"moof", "mfra", "sidx", "styp", "ssix"};
  for (const Mp4Box& b : layout.boxes) {
    if (std::find(std::begin(kFragments), std::end(kFragments), b.type) != std::end(kFragments))
      return fmt::format("a fragmented file ('{}' boxes) would be written unfragmented",
                         printable(b.type));
    if (std::find(std::begin(kKept), std::end(kKept), b.type) == std::end(kKept))
      return fmt::format("a top-level '{}' box ({} bytes) would not be carried over",
                         printable(b.type), b.end - b.begin);
  }
  const Mp4Box* moov = find_box(layout.boxes, "moov");
  for (const Mp4Box& b : children(file, moov)) {
    if (b.type == "mvex")
      return std::string("a fragmented file ('mvex' in its moov) would be written unfragmented");
    if (!rewritten_in_moov(b.type))
      return fmt::format("a '{}' box in the moov ({} bytes) would not be carried over",
                         printable(b.type), b.end - b.begin);
    if (b.type != "trak") continue;
    for (const Mp4Box& t : children(file, &b))
      if (!rewritten_in_track(t.type))
        return fmt::format("a '{}' box in a track ({} bytes) would not be carried over",
                           printable(t.type), t.end - t.begin);
  }
  return std::nullopt;
}

std::optional<std::string> track_headers_changed(ByteView input, ByteView output) {
  const std::vector<Mp4Box> a = tracks_of(input), b = tracks_of(output);
  if (a.size() != b.size()) return std::string("the number of tracks changed");
  std::vector<TrackHeader> ha, hb;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::vector<Mp4Box> x = children(input, &a[i]), y = children(output, &b[i]);
    const Mp4Box* tx = find_box(x, "tkhd");
    const Mp4Box* ty = find_box(y, "tkhd");
    const std::optional<TrackHeader> hx = tx ? track_header(input, *tx) : std::nullopt;
    const std::optional<TrackHeader> hy = ty ? track_header(output, *ty) : std::nullopt;
    if (!hx || !hy) return fmt::format("track {}'s header cannot be read", i + 1);
    // References between tracks (a fallback, a description) and QuickTime's aperture modes are
    // written by the muxer only for what it knows itself; apertures of the display size (what
    // an iPhone writes for square pixels) say nothing more than the header.
    for (std::string_view type : {"tref", "tapt"}) {
      const Mp4Box* from = find_box(x, type);
      const Mp4Box* to = find_box(y, type);
      if (!from || (to && same_bytes(input.subspan(from->begin, from->end - from->begin),
                                     output.subspan(to->begin, to->end - to->begin))))
        continue;
      if (type == "tapt" && apertures_are_the_display_size(input, *from, hx->width, hx->height))
        continue;
      return fmt::format("track {}'s '{}' box would not be carried over", i + 1, type);
    }
    if (hx->enabled != hy->enabled)
      return fmt::format("track {} would be {}", i + 1, hx->enabled ? "disabled" : "enabled");
    // Only a sound track's volume is played (QuickTime writes 1.0 on video tracks too).
    if (handler_of(input, a[i]) == "soun" && hx->volume != hy->volume)
      return fmt::format("track {}'s volume would change", i + 1);
    if (hx->width != hy->width || hx->height != hy->height)
      return fmt::format("track {}'s display size would change", i + 1);
    ha.push_back(*hx);
    hb.push_back(*hy);
  }
  // The muxer numbers groups its own way: which tracks stand in for which must stay.
  if (alternatives(ha) != alternatives(hb))
    return std::string("the tracks' alternate groups (which play instead of which) would change");
  return std::nullopt;
}

std::vector<std::string> user_data_lost(ByteView input, ByteView output) {
  const std::vector<UserData> a = user_data(input), b = user_data(output);
  std::vector<std::string> lost;
  for (const UserData& scope : a) {
    for (const Mp4Box* x : lacking_items(input, scope, output, scope_of(b, scope.track)))
      lost.push_back(scope.track < 0
                         ? fmt::format("'{}' ({} bytes)", printable(x->type), x->end - x->begin)
                         : fmt::format("track {}'s '{}' ({} bytes)", scope.track + 1,
                                       printable(x->type), x->end - x->begin));
  }
  return lost;
}

Bytes with_user_data_of(ByteView input, Bytes output) {
  const std::vector<UserData> a = user_data(input), b = user_data(output);
  // What each of the output's scopes lacks, as bytes to append (a track the output lacks is
  // left to the verifier to name).
  std::vector<Bytes> lacking(b.size());
  bool any = false;
  for (size_t k = 0; k < b.size(); ++k) {
    const UserData* ours = scope_of(a, b[k].track);
    if (!ours) continue;
    for (const Mp4Box* x : lacking_items(input, *ours, output, &b[k])) {
      lacking[k].insert(lacking[k].end(), input.begin() + ptrdiff_t(x->begin),
                        input.begin() + ptrdiff_t(x->end));
      any = true;
    }
  }
  if (!any) return output;
  const Mp4Layout layout = read_mp4_layout(output);
  if (layout.boxes.empty() || layout.boxes.back().type != "moov" ||
      layout.trailing != output.size())
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "the muxer's moov is not its last box: its user data cannot be put back");
  // The scopes whose insertion point lies furthest into the file first, so that every box not
  // yet grown is where it was read: the moov's own (at its end) before a last track that ends
  // there too (its items then stay inside the track), then the tracks from the last.
  std::vector<size_t> order(b.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return b[x].parent.end != b[y].parent.end ? b[x].parent.end > b[y].parent.end
                                              : b[x].track < b[y].track;
  });
  size_t inserted = 0;
  for (size_t k : order) {
    if (lacking[k].empty()) continue;
    const Mp4Box& parent = b[k].parent;
    const size_t n = append_user_data(output, parent, std::move(lacking[k]));
    if (b[k].track >= 0) resize_box(output, parent, parent.end - parent.begin + n);
    inserted += n;
  }
  const Mp4Box& moov = layout.boxes.back();
  resize_box(output, moov, moov.end - moov.begin + inserted);
  return output;
}

Bytes with_marker_box(Bytes file, std::string_view marker) {
  const Mp4Layout layout = read_mp4_layout(file);
  if (layout.boxes.empty() || layout.boxes.back().type != "moov" || layout.trailing != file.size())
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "the muxer's moov is not its last box: lighten's marker cannot be added");
  Bytes box(8);
  put_be32(box.data(), uint32_t(8 + marker.size()));
  std::memcpy(box.data() + 4, kMarkerBox.data(), 4);
  box.insert(box.end(), marker.begin(), marker.end());
  const Mp4Box& moov = layout.boxes.back();
  const size_t inserted = append_user_data(file, moov, std::move(box));
  resize_box(file, moov, moov.end - moov.begin + inserted);
  return file;
}

std::string marker_box(ByteView file) {
  const std::vector<Mp4Box> top = read_mp4_layout(file).boxes;
  for (const Mp4Box& item : user_data_in(file, find_box(top, "moov")))
    if (item.type == kMarkerBox)
      return std::string(file.begin() + ptrdiff_t(item.body), file.begin() + ptrdiff_t(item.end));
  return {};
}

Bytes with_moov_first(ByteView file) {
  const Mp4Layout layout = read_mp4_layout(file);
  const auto& boxes = layout.boxes;
  const auto mdat =
      std::find_if(boxes.begin(), boxes.end(), [](const Mp4Box& b) { return b.type == "mdat"; });
  const auto moov =
      std::find_if(boxes.begin(), boxes.end(), [](const Mp4Box& b) { return b.type == "moov"; });
  if (mdat == boxes.end() || moov == boxes.end() || moov < mdat)
    return Bytes(file.begin(), file.end());
  const size_t shift = moov->end - moov->begin, from = mdat->begin, to = moov->begin;
  Bytes moved(file.begin() + ptrdiff_t(moov->begin), file.begin() + ptrdiff_t(moov->end));
  // Every chunk offset into what lies between the first mdat and the moov moves by the moov's
  // size; offsets before or after that stretch stay.
  const ByteView m(moved);
  for (const Mp4Box& trak : read_boxes(m, moov->body - moov->begin, m.size())) {
    if (trak.type != "trak") continue;
    const std::vector<Mp4Box> mdia = children(m, find_box(children(m, &trak), "mdia"));
    const std::vector<Mp4Box> minf = children(m, find_box(mdia, "minf"));
    for (const Mp4Box& table : children(m, find_box(minf, "stbl"))) {
      const size_t width = table.type == "stco" ? 4 : table.type == "co64" ? 8 : 0;
      if (width == 0) continue;
      if (table.end - table.body < 8)
        throw FormatError(Reason::kCorrupt, table.begin, "a chunk offset table is cut short");
      const uint32_t count = be32(m, table.body + 4);
      if (uint64_t(count) * width > table.end - table.body - 8)
        throw FormatError(Reason::kCorrupt, table.begin, "a chunk offset table is cut short");
      for (uint32_t i = 0; i < count; ++i) {
        const size_t at = table.body + 8 + size_t(i) * width;
        const uint64_t offset = width == 4 ? be32(m, at) : be64(m, at);
        if (offset < from || offset >= to) continue;
        if (width == 8) {
          put_be64(moved.data() + at, offset + shift);
        } else {
          if (offset + shift > UINT32_MAX)
            throw FormatError(Reason::kUnsupportedVariant, at,
                              "a 32-bit chunk offset would overflow with the moov moved first");
          put_be32(moved.data() + at, uint32_t(offset + shift));
        }
      }
    }
  }
  Bytes out;
  out.reserve(file.size());
  out.insert(out.end(), file.begin(), file.begin() + ptrdiff_t(from));
  out.insert(out.end(), moved.begin(), moved.end());
  out.insert(out.end(), file.begin() + ptrdiff_t(from), file.begin() + ptrdiff_t(to));
  out.insert(out.end(), file.begin() + ptrdiff_t(moov->end), file.end());
  return out;
}

}  // namespace lighten::media
