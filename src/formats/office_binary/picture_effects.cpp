#include "formats/office_binary/picture_effects.h"

#include "formats/office_binary/officeart_records.h"

namespace lighten::officeart {
namespace {

constexpr size_t kPropertySize = 6;  // OfficeArtFOPTE: opid (2 bytes), op (4 bytes)
constexpr uint32_t kNoTransparentColour = 0xFFFFFFFF;
constexpr int32_t kNeutralContrast = 0x10000;
constexpr uint32_t kBiLevel = 1u << 1, kUseBiLevel = 1u << 17;

bool is_effect(uint16_t id, uint32_t value) {
  switch (id) {
    case kPictureTransparent:
    case kPictureTransparentExt:
      return value != kNoTransparentColour;
    case kPictureContrast:
      return int32_t(value) > kNeutralContrast;
    case kBlipBooleans:
      return (value & kBiLevel) && (value & kUseBiLevel);
    default:
      return false;
  }
}

// Reads the property table whose record header is at `pos`, if one stands there: recVer 3,
// recInstance the number of properties, recLen covering them (complex data follows them).
bool table_shows_effect(ByteView stream, size_t pos) {
  if (stream.size() - pos < kHeaderSize) return false;
  const uint16_t version_instance = uint16_t(stream[pos] | stream[pos + 1] << 8);
  const uint16_t type = uint16_t(stream[pos + 2] | stream[pos + 3] << 8);
  if ((type != kFopt && type != kSecondaryFopt && type != kTertiaryFopt) ||
      (version_instance & 0xF) != 3)
    return false;
  const size_t count = version_instance >> 4;
  const uint32_t length = get_u32le(stream, pos + 4);
  if (length < count * kPropertySize || stream.size() - pos - kHeaderSize < length) return false;
  for (size_t i = 0; i < count; ++i) {
    const size_t at = pos + kHeaderSize + i * kPropertySize;
    const uint16_t opid = uint16_t(stream[at] | stream[at + 1] << 8);
    const bool complex = opid & 0x8000;
    if (!complex && is_effect(opid & 0x3FFF, get_u32le(stream, at + 2))) return true;
  }
  return false;
}

}  // namespace

bool shows_pictures_through_effects(ByteView stream) {
  // Record types are little-endian: 0xF00B, 0xF121 and 0xF122 end in the byte 0xF0 or 0xF1.
  for (size_t pos = 0; pos + kHeaderSize <= stream.size(); ++pos)
    if ((stream[pos + 3] == 0xF0 || stream[pos + 3] == 0xF1) && table_shows_effect(stream, pos))
      return true;
  return false;
}

}  // namespace lighten::officeart
