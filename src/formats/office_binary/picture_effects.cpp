#include "formats/office_binary/picture_effects.h"

#include <array>
#include <cstdint>
#include <optional>

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

// Whether the simple property (OfficeArtFOPTE) at `at` is one of the effects.
bool property_is_effect(ByteView stream, size_t at) {
  if (stream.size() - at < kPropertySize) return false;
  const uint16_t opid = uint16_t(stream[at] | stream[at + 1] << 8);
  const bool complex = opid & 0x8000;
  return !complex && is_effect(opid & 0x3FFF, get_u32le(stream, at + 2));
}

// The number of properties of the table whose record header is at `pos`, if one stands there:
// recVer 3, recInstance the number of properties, recLen covering them (complex data follows).
std::optional<size_t> table_at(ByteView stream, size_t pos) {
  if (stream.size() - pos < kHeaderSize) return std::nullopt;
  const uint16_t version_instance = uint16_t(stream[pos] | stream[pos + 1] << 8);
  const uint16_t type = uint16_t(stream[pos + 2] | stream[pos + 3] << 8);
  if ((type != kFopt && type != kSecondaryFopt && type != kTertiaryFopt) ||
      (version_instance & 0xF) != 3)
    return std::nullopt;
  const size_t count = version_instance >> 4;
  const uint32_t length = get_u32le(stream, pos + 4);
  if (length < count * kPropertySize || stream.size() - pos - kHeaderSize < length)
    return std::nullopt;
  return count;
}

}  // namespace

bool shows_pictures_through_effects(ByteView stream) {
  if (stream.size() < kHeaderSize) return false;
  // Scanned from the end, keeping for each offset modulo the property size the nearest effect
  // at or after the current table's first property: each table is answered in one step. Reading
  // every candidate's properties cost up to 4,095 reads per byte of a crafted stream.
  constexpr size_t kNone = SIZE_MAX;
  std::array<size_t, kPropertySize> next_effect;
  next_effect.fill(kNone);
  for (size_t pos = stream.size() - kHeaderSize + 1; pos-- > 0;) {
    const size_t first = pos + kHeaderSize;
    if (property_is_effect(stream, first)) next_effect[first % kPropertySize] = first;
    // Record types are little-endian: 0xF00B, 0xF121 and 0xF122 end in the byte 0xF0 or 0xF1.
    if (stream[pos + 3] != 0xF0 && stream[pos + 3] != 0xF1) continue;
    const std::optional<size_t> count = table_at(stream, pos);
    const size_t effect = next_effect[first % kPropertySize];
    if (count && effect != kNone && effect - first < *count * kPropertySize) return true;
  }
  return false;
}

}  // namespace lighten::officeart
