// Lists entry names of a ZIP archive by its central directory (by its local headers where no
// end-of-central-directory record is found), for kind sniffing only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"

namespace lighten {

struct ZipNames {
  std::vector<std::string> names;  // at most a bounded number, in directory order
  std::string mimetype;            // content of a first, stored "mimetype" entry, if any
};

// Never throws: a damaged archive yields what could be read.
ZipNames list_zip_names(ByteView bytes);

// Where the end-of-central-directory record starts (npos when none can be): the last one in the
// file's final 64 KiB + 22 bytes whose comment fits and whose directory ends where it starts
// (or that a ZIP64 locator precedes), so that "PK\5\6" inside an archive comment is passed
// over; where none agrees so, the last whose comment fits.
size_t find_zip_end_record(ByteView bytes);

// The ZIP64 end-of-central-directory record (Office's large files, `zip -fz`), which holds the
// directory's count and place when the end record's own fields are saturated.
struct Zip64EndRecord {
  size_t offset = 0;   // where the record starts
  size_t locator = 0;  // where its locator starts, just before the end record
  uint64_t size = 0;   // the record's size field: 44 plus any extensible data
  uint64_t entries_here = 0;
  uint64_t entries = 0;
  uint64_t cd_size = 0;
  uint64_t cd_offset = 0;
};

// The ZIP64 end record that a locator just before the end record at `eocd` points to; nullopt
// when no locator is there. Throws FormatError(kCorrupt) when the locator points outside the
// space before itself or at something other than a ZIP64 end record.
std::optional<Zip64EndRecord> read_zip64_end_record(ByteView bytes, size_t eocd);

}  // namespace lighten
