// The metadata items of an MP4 or MOV file's 'meta' boxes, as readers other than libavformat
// see them: iTunes-style 'ilst' items named by their four characters ('\xA9nam', or a '----'
// item by its mean and name), QuickTime 'mdta' items by their key
// ("com.apple.quicktime.make"), each with the type and bytes of its values. libavformat reads
// some of these into tags and writes them back in a style of its own (typed values as text, an
// iTunes title as an 'mdta' key); comparing items catches what that would change.
#pragma once

#include <string>
#include <vector>

#include "core/bytes.h"

namespace lighten::media {

struct MetadataItem {
  std::string scope;   // "the file" (moov and moov/udta), or "track 2"
  std::string name;    // printable: "'\xA9nam'", "'com.apple.quicktime.make'"
  std::string values;  // each 'data' box's type and value, locale left out (muxers write 0)
};

// Every item of every 'meta' box in the moov, its user data and its tracks (a 'meta' box that
// does not parse counts as one item of its own bytes). Throws FormatError where the moov's
// own boxes do not parse.
std::vector<MetadataItem> metadata_items(ByteView file);

// `output` (a muxer's, its moov the last box) with the 'meta' boxes of its moov and of the
// moov's user data replaced by the input's, byte for byte: libavformat writes items back in a
// style of its own (typed values as text, iTunes items as keys), and drops what it has no tag
// for. The input's moov-level ones go before the moov's first 'udta', the others into it (one
// of their own where it has none). Throws FormatError where the moov is not the last box.
Bytes with_metadata_of(ByteView input, Bytes output);

// The items of `input` that `output` does not hold with the same scope, name and values:
// "'\xA9nam' of the file", "'com.apple.quicktime.live-photo.auto' of the file".
std::vector<std::string> metadata_lost(ByteView input, ByteView output);

}  // namespace lighten::media
