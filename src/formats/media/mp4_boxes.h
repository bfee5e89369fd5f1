// The box structure of an MP4, MOV or 3GP file as far as a remux through libavformat keeps it:
// what the muxer cannot carry is refused before anything is encoded, what it rearranges is put
// back (the moov before the media data, bytes after the last box), and both are checked again
// by the verifier.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bytes.h"

namespace lighten::media {

struct Mp4Box {
  std::string type;                     // four characters
  size_t begin = 0, body = 0, end = 0;  // the box, its contents after the header, its end
};

// The big-endian 32-bit field at `at` of `file` (the caller checks that it is there).
uint32_t be32(ByteView file, size_t at);

// A box type or item name for messages: bytes outside printable ASCII as \xNN ('\xA9xyz').
std::string printable(std::string_view type);

// The boxes one after another in [begin, end) of `file`; throws FormatError(kCorrupt) for one
// that runs past `end` or declares less than its header. Bytes after the last whole box that
// cannot be a box (under 8) end the list.
std::vector<Mp4Box> read_boxes(ByteView file, size_t begin, size_t end);

// The top-level boxes, and where the bytes after the last one start (the file's size when none).
struct Mp4Layout {
  std::vector<Mp4Box> boxes;
  size_t trailing = 0;
};
// Throws FormatError when the top level is not a sequence of boxes up to `trailing`.
Mp4Layout read_mp4_layout(ByteView file);

// The box `path` leads to from `from`, taking the first child of each type in turn ({"mdia",
// "minf", "stbl", "stsd"} from a 'trak'); nullopt where one is missing. Throws as read_boxes.
std::optional<Mp4Box> box_below(ByteView file, const Mp4Box& from,
                                std::initializer_list<std::string_view> path);

// The moov's 'trak' boxes in file order (the order of the streams libavformat reads).
std::vector<Mp4Box> tracks_of(ByteView file);

// A track's handler type (moov/trak/mdia/hdlr: "vide", "soun", ...); "" when unreadable.
std::string handler_of(ByteView file, const Mp4Box& trak);

// Why the remux would not carry this file over, if it would not: a fragmented file (moof, mvex:
// it would come out unfragmented), or a top-level box other than ftyp, moov, mdat, free, skip
// and wide (an XMP 'uuid' box, say, which libavformat drops).
std::optional<std::string> remux_obstacle(ByteView file, const Mp4Layout& layout);

// What the remux would change of its tracks' own boxes, if anything: a 'tref' or 'tapt' not
// carried byte for byte, or a track header whose enabled flag, volume or display size differs,
// or whose alternate groups make other tracks play instead of one another.
std::optional<std::string> track_headers_changed(ByteView input, ByteView output);

// Whether the moov comes before the first mdat (a file that plays while it downloads).
bool moov_before_mdat(const Mp4Layout& layout);

// Whether a track's handler (moov/trak/mdia/hdlr) says video ('vide'). A track whose boxes
// cannot be read counts as video, so that the answer never hides one.
bool has_video_track(ByteView file, const Mp4Layout& layout);

// The children of moov/udta and of each trak/udta, other than 'meta' (whose tags the muxer
// writes afresh), that `output` does not hold byte for byte in the same place (the moov's, or
// the track of the same number): "'XMP_' (1,234 bytes)", "track 1's 'name' (22 bytes)". Empty
// when all are there.
std::vector<std::string> user_data_lost(ByteView input, ByteView output);

// `output` (a muxer's, its moov the last box) with the user data boxes of `input` that it lacks
// (user_data_lost: vendor boxes such as Samsung's 'smta', which libavformat drops, and every
// track's, which its MP4 muxer does not write) put back: each into the 'udta' that ends its moov
// or track where there is one, else in a 'udta' of their own at its end. Throws FormatError
// where the moov is not the last box or a box would outgrow its size field.
Bytes with_user_data_of(ByteView input, Bytes output);

// lighten's marker in a user data box of its own, for muxers that drop the 'lighten' tag (the
// 3GP muxer writes only the 3GPP asset tags): the box's type, `file` (a muxer's output, its moov
// the last box) with the box appended to the moov's user data, and the marker such a box holds
// ("" where there is none). Readers skip user data boxes they do not know.
inline constexpr std::string_view kMarkerBox = "lgtn";
Bytes with_marker_box(Bytes file, std::string_view marker);
std::string marker_box(ByteView file);

// `file` (a muxer's output: ftyp, then mdat, then moov) with its moov moved before the first
// mdat and every chunk offset (stco, co64) moved with the media data. Throws FormatError when a
// 32-bit chunk offset would overflow.
Bytes with_moov_first(ByteView file);

}  // namespace lighten::media
