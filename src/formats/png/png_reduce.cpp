#include "formats/png/png_reduce.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "formats/png/png_filters.h"

namespace lighten {
namespace {

constexpr uint16_t kOpaque = 0xFFFF;
constexpr uint64_t kMaxReducedPixels = 64 << 20;

// A pixel as RGBA with every channel scaled to 16 bits, the way decoders expand it.
struct Rgba16 {
  uint16_t r = 0, g = 0, b = 0, a = kOpaque;
  uint64_t key() const { return uint64_t(r) << 48 | uint64_t(g) << 32 | uint64_t(b) << 16 | a; }
  bool grey() const { return r == g && g == b; }
};

// What one sample of `depth` bits is worth in 16-bit units: depth 8 -> 257.
uint32_t scale_of(unsigned depth) { return 65535u / ((1u << depth) - 1); }

uint16_t read_u16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }

Bytes u16_bytes(std::initializer_list<uint32_t> values) {
  Bytes out;
  for (uint32_t v : values) {
    out.push_back(uint8_t(v >> 8));
    out.push_back(uint8_t(v));
  }
  return out;
}

Bytes chunk_bytes(const char* type, ByteView data) {
  Bytes out;
  append_png_chunk(out, type, data);
  return out;
}

// Every pixel of every pass in stream order, expanded to RGBA16. nullopt when a palette index
// points past the palette (decoders disagree on those pixels, so nothing is reduced).
std::optional<std::vector<Rgba16>> expand_pixels(const PngFile& png, const Bytes& raw) {
  const PngHeader& h = png.header;
  const PngChunk* plte = find_png_chunk(png, "PLTE");
  const PngChunk* trns = find_png_chunk(png, "tRNS");
  const unsigned depth = h.bit_depth, channels = h.channels();
  const uint32_t scale = depth == 16 ? 1 : scale_of(depth);
  const uint32_t mask = depth == 16 ? 0xFFFF : (1u << depth) - 1;
  // The colour key of grey and truecolour images, in raw sample values.
  std::optional<std::array<uint32_t, 3>> colour_key;
  if (trns && h.color_type == 0 && trns->data.size() == 2)
    colour_key = std::array<uint32_t, 3>{read_u16(trns->data.data()), 0, 0};
  if (trns && h.color_type == 2 && trns->data.size() == 6)
    colour_key =
        std::array<uint32_t, 3>{read_u16(trns->data.data()), read_u16(trns->data.data() + 2),
                                read_u16(trns->data.data() + 4)};
  // A key beyond the bit depth (libpng compares only the low bits, others the whole value) or a
  // tRNS before PLTE (libpng ignores it): readers disagree on which pixels are transparent.
  if (colour_key &&
      std::any_of(colour_key->begin(), colour_key->end(), [&](uint32_t v) { return v > mask; }))
    return std::nullopt;
  if (trns && plte && trns < plte) return std::nullopt;
  // Pillow matches a 16-bit key against the samples' high bytes, libpng against whole values.
  if (colour_key && depth == 16) return std::nullopt;
  // Two tRNS chunks: libpng takes the first valid one, Pillow the last.
  if (std::count_if(png.chunks.begin(), png.chunks.end(),
                    [](const PngChunk& c) { return c.is("tRNS"); }) > 1)
    return std::nullopt;
  // A tRNS after the image data libpng ignores; others read it.
  if (trns && trns > find_png_chunk(png, "IDAT")) return std::nullopt;
  std::vector<Rgba16> palette;
  if (h.color_type == 3) {
    if (!plte) return std::nullopt;
    // More colours than the bit depth can index: libpng drops the extra ones, and then a tRNS
    // longer than what is left; others keep them.
    if (plte->data.size() / 3 > (size_t(1) << depth)) return std::nullopt;
    // More alpha entries than colours: libpng ignores the tRNS, other readers take its first
    // entries, so readers disagree on the pixels.
    if (trns && trns->data.size() > plte->data.size() / 3) return std::nullopt;
    for (size_t i = 0; i + 3 <= plte->data.size(); i += 3) {
      Rgba16 p{uint16_t(plte->data[i] * 257), uint16_t(plte->data[i + 1] * 257),
               uint16_t(plte->data[i + 2] * 257), kOpaque};
      if (trns && i / 3 < trns->data.size()) p.a = uint16_t(trns->data[i / 3] * 257);
      palette.push_back(p);
    }
  }
  std::vector<Rgba16> pixels;
  pixels.reserve(size_t(uint64_t(h.width) * h.height));
  size_t pos = 0;
  uint32_t s[4] = {};
  for (const PngPass& pass : png_passes(h)) {
    if (pass.width == 0 || pass.height == 0) continue;
    const size_t row = size_t(h.row_bytes(pass.width));
    for (uint32_t y = 0; y < pass.height; ++y, pos += row + 1) {
      const uint8_t* p = raw.data() + pos + 1;
      for (uint32_t x = 0; x < pass.width; ++x) {
        for (unsigned c = 0; c < channels; ++c) {
          const size_t i = size_t(x) * channels + c;
          if (depth == 16)
            s[c] = read_u16(p + 2 * i);
          else if (depth == 8)
            s[c] = p[i];
          else
            s[c] = (p[i * depth / 8] >> (8 - depth - i * depth % 8)) & mask;
        }
        Rgba16 px;
        switch (h.color_type) {
          case 0:
            px.r = px.g = px.b = uint16_t(s[0] * scale);
            if (colour_key && (*colour_key)[0] == s[0]) px.a = 0;
            break;
          case 2:
            px = {uint16_t(s[0] * scale), uint16_t(s[1] * scale), uint16_t(s[2] * scale), kOpaque};
            if (colour_key && *colour_key == std::array<uint32_t, 3>{s[0], s[1], s[2]}) px.a = 0;
            break;
          case 3:
            if (s[0] >= palette.size()) return std::nullopt;
            px = palette[s[0]];
            break;
          case 4:
            px.r = px.g = px.b = uint16_t(s[0] * scale);
            px.a = uint16_t(s[1] * scale);
            break;
          default:
            px = {uint16_t(s[0] * scale), uint16_t(s[1] * scale), uint16_t(s[2] * scale),
                  uint16_t(s[3] * scale)};
        }
        pixels.push_back(px);
      }
    }
  }
  return pixels;
}

// The facts about the pixels that decide which layouts can hold them.
struct PixelFacts {
  bool fits_8_bits = true;  // every channel is a multiple of 257
  bool opaque = true;
  bool grey = true;
  std::optional<Rgba16> colour_key;  // the one fully transparent colour, when it can be a key
  unsigned grey_depth = 1;           // fewest bits that hold every grey level
  std::vector<std::pair<Rgba16, size_t>> colours;  // with counts; empty when over 256
};

unsigned depth_holding(uint16_t v) {
  for (unsigned d : {1u, 2u, 4u, 8u})
    if (v % scale_of(d) == 0) return d;
  return 16;
}

PixelFacts study(const std::vector<Rgba16>& pixels) {
  PixelFacts f;
  std::unordered_map<uint64_t, size_t> index;
  bool too_many_colours = false;
  bool key_possible = true;
  for (const Rgba16& p : pixels) {
    if (p.r % 257 || p.g % 257 || p.b % 257 || p.a % 257) f.fits_8_bits = false;
    if (!p.grey()) f.grey = false;
    if (f.grey && f.grey_depth < 16) f.grey_depth = std::max(f.grey_depth, depth_holding(p.r));
    if (p.a != kOpaque) {
      f.opaque = false;
      if (p.a != 0 || (f.colour_key && f.colour_key->key() != p.key())) key_possible = false;
      f.colour_key = p;
    }
    if (!too_many_colours) {
      auto [it, added] = index.try_emplace(p.key(), f.colours.size());
      if (added) {
        if (f.colours.size() == 256) {
          too_many_colours = true;
          continue;
        }
        f.colours.emplace_back(p, 0);
      }
      ++f.colours[it->second].second;
    }
  }
  if (too_many_colours || !f.fits_8_bits) f.colours.clear();
  // A key also hides opaque pixels of its colour: then it cannot stand in for the alpha channel.
  if (f.colour_key && key_possible) {
    const Rgba16 k = *f.colour_key;
    for (const Rgba16& p : pixels)
      if (p.a == kOpaque && p.r == k.r && p.g == k.g && p.b == k.b) key_possible = false;
  }
  if (!key_possible) f.colour_key.reset();
  return f;
}

// Chunks whose meaning depends on the colour type or bit depth and that are rewritten here.
bool rewritten_here(const PngChunk& c) {
  return c.is("IHDR") || c.is("PLTE") || c.is("tRNS") || c.is("bKGD") || c.is("sBIT");
}

bool known_elsewhere_safe(const PngChunk& c) {
  static constexpr const char* kIndependent[] = {
      "IDAT", "IEND", "sPLT", "iCCP", "gAMA", "cHRM", "sRGB", "pHYs", "sCAL", "tIME", "tEXt",
      "zTXt", "iTXt", "eXIf", "oFFs", "sTER", "cICP", "mDCV", "cLLI", "gIFg", "gIFx"};
  for (const char* t : kIndependent)
    if (c.is(t)) return true;
  return false;
}

// Chunks that must come before PLTE.
bool precedes_palette(const PngChunk& c) {
  return c.is("gAMA") || c.is("cHRM") || c.is("iCCP") || c.is("sRGB") || c.is("sBIT") ||
         c.is("cICP") || c.is("mDCV") || c.is("cLLI");
}

struct Target {
  PngHeader header;
  std::vector<Rgba16> palette;  // colour type 3
  std::optional<Rgba16> colour_key;
  std::string description;
};

// The input's background colour in RGB16, when it has a bKGD chunk.
std::optional<Rgba16> background_of(const PngFile& png) {
  const PngChunk* c = find_png_chunk(png, "bKGD");
  if (!c) return std::nullopt;
  const PngHeader& h = png.header;
  const uint32_t scale = h.bit_depth == 16 ? 1 : scale_of(h.bit_depth);
  if ((h.color_type == 0 || h.color_type == 4) && c->data.size() == 2) {
    const uint32_t v = read_u16(c->data.data());
    if (v > (h.bit_depth == 16 ? 0xFFFFu : (1u << h.bit_depth) - 1)) return std::nullopt;
    return Rgba16{uint16_t(v * scale), uint16_t(v * scale), uint16_t(v * scale), kOpaque};
  }
  if ((h.color_type == 2 || h.color_type == 6) && c->data.size() == 6) {
    const uint8_t* d = c->data.data();
    const uint32_t m = h.bit_depth == 16 ? 0xFFFF : 0xFF;
    if (read_u16(d) > m || read_u16(d + 2) > m || read_u16(d + 4) > m) return std::nullopt;
    return Rgba16{uint16_t(read_u16(d) * scale), uint16_t(read_u16(d + 2) * scale),
                  uint16_t(read_u16(d + 4) * scale), kOpaque};
  }
  const PngChunk* plte = find_png_chunk(png, "PLTE");
  if (h.color_type == 3 && c->data.size() == 1 && plte &&
      c->data[0] * 3u + 3 <= plte->data.size()) {
    const uint8_t* e = plte->data.data() + c->data[0] * 3;
    return Rgba16{uint16_t(e[0] * 257), uint16_t(e[1] * 257), uint16_t(e[2] * 257), kOpaque};
  }
  return std::nullopt;
}

// bKGD for the target, or nullopt when the colour cannot be written in its form.
std::optional<Bytes> convert_background(const Rgba16& bg, const Target& t) {
  const PngHeader& h = t.header;
  if (h.color_type == 3) {
    // PLTE holds 8 bits a channel: a 16-bit background finer than that would be rounded.
    if (bg.r % 257 || bg.g % 257 || bg.b % 257) return std::nullopt;
    for (size_t i = 0; i < t.palette.size(); ++i)
      if (t.palette[i].r == bg.r && t.palette[i].g == bg.g && t.palette[i].b == bg.b)
        return Bytes{uint8_t(i)};
    return std::nullopt;
  }
  const uint32_t scale = h.bit_depth == 16 ? 1 : scale_of(h.bit_depth);
  if (bg.r % scale || bg.g % scale || bg.b % scale) return std::nullopt;
  if (h.color_type == 0 || h.color_type == 4) {
    if (!bg.grey()) return std::nullopt;
    return u16_bytes({bg.r / scale});
  }
  return u16_bytes({bg.r / scale, bg.g / scale, bg.b / scale});
}

// sBIT for the target: the significant bits of each channel, never more than it holds.
std::optional<Bytes> convert_significant_bits(const PngFile& png, const PngChunk& sbit,
                                              const Target& t) {
  static constexpr size_t kSizes[7] = {1, 0, 3, 3, 2, 0, 4};
  const uint8_t in_type = png.header.color_type;
  if (sbit.data.size() != kSizes[in_type]) return std::nullopt;
  const uint8_t* d = sbit.data.data();
  const bool in_grey = in_type == 0 || in_type == 4;
  const uint8_t r = d[0], g = in_grey ? d[0] : d[1], b = in_grey ? d[0] : d[2];
  const unsigned limit = t.header.color_type == 3 ? 8 : t.header.bit_depth;
  // Alpha from tRNS (a palette's can take any value) has no entry in the input's sBIT: all of
  // its bits count.
  const uint8_t a = in_type == 4 ? d[1] : in_type == 6 ? d[3] : uint8_t(limit);
  auto clamp = [&](uint8_t v) { return uint8_t(std::clamp<unsigned>(v, 1, limit)); };
  switch (t.header.color_type) {
    case 0:
      return Bytes{clamp(std::max({r, g, b}))};
    case 4:
      return Bytes{clamp(std::max({r, g, b})), clamp(a)};
    case 6:
      return Bytes{clamp(r), clamp(g), clamp(b), clamp(a)};
    default:
      return Bytes{clamp(r), clamp(g), clamp(b)};
  }
}

Bytes transparency_chunk(const Target& t) {
  if (t.header.color_type == 3) {
    size_t n = t.palette.size();
    while (n > 0 && t.palette[n - 1].a == kOpaque) --n;
    if (n == 0) return {};
    Bytes alpha;
    for (size_t i = 0; i < n; ++i) alpha.push_back(uint8_t(t.palette[i].a / 257));
    return chunk_bytes("tRNS", alpha);
  }
  if (!t.colour_key) return {};
  const Rgba16 k = *t.colour_key;
  const uint32_t scale = t.header.bit_depth == 16 ? 1 : scale_of(t.header.bit_depth);
  return chunk_bytes("tRNS", t.header.color_type == 0
                                 ? u16_bytes({k.r / scale})
                                 : u16_bytes({k.r / scale, k.g / scale, k.b / scale}));
}

Bytes header_chunk(const PngHeader& h) {
  Bytes d = u16_bytes({h.width >> 16, h.width & 0xFFFF, h.height >> 16, h.height & 0xFFFF});
  d.insert(d.end(), {h.bit_depth, h.color_type, 0, 0, h.interlace});
  return chunk_bytes("IHDR", d);
}

// The chunks of the target in order, or nullopt when one cannot follow.
std::optional<std::pair<std::vector<Bytes>, size_t>> convert_chunks(const PngFile& png,
                                                                    const Target& t) {
  const bool to_palette = t.header.color_type == 3;
  const std::optional<Rgba16> background = background_of(png);
  const Bytes trns = transparency_chunk(t);
  Bytes plte;
  if (to_palette) {
    Bytes entries;
    for (const Rgba16& p : t.palette)
      entries.insert(entries.end(), {uint8_t(p.r / 257), uint8_t(p.g / 257), uint8_t(p.b / 257)});
    plte = chunk_bytes("PLTE", entries);
  }
  std::vector<Bytes> out;
  size_t idat_at = 0;
  bool palette_written = false, trns_written = false, idat_seen = false;
  auto write_palette = [&] {
    if (!to_palette || palette_written) return;
    out.push_back(plte);
    palette_written = true;
    if (!trns.empty()) out.push_back(trns);
    trns_written = true;
  };
  for (const PngChunk& c : png.chunks) {
    if (c.is("IDAT")) {
      if (idat_seen) continue;
      idat_seen = true;
      write_palette();
      if (!trns_written && !trns.empty()) out.push_back(trns);
      trns_written = true;
      idat_at = out.size();
      continue;
    }
    if (palette_written && precedes_palette(c)) return std::nullopt;
    if (c.is("IHDR")) {
      out.push_back(header_chunk(t.header));
    } else if (c.is("PLTE")) {
      if (to_palette) write_palette();
      // A truecolour image keeps its suggested palette; a palette image that became grey loses it.
      else if (t.header.color_type != 0 && t.header.color_type != 4)
        out.emplace_back(c.whole.begin(), c.whole.end());
    } else if (c.is("tRNS")) {
      write_palette();
      if (!trns_written && !trns.empty()) out.push_back(trns);
      trns_written = true;
    } else if (c.is("bKGD")) {
      write_palette();
      if (!background) return std::nullopt;
      std::optional<Bytes> d = convert_background(*background, t);
      if (!d) return std::nullopt;
      out.push_back(chunk_bytes("bKGD", *d));
    } else if (c.is("sBIT")) {
      std::optional<Bytes> d = convert_significant_bits(png, c, t);
      if (!d) return std::nullopt;
      out.push_back(chunk_bytes("sBIT", *d));
    } else {
      out.emplace_back(c.whole.begin(), c.whole.end());
    }
  }
  return std::make_pair(std::move(out), idat_at);
}

// The target's unfiltered rows: the same pixels, in the same pass order, in its own form.
Bytes pack_pixels(const std::vector<Rgba16>& pixels, const Target& t) {
  const PngHeader& h = t.header;
  Bytes raw(size_t(png_data_size(h, UINT64_MAX)), 0);
  std::unordered_map<uint64_t, uint8_t> index;
  for (size_t i = 0; i < t.palette.size(); ++i) index.emplace(t.palette[i].key(), uint8_t(i));
  const unsigned depth = h.bit_depth, channels = h.channels();
  const uint32_t scale = depth == 16 ? 1 : scale_of(depth);
  size_t pos = 0, k = 0;
  uint32_t s[4] = {};
  for (const PngPass& pass : png_passes(h)) {
    if (pass.width == 0 || pass.height == 0) continue;
    const size_t row = size_t(h.row_bytes(pass.width));
    for (uint32_t y = 0; y < pass.height; ++y, pos += row + 1) {
      uint8_t* p = raw.data() + pos + 1;
      for (uint32_t x = 0; x < pass.width; ++x) {
        const Rgba16& px = pixels[k++];
        switch (h.color_type) {
          case 0:
            s[0] = px.r / scale;
            break;
          case 3:
            s[0] = index.at(px.key());
            break;
          case 4:
            s[0] = px.r / scale, s[1] = px.a / scale;
            break;
          default:
            s[0] = px.r / scale, s[1] = px.g / scale, s[2] = px.b / scale, s[3] = px.a / scale;
        }
        for (unsigned c = 0; c < channels; ++c) {
          const size_t i = size_t(x) * channels + c;
          if (depth == 16) {
            p[2 * i] = uint8_t(s[c] >> 8);
            p[2 * i + 1] = uint8_t(s[c]);
          } else if (depth == 8) {
            p[i] = uint8_t(s[c]);
          } else {
            p[i * depth / 8] |= uint8_t(s[c] << (8 - depth - i * depth % 8));
          }
        }
      }
    }
  }
  return raw;
}

bool palette_greys_are_indices(const PngFile& png) {
  const PngChunk* plte = find_png_chunk(png, "PLTE");
  if (!plte) return false;
  for (size_t i = 0; i + 3 <= plte->data.size(); i += 3)
    for (size_t c = 0; c < 3; ++c)
      if (plte->data[i + c] != i / 3) return false;
  return true;
}

unsigned palette_depth(size_t entries) {
  return entries <= 2 ? 1 : entries <= 4 ? 2 : entries <= 16 ? 4 : 8;
}

}  // namespace

