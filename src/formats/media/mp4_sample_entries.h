// What a track's sample descriptions (moov/trak/mdia/minf/stbl/stsd) hold beside the codec's
// own configuration, checked after a remux: libavformat writes only the boxes it knows, so an
// ambisonic track's 'SA3D', a clean aperture ('clap'), an ICC profile in a 'colr', or the second
// view of a spatial video ('lhvC', 'vexu') would be lost without a word.
#pragma once

#include <string>
#include <vector>

#include "core/bytes.h"

namespace lighten::media {

// The boxes of `input`'s video and sound sample entries that `output` lacks in the same track
// and entry, by type: "'SA3D' (36 bytes) in track 2's sample description", "track 1's second
// sample description ('avc1')". What the re-encode writes afresh for the video (its codec
// configuration, the bitrate box, colour and aspect boxes the codec's own fields carry and the
// verifier compares) is not counted, nor a bitrate box anywhere. Empty when nothing is lost. Throws
// FormatError where a track's boxes cannot be read.
std::vector<std::string> sample_descriptions_lost(ByteView input, ByteView output);

}  // namespace lighten::media
