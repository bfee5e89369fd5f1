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

// The movie header's duration and its longest track's (the track headers' durations, edits
// included), in seconds. By ISO/IEC 14496-12 the two are one, and a re-encode's muxer writes the
// track's. nullopt where either states none, and in a fragmented file ('mvex'), whose tracks go
// on in fragments.
struct MovieDurations {
  double movie_s = 0, longest_track_s = 0;
};
std::optional<MovieDurations> movie_durations(ByteView file);

}  // namespace lighten::media
