#include "formats/media/mp4_metadata.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "core/errors.h"
#include "formats/media/mp4_boxes.h"

namespace lighten::media {
namespace {

std::string_view text(ByteView file, size_t begin, size_t end) {
  return {reinterpret_cast<const char*>(file.data()) + begin, end - begin};
}

std::vector<Mp4Box> children(ByteView file, const Mp4Box& box, size_t skip = 0) {
  if (box.end - box.body < skip) return {};
  return read_boxes(file, box.body + skip, box.end);
}

// An ISO 'meta' is a full box (version and flags first); QuickTime's is not.
std::vector<Mp4Box> meta_children(ByteView file, const Mp4Box& meta) {
  const bool full = meta.end - meta.body >= 4 && be32(file, meta.body) == 0;
  return children(file, meta, full ? 4 : 0);
}

std::string handler_of(ByteView file, const std::vector<Mp4Box>& kids) {
  for (const Mp4Box& b : kids)
    if (b.type == "hdlr" && b.end - b.body >= 12)
      return std::string(text(file, b.body + 8, b.body + 12));
  return {};
}

// The keys an 'mdta' item list is indexed by (1 for the first).
std::vector<std::string> keys_of(ByteView file, const std::vector<Mp4Box>& kids) {
  std::vector<std::string> keys;
  for (const Mp4Box& b : kids) {
    if (b.type != "keys" || b.end - b.body < 8) continue;
    const uint32_t count = be32(file, b.body + 4);
    size_t at = b.body + 8;
    for (uint32_t i = 0; i < count && b.end - at >= 8; ++i) {
      const uint32_t size = be32(file, at);
      if (size < 8 || size > b.end - at) break;
      keys.emplace_back(text(file, at + 8, at + size));
      at += size;
    }
  }
  return keys;
}

// A '----' item's name: its 'mean' and 'name' (each a full box holding text).
std::string freeform_name(ByteView file, const std::vector<Mp4Box>& parts) {
  std::string name = "----";
  for (const Mp4Box& p : parts)
    if ((p.type == "mean" || p.type == "name") && p.end - p.body >= 4)
      name.append(":").append(text(file, p.body + 4, p.end));  // GCC 12 warns on + here
  return name;
}

void add_meta(ByteView file, const Mp4Box& meta, const std::string& scope,
              std::vector<MetadataItem>& out) {
  std::vector<Mp4Box> kids;
  try {
    kids = meta_children(file, meta);
  } catch (const FormatError&) {
    out.push_back(
        {scope, "'meta' box that does not parse", std::string(text(file, meta.begin, meta.end))});
    return;
  }
  // Boxes other than the item list (an ID3 tag, XML) are items of their own bytes.
  for (const Mp4Box& other : kids)
    if (other.type != "hdlr" && other.type != "keys" && other.type != "ilst" &&
        other.type != "free" && other.type != "skip")
      out.push_back({scope, fmt::format("'{}' in a 'meta' box", printable(other.type)),
                     std::string(text(file, other.begin, other.end))});
  const bool keyed = handler_of(file, kids) == "mdta";
  const std::vector<std::string> keys = keyed ? keys_of(file, kids) : std::vector<std::string>{};
  for (const Mp4Box& list : kids) {
    if (list.type != "ilst") continue;
    for (const Mp4Box& item : children(file, list)) {
      const std::vector<Mp4Box> parts = children(file, item);
      std::string name = item.type;
      if (keyed) {
        const uint32_t index = be32(file, item.begin + 4);
        name = index >= 1 && index <= keys.size() ? keys[index - 1] : fmt::format("key {}", index);
      } else if (item.type == "----") {
        name = freeform_name(file, parts);
      }
      std::string values;
      for (const Mp4Box& p : parts) {
        if (p.type != "data" || p.end - p.body < 8) continue;
        const std::string_view type = text(file, p.body, p.body + 4),
                               value = text(file, p.body + 8, p.end);
        values += fmt::format("{}:{}:", type.size(), value.size());
        values += type;
        values += value;
      }
      out.push_back({scope, fmt::format("'{}'", printable(name)), std::move(values)});
    }
  }
}

// The 'meta' boxes directly in `parent` (a moov or a trak) and in its user data.
std::vector<Mp4Box> metas_in(ByteView file, const Mp4Box& parent) {
  std::vector<Mp4Box> metas;
  for (const Mp4Box& b : children(file, parent)) {
    if (b.type == "meta") metas.push_back(b);
    if (b.type != "udta") continue;
    for (const Mp4Box& u : children(file, b))
      if (u.type == "meta") metas.push_back(u);
  }
  return metas;
}

}  // namespace

std::vector<MetadataItem> metadata_items(ByteView file) {
  std::vector<MetadataItem> items;
  const Mp4Layout layout = read_mp4_layout(file);
  for (const Mp4Box& moov : layout.boxes) {
    if (moov.type != "moov") continue;
    for (const Mp4Box& meta : metas_in(file, moov)) add_meta(file, meta, "the file", items);
    int track = 0;
    for (const Mp4Box& trak : children(file, moov)) {
      if (trak.type != "trak") continue;
      const std::string scope = fmt::format("track {}", ++track);
      for (const Mp4Box& meta : metas_in(file, trak)) add_meta(file, meta, scope, items);
    }
  }
  return items;
}

namespace {

// A box of `type` around `body`, its size in 32 bits where it fits.
Bytes boxed(std::string_view type, ByteView body) {
  const uint64_t size = body.size() + 8;
  Bytes out;
  out.reserve(size + 8);
  auto put = [&](uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out.push_back(uint8_t(v >> (8 * i)));
  };
  if (size <= UINT32_MAX) {
    put(size, 4);
    out.insert(out.end(), type.begin(), type.end());
  } else {
    put(1, 4);
    out.insert(out.end(), type.begin(), type.end());
    put(size + 8, 8);
  }
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

void append_box(Bytes& to, ByteView file, const Mp4Box& box) {
  to.insert(to.end(), file.begin() + ptrdiff_t(box.begin), file.begin() + ptrdiff_t(box.end));
}

}  // namespace

Bytes with_metadata_of(ByteView input, Bytes output) {
  Bytes moov_metas, udta_metas;  // the input's, whole boxes one after another
  for (const Mp4Box& moov : read_mp4_layout(input).boxes) {
    if (moov.type != "moov") continue;
    for (const Mp4Box& b : children(input, moov)) {
      if (b.type == "meta") append_box(moov_metas, input, b);
      if (b.type != "udta") continue;
      for (const Mp4Box& u : children(input, b))
        if (u.type == "meta") append_box(udta_metas, input, u);
    }
  }
  const Mp4Layout layout = read_mp4_layout(output);
  if (layout.boxes.empty() || layout.boxes.back().type != "moov" ||
      layout.trailing != output.size())
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "the muxer's moov is not its last box: its metadata cannot be put back");
  const Mp4Box moov = layout.boxes.back();
  Bytes body;
  body.reserve(moov.end - moov.body + moov_metas.size() + udta_metas.size() + 8);
  // The moov-level ones go before the first 'udta', so that the muxer's, which ends the moov,
  // still ends it: user data put back later joins it (a second 'udta' would be one too many).
  bool udta_seen = false;
  for (const Mp4Box& b : children(output, moov)) {
    if (b.type == "meta") continue;
    if (b.type != "udta") {
      append_box(body, output, b);
      continue;
    }
    Bytes items;
    for (const Mp4Box& u : children(output, b))
      if (u.type != "meta") append_box(items, output, u);
    if (!udta_seen) {
      body.insert(body.end(), moov_metas.begin(), moov_metas.end());
      items.insert(items.end(), udta_metas.begin(), udta_metas.end());
    }
    udta_seen = true;
    const Bytes udta = boxed("udta", items);
    body.insert(body.end(), udta.begin(), udta.end());
  }
  if (!udta_seen) {
    body.insert(body.end(), moov_metas.begin(), moov_metas.end());
    if (!udta_metas.empty()) {
      const Bytes udta = boxed("udta", udta_metas);
      body.insert(body.end(), udta.begin(), udta.end());
    }
  }
  const Bytes rebuilt = boxed("moov", body);
  output.resize(moov.begin);
  output.insert(output.end(), rebuilt.begin(), rebuilt.end());
  return output;
}

std::vector<std::string> metadata_lost(ByteView input, ByteView output) {
  std::unordered_map<std::string, int> held;  // scope, name and values of each output item
  auto key = [](const MetadataItem& m) { return m.scope + '\0' + m.name + '\0' + m.values; };
  for (const MetadataItem& m : metadata_items(output)) ++held[key(m)];
  std::vector<std::string> lost;
  for (const MetadataItem& m : metadata_items(input)) {
    int& n = held[key(m)];
    if (n > 0)
      --n;
    else
      lost.push_back(m.name + " of " + m.scope);
  }
  return lost;
}

}  // namespace lighten::media
