#include "formats/media/mp4_header_times.h"

#include <algorithm>
#include <vector>

#include "core/errors.h"
#include "formats/media/mp4_boxes.h"

namespace lighten::media {
namespace {

// A header box whose body starts with version and flags, then the creation and modification
// times: 32 bits each in version 0, 64 in version 1.
struct TimedHeader {
  std::string where;  // "the movie's 'mvhd'", "track 1's 'tkhd'"
  std::optional<Mp4Box> box;
};

std::vector<TimedHeader> timed_headers(ByteView file) {
  std::vector<TimedHeader> headers;
  for (const Mp4Box& top : read_mp4_layout(file).boxes)
    if (top.type == "moov")
      headers.push_back({"the movie's 'mvhd'", box_below(file, top, {"mvhd"})});
  size_t number = 0;
  for (const Mp4Box& trak : tracks_of(file)) {
    const std::string track = "track " + std::to_string(++number) + "'s ";
    headers.push_back({track + "'tkhd'", box_below(file, trak, {"tkhd"})});
    headers.push_back({track + "'mdhd'", box_below(file, trak, {"mdia", "mdhd"})});
  }
  return headers;
}

struct Times {
  bool wide = false;  // version 1
  uint64_t created = 0, modified = 0;
};

std::optional<Times> times_of(ByteView file, const std::optional<Mp4Box>& box) {
  if (!box || box->end - box->body < 4) return std::nullopt;
  const uint8_t version = file[box->body];
  const size_t field = version == 1 ? 8 : 4;
  if (version > 1 || box->end - box->body < 4 + 2 * field) return std::nullopt;
  const auto read = [&](size_t at) {
    return field == 8 ? uint64_t(be32(file, at)) << 32 | be32(file, at + 4)
                      : uint64_t(be32(file, at));
  };
  return Times{field == 8, read(box->body + 4), read(box->body + 4 + field)};
}

// A version 0 or 1 header's field `offset` bytes after its times (32 bits, or 64 in version 1
// when `wide_in_v1`); nullopt when the box is too short.
std::optional<uint64_t> field_after_times(ByteView file, const std::optional<Mp4Box>& box,
                                          size_t offset, bool wide_in_v1) {
  if (!box || box->end - box->body < 4) return std::nullopt;
  const uint8_t version = file[box->body];
  if (version > 1) return std::nullopt;
  const size_t at = box->body + 4 + (version == 1 ? 16 : 8) + offset;
  const size_t size = version == 1 && wide_in_v1 ? 8 : 4;
  if (at + size > box->end) return std::nullopt;
  return size == 8 ? uint64_t(be32(file, at)) << 32 | be32(file, at + 4) : uint64_t(be32(file, at));
}

}  // namespace

std::optional<MovieDurations> movie_durations(ByteView file) {
  std::optional<Mp4Box> mvhd;
  for (const Mp4Box& top : read_mp4_layout(file).boxes) {
    if (top.type != "moov") continue;
    if (box_below(file, top, {"mvex"})) return std::nullopt;
    mvhd = box_below(file, top, {"mvhd"});
  }
  const std::optional<uint64_t> scale = field_after_times(file, mvhd, 0, false);
  const std::optional<uint64_t> movie = field_after_times(file, mvhd, 4, true);
  // A duration of 0 (or all ones) states none.
  if (!scale || *scale == 0 || !movie || *movie == 0 || *movie == UINT32_MAX ||
      *movie == UINT64_MAX)
    return std::nullopt;
  uint64_t longest = 0;
  for (const Mp4Box& trak : tracks_of(file)) {
    // After track_ID and a reserved word; all ones: not stated.
    const std::optional<uint64_t> d =
        field_after_times(file, box_below(file, trak, {"tkhd"}), 8, true);
    if (!d || *d == UINT32_MAX || *d == UINT64_MAX) return std::nullopt;
    longest = std::max(longest, *d);
  }
  if (longest == 0) return std::nullopt;
  return MovieDurations{double(*movie) / double(*scale), double(longest) / double(*scale)};
}

Bytes with_header_times_of(ByteView input, Bytes output) {
  const std::vector<TimedHeader> from = timed_headers(input), to = timed_headers(output);
  if (from.size() != to.size()) return output;
  for (size_t i = 0; i < from.size(); ++i) {
    const std::optional<Times> a = times_of(input, from[i].box), b = times_of(output, to[i].box);
    if (!a || !b) continue;
    if (!b->wide && (a->created > UINT32_MAX || a->modified > UINT32_MAX)) continue;
    const size_t field = b->wide ? 8 : 4;
    const auto write = [&](size_t at, uint64_t value) {
      for (size_t k = 0; k < field; ++k) output[at + k] = uint8_t(value >> (8 * (field - 1 - k)));
    };
    write(to[i].box->body + 4, a->created);
    write(to[i].box->body + 4 + field, a->modified);
  }
  return output;
}

std::optional<std::string> header_times_changed(ByteView input, ByteView output) {
  const std::vector<TimedHeader> from = timed_headers(input), to = timed_headers(output);
  if (from.size() != to.size()) return "the number of tracks changed";
  for (size_t i = 0; i < from.size(); ++i) {
    const std::optional<Times> a = times_of(input, from[i].box), b = times_of(output, to[i].box);
    if (!a) continue;
    if (!b || a->created != b->created) return from[i].where + " creation time would change";
    if (a->modified != b->modified) return from[i].where + " modification time would change";
  }
  return std::nullopt;
}

}  // namespace lighten::media
