// What a compound file's header and directory say, read without parsing the file: the names
// below its root (for kind sniffing and for the reasons given about other kinds) and damage.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/bytes.h"

namespace lighten {

// A name or path as readers match it: ASCII letters in upper case (the names documents' readers
// look up are ASCII, and [MS-CFB] compares names regardless of case).
std::string cfb_folded_name(std::string_view name);

// Names (ASCII only) of the entries directly below a compound file's root, read from its
// directory: the header, the FAT (through the DIFAT in large files), the directory chain.
// Bounded and forgiving, never throws; empty when the directory cannot be walked.
std::vector<std::string> cfb_root_names(ByteView bytes);

// Throws FormatError for what the header says the file cannot hold: a header cut short
// (truncated), a sector size other than 512 or 4096 bytes (corrupt), or a directory or
// allocation-table sector past the end, as in a document cut short (truncated). Only the header
// is read, so a file that passes is not parsed whole just to be refused.
void check_cfb_header(ByteView bytes);

}  // namespace lighten