PngLayout original_png_layout(const PngFile& png, Bytes raw) {
  PngLayout layout{png.header, std::move(raw), {}, 0, png.trailing, ""};
  bool idat_seen = false;
  for (const PngChunk& c : png.chunks) {
    if (!c.is("IDAT"))
      layout.chunks.emplace_back(c.whole.begin(), c.whole.end());
    else if (!idat_seen)
      layout.idat_at = layout.chunks.size();
    idat_seen = idat_seen || c.is("IDAT");
  }
  return layout;
}

std::vector<PngLayout> reduced_png_layouts(const PngFile& png, const Bytes& raw) {
  const PngHeader& in = png.header;
  bool colour_family_fixed = false;  // an ICC profile or cICP is for grey or for colour
  bool suggested_palette = false;    // a truecolour image's PLTE: it must stay truecolour
  for (const PngChunk& c : png.chunks) {
    if (c.is("iCCP") || c.is("cICP")) colour_family_fixed = true;
    if (c.is("PLTE") && in.color_type != 3) suggested_palette = true;
    // hIST counts palette entries and pCAL maps raw sample values; unknown chunks that are not
    // safe to copy depend on the image data: none of them can follow a new layout.
    const bool safe_to_copy = (c.type[3] & 0x20) != 0;
    if (!rewritten_here(c) && !known_elsewhere_safe(c) && !safe_to_copy) return {};
  }
  // Reductions hold every pixel in RGBA16 (8 bytes each): very large images are not reduced.
  if (uint64_t(in.width) * in.height > kMaxReducedPixels) return {};
  const std::optional<std::vector<Rgba16>> pixels = expand_pixels(png, raw);
  if (!pixels) return {};
  const PixelFacts facts = study(*pixels);
  const std::optional<Rgba16> background = background_of(png);
  if (find_png_chunk(png, "bKGD") && !background) return {};
  const bool in_grey = in.color_type == 0 || in.color_type == 4;
  // 16-bit grey is the one layout Pillow (most loaders' reader) gives as 16-bit numbers (mode
  // I): 16-bit colour, alpha or palette it gives as 8-bit. So 16-bit grey is written only where
  // it was read, and kept as it is: no reduction may change the numbers a loader gets.
  const bool in_grey_16 = in.color_type == 0 && in.bit_depth == 16;
  if (in_grey_16) return {};

  std::vector<Target> targets;
  // Grey or truecolour with as few channels and bits as the pixels allow.
  // A palette image becomes grey only where each entry's grey is its own index: a loader reads
  // a palette image's indices (masks), and grey ones' levels in their place.
  const bool grey_allowed = facts.grey && (in_grey || !colour_family_fixed) && !suggested_palette &&
                            (in.color_type != 3 || palette_greys_are_indices(png));
  if (in.color_type != 3 || grey_allowed) {
    Target t;
    t.header = in;
    // A key for 16-bit samples would reach Pillow as no key at all (see expand_pixels).
    const bool alpha_channel = !facts.opaque && !(facts.colour_key && facts.fits_8_bits);
    t.colour_key = alpha_channel ? std::nullopt : facts.colour_key;
    // A background colour that is not grey keeps the image RGB (grey bKGD cannot hold it).
    bool grey = grey_allowed && (!background || background->grey());
    unsigned depth = facts.fits_8_bits ? 8 : 16;
    if (grey && !alpha_channel) {
      depth = facts.grey_depth;
      if (background && background->grey()) depth = std::max(depth, depth_holding(background->r));
      // Pillow compares a 1-, 2- or 4-bit grey image's key with its samples scaled to 8 bits:
      // a key below 8 bits makes nothing transparent there.
      if (t.colour_key) depth = std::max(depth, 8u);
      // 16-bit grey from another layout would reach Pillow as 16-bit numbers (see in_grey_16).
      if (depth == 16) grey = false;
    }
    t.header.color_type = uint8_t((grey ? 0 : 2) | (alpha_channel ? 4 : 0));
    t.header.bit_depth = uint8_t(depth);
    const bool key_16 = t.colour_key && depth == 16;  // a background's bits can raise the depth
    if (!key_16 && (t.header.color_type != in.color_type || t.header.bit_depth != in.bit_depth)) {
      t.description = std::string(grey ? "grey" : "RGB") + (alpha_channel ? "+alpha " : " ") +
                      std::to_string(t.header.bit_depth) + "-bit";
      targets.push_back(std::move(t));
    }
  }
  // A palette, when 256 entries hold every colour (and the background).
  const bool palette_allowed =
      !facts.colours.empty() && !suggested_palette && !(in_grey && colour_family_fixed);
  if (palette_allowed) {
    Target t;
    t.header = in;
    t.header.color_type = 3;
    std::vector<std::pair<Rgba16, size_t>> colours = facts.colours;
    bool duplicate_entries = false;
    if (in.color_type == 3) {
      // The input's own numbers: a loader reads a palette image's indices (segmentation masks
      // are such images), so entries keep their places and only those after the last one used
      // (or the background's) are dropped.
      const PngChunk* plte = find_png_chunk(png, "PLTE");
      const PngChunk* trns = find_png_chunk(png, "tRNS");
      const PngChunk* bkgd = find_png_chunk(png, "bKGD");
      std::vector<bool> used(plte->data.size() / 3, false);
      const uint32_t mask = (1u << in.bit_depth) - 1;
      size_t pos = 0;
      for (const PngPass& pass : png_passes(in)) {
        if (pass.width == 0 || pass.height == 0) continue;
        const size_t row = size_t(in.row_bytes(pass.width));
        for (uint32_t y = 0; y < pass.height; ++y, pos += row + 1)
          for (uint32_t x = 0; x < pass.width; ++x) {
            const size_t bit = size_t(x) * in.bit_depth;
            used[(raw[pos + 1 + bit / 8] >> (8 - in.bit_depth - bit % 8)) & mask] = true;
          }
      }
      if (bkgd) used[bkgd->data[0]] = true;
      const size_t kept = size_t(std::find(used.rbegin(), used.rend(), true).base() - used.begin());
      for (size_t i = 0; i < kept; ++i) {
        Rgba16 p{uint16_t(plte->data[3 * i] * 257), uint16_t(plte->data[3 * i + 1] * 257),
                 uint16_t(plte->data[3 * i + 2] * 257), kOpaque};
        if (trns && i < trns->data.size()) p.a = uint16_t(trns->data[i] * 257);
        if (std::any_of(t.palette.begin(), t.palette.end(),
                        [&](const Rgba16& q) { return q.key() == p.key(); }))
          duplicate_entries = true;
        t.palette.push_back(p);
      }
    }
    // Other inputs get their colours by use: a second run on the output then meets the same
    // palette again. A palette that lists one colour twice keeps its form: the rows are written
    // by colour, and could not say which of the two entries each pixel named.
    const bool own_order = in.color_type == 3;
    if (!own_order) {
      t.palette.clear();
      if (background && std::none_of(colours.begin(), colours.end(), [&](const auto& c) {
            return c.first.r == background->r && c.first.g == background->g &&
                   c.first.b == background->b;
          }))
        colours.emplace_back(Rgba16{background->r, background->g, background->b, kOpaque}, 0);
      // Translucent entries first keep tRNS short; then the most used colours.
      std::stable_sort(colours.begin(), colours.end(), [](const auto& x, const auto& y) {
        const bool xt = x.first.a != kOpaque, yt = y.first.a != kOpaque;
        return xt != yt ? xt : x.second > y.second;
      });
      for (const auto& c : colours) t.palette.push_back(c.first);
    }
    const PngChunk* old_plte = find_png_chunk(png, "PLTE");
    if (t.palette.size() <= 256 && !duplicate_entries &&
        (!own_order || t.palette.size() * 3 != old_plte->data.size() ||
         palette_depth(t.palette.size()) < in.bit_depth)) {
      t.header.bit_depth = uint8_t(palette_depth(t.palette.size()));
      t.description = "palette " + std::to_string(t.palette.size()) + " colours, " +
                      std::to_string(t.header.bit_depth) + "-bit";
      targets.push_back(std::move(t));
    }
  }

  std::vector<PngLayout> layouts;
  for (const Target& t : targets) {
    auto chunks = convert_chunks(png, t);
    if (!chunks) continue;
    layouts.push_back({t.header, pack_pixels(*pixels, t), std::move(chunks->first), chunks->second,
                       png.trailing, t.description});
  }
  return layouts;
}

Bytes assemble_png(const PngLayout& layout, ByteView idat, size_t max_idat) {
  Bytes out(kPngSignature, kPngSignature + 8);
  for (size_t i = 0; i <= layout.chunks.size(); ++i) {
    if (i == layout.idat_at) {
      size_t at = 0;
      do {
        const size_t n = std::min(idat.size() - at, max_idat);
        append_png_chunk(out, "IDAT", idat.subspan(at, n));
        at += n;
      } while (at < idat.size());
    }
    if (i < layout.chunks.size())
      out.insert(out.end(), layout.chunks[i].begin(), layout.chunks[i].end());
  }
  out.insert(out.end(), layout.trailing.begin(), layout.trailing.end());
  return out;
}

}  // namespace lighten
