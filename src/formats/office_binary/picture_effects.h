// Whether a PowerPoint or Excel 97-2003 document shows a picture through an effect under which
// changes a perceptual floor allows become visible, read from the shapes' OfficeArt properties.
#pragma once

#include <cstdint>

#include "core/bytes.h"

namespace lighten::officeart {

inline constexpr uint16_t kFopt = 0xF00B;           // OfficeArtFOPT: a shape's properties
inline constexpr uint16_t kSecondaryFopt = 0xF121;  // OfficeArtSecondaryFOPT
inline constexpr uint16_t kTertiaryFopt = 0xF122;   // OfficeArtTertiaryFOPT
inline constexpr uint16_t kPictureTransparent = 0x0107;
inline constexpr uint16_t kPictureContrast = 0x0108;
inline constexpr uint16_t kPictureTransparentExt = 0x0115;
inline constexpr uint16_t kBlipBooleans = 0x013F;

// True when a property table in `stream` keys a colour as transparent (pictureTransparent or
// pictureTransparentExt other than 0xFFFFFFFF, "none"), turns a picture black and white
// (fPictureBiLevel, honoured only with fUsefPictureBiLevel) or raises its contrast
// (pictureContrast above 0x10000, the neutral value). `stream`: the PowerPoint Document stream
// (its drawing group's defaults included), or a workbook's drawings without their pictures
// (xls::drawings_without_pictures). Rather than follow every container, every place where a
// well-formed FOPT header stands is read; a stray match can only keep pictures lossless.
bool shows_pictures_through_effects(ByteView stream);

}  // namespace lighten::officeart
