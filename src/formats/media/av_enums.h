// libavformat and libavcodec copy a stream's colour description (H.264's VUI, MP4's colr atom)
// into enum fields unchecked: a damaged stream gave AVColorSpace 107, which C++ may not load as
// that enum. Such fields are read here as the integers they hold, and kept only when the enum
// names them.
#pragma once

#include <cstring>
#include <type_traits>

namespace lighten::media {

// `field` if its value lies in [0, count), else `otherwise`: never loads an out-of-range value.
template <typename Enum>
Enum named_or(const Enum& field, int count, Enum otherwise) {
  static_assert(std::is_enum_v<Enum> && sizeof(Enum) == sizeof(int));
  int value = 0;
  std::memcpy(&value, &field, sizeof value);
  return value >= 0 && value < count ? static_cast<Enum>(value) : otherwise;
}

}  // namespace lighten::media
