// `compact` mode only: photographic Flate images become baseline JPEGs (/DCTDecode) at the
// lowest quality whose decode still meets the policy's SSIMULACRA2 floor, whole-image and per
// tile, and the verifier's matching check.
#pragma once

#include <qpdf/QPDF.hh>
#include <qpdf/QPDFObjectHandle.hh>

#include <optional>
#include <set>
#include <string>

#include "codecs/deflate.h"
#include "core/bytes.h"
#include "formats/pdf/pdf_image_facts.h"
#include "lighten/policy.h"

namespace lighten::pdf {

// Whether the policy and the image allow the change: `compact` mode, 8-bit /DeviceRGB or
// /DeviceGray that the document does not redefine, no /Decode, /Mask or /SMaskInData, large
// enough to be a photograph, not a mask, and at most 64 MP (and the policy's pixel limit): the
// search holds about 7 bytes a pixel, which the file's size does not tell the scheduler.
bool may_become_jpeg(QPDFObjectHandle image, const Policy& policy, const ImageFacts& facts);

// The image's samples (`samples`, as decoded) as the smallest JPEG that meets the floor, with
// lighten's quality marker (re-runs leave it lossless); nullopt when no quality does. Throws
// FormatError(kLimitExceeded) once `out_of_time` says the time budget is spent.
std::optional<Bytes> photo_as_jpeg(QPDFObjectHandle image, const Bytes& samples,
                                   const Policy& policy, const OutOfTime& out_of_time);

// Empty when `jpeg` shows the image whose samples are `samples` within the policy's floor;
// otherwise what is wrong. `score` receives the whole-image SSIMULACRA2.
std::string check_photo_jpeg(QPDFObjectHandle image, const Bytes& samples, ByteView jpeg,
                             const Policy& policy, double* score);

}  // namespace lighten::pdf
