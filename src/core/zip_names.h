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

}  // namespace lighten
