// The one exception type format parsers throw; the optimiser boundary turns it into an Outcome.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "lighten/outcome.h"

namespace lighten {

class FormatError : public std::runtime_error {
 public:
  FormatError(Reason reason, size_t offset, const std::string& message)
      : std::runtime_error(message), reason_(reason), offset_(offset) {}
  Reason reason() const { return reason_; }
  size_t offset() const { return offset_; }

 private:
  Reason reason_;
  size_t offset_;
};

}  // namespace lighten
