// The PNG verifier: libpng, the reference decoder, independent of lighten's own filter, inflate
// and reduction code, decodes input and output and every pixel is compared.
#include <png.h>

#include <algorithm>
#include <array>
#include <csetjmp>
#include <memory>
#include <optional>

#include "formats/png/png_chunks.h"
#include "formats/png/png_format.h"
#include "formats/png/png_metadata.h"

namespace lighten {
namespace {

struct DecodedPng {
  uint32_t width = 0, height = 0;
  int bit_depth = 0, color_type = 0;
  Bytes rows;
};

struct PngReader {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ByteView bytes;
  size_t pos = 0;
  std::vector<png_bytep> rows;  // here, not on the stack: longjmp skips stack destructors
  ~PngReader() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
};

void read_callback(png_structp png, png_bytep out, size_t n) {
  auto* r = static_cast<PngReader*>(png_get_io_ptr(png));
  if (n > r->bytes.size() - r->pos) png_error(png, "read past the end");
  std::copy_n(r->bytes.data() + r->pos, n, out);
  r->pos += n;
}

// Rows as stored (as_rgba16 false), or every pixel expanded to RGBA with 16-bit samples, the form
// in which a reduced image must equal its input. Returns false when libpng cannot decode the file.
bool decode_with_libpng(ByteView bytes, bool as_rgba16, DecodedPng& out) {
  auto reader = std::make_unique<PngReader>();
  reader->bytes = bytes;
  // Errors end the decode through setjmp below, warnings are ignored: libpng's own handlers
  // would print them on standard error, past --quiet.
  reader->png = png_create_read_struct(
      PNG_LIBPNG_VER_STRING, nullptr, [](png_structp p, png_const_charp) { png_longjmp(p, 1); },
      [](png_structp, png_const_charp) {});
  if (!reader->png) return false;
  reader->info = png_create_info_struct(reader->png);
  if (!reader->info) return false;
  // Only pointers that never change live across setjmp.
  PngReader* r = reader.get();
  DecodedPng* result = &out;
  if (setjmp(png_jmpbuf(r->png))) return false;
  png_set_read_fn(r->png, r, read_callback);
  png_set_user_limits(r->png, 0x7FFFFFFF, 0x7FFFFFFF);
  png_set_chunk_malloc_max(r->png, 0);  // any chunk length (a limit refuses larger chunks)
  // Text, profile and EXIF chunks are compared as bytes, not read: libpng would inflate a zTXt,
  // iTXt or iCCP whole (a 400 MB comment in a 420 kB file) or hold a large one in memory.
  static constexpr png_byte kSkipped[] = "zTXt\0iTXt\0iCCP\0tEXt\0eXIf\0sPLT";
  png_set_keep_unknown_chunks(r->png, PNG_HANDLE_CHUNK_NEVER, kSkipped, 6);
  png_read_info(r->png, r->info);
  result->width = png_get_image_width(r->png, r->info);
  result->height = png_get_image_height(r->png, r->info);
  result->bit_depth = png_get_bit_depth(r->png, r->info);
  result->color_type = png_get_color_type(r->png, r->info);
  if (as_rgba16) {
    png_set_expand(r->png);  // palette to RGB, grey to 8 bits, tRNS to alpha
    png_set_expand_16(r->png);
    png_set_gray_to_rgb(r->png);
    png_set_add_alpha(r->png, 0xFFFF, PNG_FILLER_AFTER);
  }
  png_set_interlace_handling(r->png);
  png_read_update_info(r->png, r->info);
  const size_t row = png_get_rowbytes(r->png, r->info);
  if (as_rgba16 && row != size_t(result->width) * 8) png_error(r->png, "not expanded to RGBA16");
  result->rows.assign(row * result->height, 0);
  r->rows.resize(result->height);
  for (uint32_t y = 0; y < result->height; ++y) r->rows[y] = result->rows.data() + y * row;
  png_read_image(r->png, r->rows.data());
  png_read_end(r->png, nullptr);
  return true;
}

// Chunks a colour-type or bit-depth reduction rewrites; the pixel comparison covers them.
bool follows_reduction(const PngChunk& c) {
  return c.is("IDAT") || c.is("IHDR") || c.is("PLTE") || c.is("tRNS") || c.is("bKGD") ||
         c.is("sBIT");
}

// The colour a bKGD chunk names, 16 bits a channel (grey as three equal channels): what a
// reduction must keep, though it rewrites the chunk (and the pixel comparison cannot see it).
// nullopt without one; {} entries for one that does not parse.
std::optional<std::array<uint32_t, 3>> background_colour(const PngFile& f) {
  const PngChunk* bkgd = find_png_chunk(f, "bKGD");
  if (bkgd == nullptr) return std::nullopt;
  const ByteView d = bkgd->data;
  const uint8_t type = f.header.color_type;
  const uint32_t depth = f.header.bit_depth;
  const uint32_t scale = depth == 16 ? 1 : 65535 / ((1u << depth) - 1);
  const auto u16 = [&](size_t at) { return uint32_t(d[at]) << 8 | d[at + 1]; };
  if (type == 3) {
    const PngChunk* plte = find_png_chunk(f, "PLTE");
    if (d.size() != 1 || plte == nullptr || plte->data.size() < 3u * d[0] + 3)
      return std::array<uint32_t, 3>{};
    const uint8_t* e = plte->data.data() + 3 * d[0];
    return std::array<uint32_t, 3>{e[0] * 257u, e[1] * 257u, e[2] * 257u};
  }
  if ((type == 0 || type == 4) && d.size() == 2)
    return std::array<uint32_t, 3>{u16(0) * scale, u16(0) * scale, u16(0) * scale};
  if ((type == 2 || type == 6) && d.size() == 6)
    return std::array<uint32_t, 3>{u16(0) * scale, u16(2) * scale, u16(4) * scale};
  return std::array<uint32_t, 3>{};
}

}  // namespace

Verdict verify_png(ByteView input, ByteView output, Context& context) {
  const PngFile a = read_png_chunks(input);
  const PngFile b = read_png_chunks(output);
  const PngHeader &ha = a.header, &hb = b.header;
  const bool same_form = ha.bit_depth == hb.bit_depth && ha.color_type == hb.color_type;
  const bool reduced = context.policy().png_reduce;
  if (!same_form && !reduced) return {false, "colour type or bit depth changed", {}};
  // Pixels are compared expanded to 16-bit RGBA only where the form or the palette changed: that
  // costs 8 bytes a pixel, 64 times a bilevel image's raw size. With the same palette and
  // transparency, equal indices are equal pixels.
  const auto same_chunk = [&](const char* type) {
    const PngChunk *p = find_png_chunk(a, type), *q = find_png_chunk(b, type);
    return (p == nullptr) == (q == nullptr) &&
           (!p || std::equal(p->data.begin(), p->data.end(), q->data.begin(), q->data.end()));
  };
  const bool palette_changed = ha.color_type == 3 && !(same_chunk("PLTE") && same_chunk("tRNS"));
  const bool expand = reduced && (!same_form || palette_changed);
  if (ha.width != hb.width || ha.height != hb.height || ha.interlace != hb.interlace)
    return {false, "image size or interlacing changed", {}};
  // Every other chunk the metadata policy keeps identical and in the same order.
  Bytes made_chunk;
  size_t dropped = 0;
  const PngFile kept = png_chunks_kept(a, context.policy().metadata, made_chunk, dropped);
  std::vector<ByteView> x, y;
  for (const PngChunk& c : kept.chunks)
    if (!c.is("IDAT") && !(expand && follows_reduction(c))) x.push_back(c.whole);
  for (const PngChunk& c : b.chunks)
    if (!c.is("IDAT") && !(expand && follows_reduction(c))) y.push_back(c.whole);
  if (x.size() != y.size()) return {false, "the chunk list changed", {}};
  if (expand && background_colour(kept) != background_colour(b))
    return {false, "the background colour (bKGD) changed", {}};
  for (size_t i = 0; i < x.size(); ++i)
    if (!std::equal(x[i].begin(), x[i].end(), y[i].begin(), y[i].end()))
      return {false, "chunk " + std::to_string(i) + " changed", {}};
  if (!std::equal(a.trailing.begin(), a.trailing.end(), b.trailing.begin(), b.trailing.end()))
    return {false, "bytes after IEND changed", {}};
  DecodedPng before, after;
  if (!decode_with_libpng(input, expand, before))
    return {false, "libpng cannot decode the original, so the output cannot be checked", {}};
  if (!decode_with_libpng(output, expand, after))
    return {false, "libpng cannot decode the output", {}};
  if (before.width != after.width || before.height != after.height)
    return {false, "image size changed", {}};
  if (!expand && (before.bit_depth != after.bit_depth || before.color_type != after.color_type))
    return {false, "image header changed", {}};
  if (before.rows != after.rows) return {false, "decoded pixels differ", {}};
  Verdict v;
  v.ok = true;
  v.quality.pixels_identical = true;
  return v;
}

}  // namespace lighten
