// What a PDF says about its images outside their own dictionaries: which images other objects
// use as masks, which device colour spaces a viewer may show otherwise than the perceptual
// metric reads them, and whether the file may hold progressive JPEGs.
#pragma once

#include <qpdf/QPDF.hh>
#include <qpdf/QPDFObjectHandle.hh>

#include <cstddef>
#include <set>
#include <string>

namespace lighten::pdf {

// The largest ICC profile read (press profiles run to a few MB): an output intent's longer one
// counts as unreadable, an image's refuses the file.
inline constexpr size_t kMaxProfileBytes = 32 << 20;

struct ImageFacts {
  // Images other objects name as /SMask or /Mask, and images a graphics state's luminosity soft
  // mask draws in its group: their exact values are what masking uses.
  std::set<QPDFObjGen> masks;
  // A luminosity soft mask's group without /Resources of its own draws with those of the page
  // (or form) where the mask is set, which this walk does not follow: then any image may be one.
  bool any_image_may_be_mask = false;
  // "/DeviceGray", "/DeviceRGB", "/DeviceCMYK" where the document redefines them: a
  // /DefaultGray, /DefaultRGB or /DefaultCMYK in some resources' colour spaces (ISO 32000 8.6.5.6:
  // images drawn there show through it), or an output intent (the catalogue's, or from PDF 2.0
  // a page's) whose profile does not read as sRGB (every CMYK one). Viewers that follow these
  // and viewers that do not show such images differently, so none of them reads as the metric
  // does for all.
  std::set<std::string> redefined_device_spaces;
  // False for a file written below PDF 1.3, which has no progressive DCT.
  bool progressive_allowed = true;
  // False for a file written below PDF 1.2, which has no Flate filter: its unfiltered streams
  // stay unfiltered.
  bool flate_allowed = true;

  bool used_as_mask(QPDFObjectHandle image) const {
    return any_image_may_be_mask || masks.count(image.getObjGen()) > 0;
  }
  // Whether the image's /ColorSpace is a device space the document redefines, named alone or as
  // a one-element array ([/DeviceRGB], ISO 32000 8.6.3), which viewers read the same way.
  bool in_redefined_space(QPDFObjectHandle image) const;
};

// The facts of every object reachable from the trailer (what a writer keeps: an unreferenced
// object must not decide anything a second run would decide otherwise). `written_as_15`: the
// file is written as PDF 1.5 whatever its version (--pdf-version raise).
ImageFacts image_facts(QPDF& pdf, bool written_as_15);

}  // namespace lighten::pdf
