// describe_jpeg: what `lighten info` shows, from the marker segments alone (no decoding).
#include <cstdlib>
#include <optional>
#include <string>

#include "formats/jpeg/jpeg_format.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/metadata.h"
#include "formats/jpeg/mpf.h"

namespace lighten {
namespace jpeg {
namespace {

std::string with_commas(uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string s;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}

const char* coding(uint8_t sof) {
  switch (sof) {
    case 0xC0:
      return "baseline";
    case 0xC1:
      return "extended sequential";
    case 0xC2:
      return "progressive";
    case 0xC9:
      return "arithmetic, sequential";
    case 0xCA:
      return "arithmetic, progressive";
    default:
      return "other";
  }
}

std::string subsampling(const FrameInfo& f) {
  if (f.components.size() < 3) return "none";
  const auto& y = f.components[0];
  const auto& c = f.components[1];
  if (c.h != 1 || c.v != 1 || f.components[2].h != 1 || f.components[2].v != 1) return "irregular";
  if (y.h == 1 && y.v == 1) return "4:4:4";
  if (y.h == 2 && y.v == 2) return "4:2:0";
  if (y.h == 2 && y.v == 1) return "4:2:2";
  if (y.h == 1 && y.v == 2) return "4:4:0";
  if (y.h == 4 && y.v == 1) return "4:1:1";
  return std::to_string(y.h) + "x" + std::to_string(y.v);
}

// IJG quality whose scaled standard luminance table is closest to table 0.
int estimate_quality(const uint16_t* table) {
  static constexpr int kStd[64] = {16,  11, 12, 14,  12,  10,  16,  14,  13, 14,  18,  17,  16,
                                   19,  24, 40, 26,  24,  22,  22,  24,  49, 35,  37,  29,  40,
                                   58,  51, 61, 60,  57,  51,  56,  55,  64, 72,  92,  78,  64,
                                   68,  87, 69, 55,  56,  80,  109, 81,  87, 95,  98,  103, 104,
                                   103, 62, 77, 113, 121, 112, 100, 120, 92, 101, 103, 99};
  int best = 0;
  long best_err = -1;
  for (int q = 1; q <= 100; ++q) {
    long scale = q < 50 ? 5000 / q : 200 - 2 * q;
    long err = 0;
    for (int i = 0; i < 64; ++i) {  // both in zigzag order
      long t = (kStd[i] * scale + 50) / 100;
      t = t < 1 ? 1 : (t > 255 ? 255 : t);
      err += std::labs(t - table[i]);
    }
    if (best_err < 0 || err < best_err) {
      best_err = err;
      best = q;
    }
  }
  return best;
}

}  // namespace
}  // namespace jpeg

void describe_jpeg(ByteView input, FileInfo& info) {
  using namespace jpeg;
  Layout layout = parse_layout(input);
  const FrameInfo& f = layout.frame;
  auto add = [&](std::string name, std::string value) {
    info.properties.emplace_back(std::move(name), std::move(value));
  };
  add("width", std::to_string(f.width));
  add("height", std::to_string(f.height));
  add("components", std::to_string(f.components.size()));
  bool adobe = false;
  int transform = -1;
  unsigned restart = 0;
  std::optional<int> luma_quality;
  for (const Segment& s : layout.segments) {
    if (const std::optional<uint8_t> t = adobe_transform(s)) {
      adobe = true;
      transform = *t;
    }
    if (s.marker == kDri && s.payload.size() >= 2) restart = s.payload[0] << 8 | s.payload[1];
    if (s.marker == kDqt && !luma_quality) {
      ByteReader r(s.payload);
      while (!r.at_end() && !luma_quality) {
        uint8_t pq_tq = r.u8();
        uint16_t table[64];
        for (uint16_t& v : table) v = (pq_tq >> 4) ? r.u16be() : r.u8();
        if ((pq_tq & 15) == (f.components.empty() ? 0 : f.components[0].tq))
          luma_quality = estimate_quality(table);
      }
    }
  }
  std::string space;
  switch (f.components.size()) {
    case 1:
      space = "gray";
      break;
    case 3:
      space = adobe && transform == 0 ? "RGB" : "YCbCr";
      break;
    case 4:
      space = adobe && transform == 2 ? "YCCK" : "CMYK";
      break;
    default:
      space = "other";
  }
  add("colour space", space);
  if (const std::optional<std::string> profile = icc_data_space(layout))
    add("ICC profile data space", quoted_icc_space(*profile));
  add("subsampling", subsampling(f));
  add("coding", coding(f.marker));
  add("precision", std::to_string(f.precision) + " bits");
  add("scans", std::to_string(layout.scans));
  add("restart interval", restart ? std::to_string(restart) + " MCUs" : "none");
  if (luma_quality) add("estimated quality", "q" + std::to_string(*luma_quality));
  for (const Segment& s : layout.segments) {
    if (!s.is_metadata()) continue;
    std::string label = segment_label(s);
    add("metadata", std::string(marker_name(s.marker)) + (label.empty() ? "" : " " + label) + " " +
                        with_commas(s.length) + " bytes");
  }
  for (const Segment& s : layout.segments)
    if (s.marker == 0xE1)
      if (auto o = exif_orientation(s.payload)) {
        add("orientation", std::to_string(*o));
        break;
      }
  add("bytes after EOI", with_commas(input.size() - layout.image_end));
  if (auto mpf = parse_mpf(input, layout)) add("MPF images", std::to_string(mpf->entries.size()));
}

}  // namespace lighten
