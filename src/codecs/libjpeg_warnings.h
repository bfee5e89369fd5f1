// Which of libjpeg's warnings leave the image data whole, for every caller that decodes with it.
#pragma once

// clang-format off
#include <cstddef>
#include <cstdio>  // jpeglib.h needs size_t and FILE first
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

namespace lighten {

// A warning about the markers alone (an odd JFIF version or Adobe transform, a malformed ICC
// chunk): the pixels decode as the file holds them.
inline bool libjpeg_marker_warning(int code) {
  return code == JWRN_JFIF_MAJOR || code == JWRN_ADOBE_XFORM || code == JWRN_BOGUS_ICC;
}

}  // namespace lighten
