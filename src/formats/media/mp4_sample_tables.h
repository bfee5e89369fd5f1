// A track's sample tables hold as many entries as they declare. libavformat allocates each table
// at its declared size before it reads a byte of it, and indexes constant-size samples one by
// one: a 2.7 kB file declaring 85 million samples took 2 GB, outside any memory budget.
#pragma once

#include "core/bytes.h"

namespace lighten::media {

// Throws FormatError(kCorrupt) where a table of a track's sample table box (stts, ctts, stsc,
// stsz, stz2, stco, co64, stss, stps) or its edit list declares more entries than its box
// holds, or where constant-size samples would hold more bytes than the file (QuickTime's
// compressed sound aside, whose samples of "1 byte" are frames that last 1 tick each).
void check_sample_tables(ByteView file);

}  // namespace lighten::media
