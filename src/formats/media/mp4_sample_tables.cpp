#include "formats/media/mp4_sample_tables.h"

#include <string>

#include "core/errors.h"
#include "formats/media/mp4_boxes.h"

namespace lighten::media {
namespace {

// Bytes each entry of a full box's table takes, after its version/flags and count; 0 for a box
// that is not one of these tables.
uint64_t entry_bytes(const std::string& type, uint8_t version) {
  if (type == "stts" || type == "ctts" || type == "co64") return 8;
  if (type == "stsc") return 12;
  if (type == "stco" || type == "stss" || type == "stps") return 4;
  if (type == "elst") return version == 1 ? 20 : 12;
  return 0;
}

[[noreturn]] void overrun(const Mp4Box& box, size_t track, const std::string& what) {
  throw FormatError(Reason::kCorrupt, box.begin,
                    "track " + std::to_string(track) + "'s '" + box.type + "' " + what);
}

// `chunked_sound`: a sound track whose one time-to-sample entry lasts 1 tick: QuickTime writes
// compressed sound (IMA4, MACE) so, as samples of "1 byte" counted in uncompressed frames, more of
// them than the file has bytes, and libavformat indexes such a track by chunk, not by sample (any
// other track it indexes sample by sample, 24 bytes each).
void check_table(ByteView file, const Mp4Box& box, size_t track, bool chunked_sound) {
  const uint64_t room = box.end - box.body;
  if (box.type == "stsz" || box.type == "stz2") {
    if (room < 12) overrun(box, track, "is cut short");
    const uint64_t count = be32(file, box.body + 8);
    if (box.type == "stz2") {
      const uint64_t bits = file[box.body + 7];
      if (bits != 4 && bits != 8 && bits != 16)
        overrun(box, track, "has a field size of no sample");
      if ((count * bits + 7) / 8 > room - 12)
        overrun(box, track, "declares " + std::to_string(count) + " samples it does not hold");
      return;
    }
    const uint64_t size = be32(file, box.body + 4);
    if (size == 0 && count * 4 > room - 12)
      overrun(box, track, "declares " + std::to_string(count) + " samples it does not hold");
    if (size != 0 && !chunked_sound && count * size > file.size())
      overrun(box, track,
              "declares " + std::to_string(count) + " samples of " + std::to_string(size) +
                  " bytes, more than the file holds");
    return;
  }
  const uint64_t each = room >= 4 ? entry_bytes(box.type, file[box.body]) : 0;
  if (each == 0) return;
  if (room < 8) overrun(box, track, "is cut short");
  const uint64_t count = be32(file, box.body + 4);
  if (count * each > room - 8)
    overrun(box, track, "declares " + std::to_string(count) + " entries it does not hold");
}

}  // namespace

void check_sample_tables(ByteView file) {
  size_t track = 0;
  for (const Mp4Box& trak : tracks_of(file)) {
    ++track;
    const std::optional<Mp4Box> stbl = box_below(file, trak, {"mdia", "minf", "stbl"});
    bool chunked_sound = false;
    if (stbl && handler_of(file, trak) == "soun")
      if (const std::optional<Mp4Box> stts =
              box_below(file, trak, {"mdia", "minf", "stbl", "stts"});
          stts && stts->end - stts->body >= 16)
        chunked_sound = be32(file, stts->body + 4) == 1 && be32(file, stts->body + 12) == 1;
    if (stbl)
      for (const Mp4Box& box : read_boxes(file, stbl->body, stbl->end))
        check_table(file, box, track, chunked_sound);
    if (const std::optional<Mp4Box> edts = box_below(file, trak, {"edts"}))
      for (const Mp4Box& box : read_boxes(file, edts->body, edts->end))
        check_table(file, box, track, chunked_sound);
  }
}

}  // namespace lighten::media
