#include "formats/media/mp4_sample_entries.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "core/errors.h"
#include "formats/media/mp4_boxes.h"

namespace lighten::media {
namespace {

struct SampleEntry {
  Mp4Box box;
  std::vector<Mp4Box> children;  // the boxes after the entry's fixed fields
};

// The fixed fields before a sample entry's boxes (ISO 14496-12 12.1.3 and 12.2.3; QuickTime's
// sound description versions 1 and 2 add 16 and 36 bytes, where ISO's AudioSampleEntryV1, which
// only a version 1 'stsd' holds, adds none); 0 for handlers whose entries are not compared.
size_t fixed_fields(ByteView file, const Mp4Box& entry, std::string_view handler,
                    unsigned stsd_version) {
  if (handler == "vide") return 78;
  if (handler != "soun") return 0;
  if (stsd_version == 1 || entry.end - entry.body < 10) return 28;
  const unsigned version = unsigned(file[entry.body + 8]) << 8 | file[entry.body + 9];
  return version == 1 ? 44 : version == 2 ? 64 : 28;
}

std::vector<SampleEntry> sample_entries(ByteView file, const Mp4Box& trak,
                                        std::string_view handler) {
  const std::optional<Mp4Box> stsd = box_below(file, trak, {"mdia", "minf", "stbl", "stsd"});
  std::vector<SampleEntry> entries;
  if (!stsd || stsd->end - stsd->body < 8) return entries;
  for (const Mp4Box& box : read_boxes(file, stsd->body + 8, stsd->end)) {
    SampleEntry entry{box, {}};
    const size_t fixed = fixed_fields(file, box, handler, file[stsd->body]);
    if (fixed > 0 && box.end - box.body >= fixed) {
      try {
        entry.children = read_boxes(file, box.body + fixed, box.end);
      } catch (const FormatError&) {
        // Bytes after the fixed fields that are not boxes (an old writer's padding): nothing
        // there a reader takes for a box, so nothing to lose.
      }
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

// Boxes a remux may leave out or write otherwise without changing what a player does. A bitrate
// box is a hint. The re-encoded video's codec configuration is the new codec's; its colour
// description (as 'nclx' or 'nclc' figures, not an ICC profile), pixel aspect ratio and field
// order travel in the codec's own fields, which the verifier compares (refusing interlaced
// video and a container aspect ratio other than the codec's).
bool rewritten(ByteView file, const Mp4Box& box, std::string_view handler) {
  if (box.type == "btrt") return true;
  if (handler != "vide") return false;
  static constexpr std::string_view kVideo[] = {"avcC", "hvcC", "esds", "d263",
                                                "glbl", "strf", "pasp", "fiel"};
  if (std::find(std::begin(kVideo), std::end(kVideo), box.type) != std::end(kVideo)) return true;
  if (box.type != "colr" || box.end - box.body < 4) return false;
  const std::string_view colour_type(reinterpret_cast<const char*>(file.data()) + box.body, 4);
  return colour_type == "nclx" || colour_type == "nclc";
}

std::string ordinal(size_t n) {
  static constexpr std::string_view kWords[] = {"first", "second", "third"};
  return n < 3 ? std::string(kWords[n]) : fmt::format("{}th", n + 1);
}

}  // namespace

std::vector<std::string> sample_descriptions_lost(ByteView input, ByteView output) {
  const std::vector<Mp4Box> a = tracks_of(input), b = tracks_of(output);
  std::vector<std::string> lost;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const std::string handler = handler_of(input, a[i]);
    const std::vector<SampleEntry> x = sample_entries(input, a[i], handler);
    const std::vector<SampleEntry> y = sample_entries(output, b[i], handler_of(output, b[i]));
    for (size_t k = 0; k < x.size(); ++k) {
      if (k >= y.size()) {
        lost.push_back(fmt::format("track {}'s {} sample description ('{}')", i + 1, ordinal(k),
                                   printable(x[k].box.type)));
        continue;
      }
      for (const Mp4Box& box : x[k].children) {
        if (rewritten(input, box, handler)) continue;
        // A colour profile must come out as it was: the muxer writes a 'colr' of its own kind.
        const bool kept =
            std::any_of(y[k].children.begin(), y[k].children.end(), [&](const Mp4Box& c) {
              return c.type == box.type &&
                     (box.type != "colr" ||
                      same_bytes(input.subspan(box.begin, box.end - box.begin),
                                 output.subspan(c.begin, c.end - c.begin)));
            });
        if (!kept)
          lost.push_back(fmt::format("'{}' ({} bytes) in track {}'s sample description",
                                     printable(box.type), box.end - box.begin, i + 1));
      }
    }
  }
  return lost;
}

}  // namespace lighten::media
