// Lists entry names of a ZIP archive by its central directory (by its local headers where no
// end-of-central-directory record is found), for kind sniffing only.
#pragma once

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

}  // namespace lighten
