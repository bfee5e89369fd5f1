// Names below a compound file's root, read from its directory for kind sniffing and for the
// reasons given about compound files of other kinds.
#pragma once

#include <string>
#include <vector>

#include "core/bytes.h"

namespace lighten {

// Names (ASCII only) of the entries directly below a compound file's root, read from its
// directory: the header, the FAT (through the DIFAT in large files), the directory chain.
// Bounded and forgiving, never throws; empty when the directory cannot be walked.
std::vector<std::string> cfb_root_names(ByteView bytes);

}  // namespace lighten
