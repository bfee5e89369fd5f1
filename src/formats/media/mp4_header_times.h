// The creation and modification times of an MP4's movie header and of each track's track and
// media headers (mvhd, tkhd, mdhd), and the movie's duration against its tracks'. libavformat's
// muxer writes the file's creation time into every one of them and the modification time equal to
// it: each track's own times are put back.
#pragma once

#include <optional>
#include <string>

#include "core/bytes.h"

namespace lighten::media {

// `output` (the same tracks in the same order) with the times of `input`'s headers, each written
// into the output's header of the same place where its version's fields hold it.
Bytes with_header_times_of(ByteView input, Bytes output);

// Why `output` does not keep the times, if it does not: "track 2's 'mdhd' creation time would
// change".
std::optional<std::string> header_times_changed(ByteView input, ByteView output);

// Why the movie header's duration is damage, if it is: the movie lasts as long as its longest
// track (ISO/IEC 14496-12), and a re-encode's muxer would write that, so a duration far from it
// ("the movie header says 4294967.3 s, its longest track 0.2 s") makes the file corrupt. Files
// whose movie or tracks state no duration (fragmented files) say nothing.
std::optional<std::string> movie_duration_damage(ByteView file);

}  // namespace lighten::media
