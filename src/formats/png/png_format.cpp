#include "formats/png/png_format.h"

#include <png.h>

#include <algorithm>
#include <csetjmp>
#include <memory>

#include "codecs/deflate.h"
#include "formats/png/png_chunks.h"
#include "formats/png/png_filters.h"

namespace lighten {
namespace {

constexpr const char* kStrategyNames[] = {"none",  "sub",    "up",     "average",
                                          "paeth", "minsum", "entropy"};

void refuse_variants(const PngFile& png, const Policy& policy) {
  for (const PngChunk& c : png.chunks) {
    if (c.is("acTL"))
      throw FormatError(Reason::kUnsupportedVariant, 0, "animated PNG (APNG) is left as it is");
    if (c.is("CgBI"))
      throw FormatError(Reason::kUnsupportedVariant, 0,
                        "Apple CgBI PNG (not a standard PNG) is left as it is");
    const bool known_critical = c.is("IHDR") || c.is("PLTE") || c.is("IDAT") || c.is("IEND");
    if (c.critical() && !known_critical)
      throw FormatError(Reason::kUnsupportedVariant, 0, "unknown critical chunk " + c.type_name());
  }
  if (uint64_t(png.header.width) * png.header.height > policy.limits.max_pixels)
    throw FormatError(Reason::kLimitExceeded, 16, "more pixels than --max-pixels");
}

Bytes image_data(const PngFile& png) {
  size_t total = 0;
  for (const PngChunk& c : png.chunks)
    if (c.is("IDAT")) total += c.data.size();
  Bytes idat;
  idat.reserve(total);
  for (const PngChunk& c : png.chunks)
    if (c.is("IDAT")) idat.insert(idat.end(), c.data.begin(), c.data.end());
  return idat;
}

// Every chunk as it was, with the run of IDAT chunks replaced by one.
Bytes assemble(const PngFile& png, ByteView idat) {
  Bytes out(kPngSignature, kPngSignature + 8);
  bool written = false;
  for (const PngChunk& c : png.chunks) {
    if (!c.is("IDAT")) {
      out.insert(out.end(), c.whole.begin(), c.whole.end());
    } else if (!written) {
      append_png_chunk(out, "IDAT", idat);
      written = true;
    }
  }
  out.insert(out.end(), png.trailing.begin(), png.trailing.end());
  return out;
}

struct Candidate {
  std::string name;
  Bytes filtered;
  size_t trial_size = 0;
};

// libpng, the reference decoder, independent of lighten's own filter and inflate code.
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

// Returns false when libpng cannot decode the file.
bool decode_with_libpng(ByteView bytes, DecodedPng& out) {
  auto reader = std::make_unique<PngReader>();
  reader->bytes = bytes;
  reader->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr,
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
  png_set_chunk_malloc_max(r->png, 0);
  png_read_info(r->png, r->info);
  result->width = png_get_image_width(r->png, r->info);
  result->height = png_get_image_height(r->png, r->info);
  result->bit_depth = png_get_bit_depth(r->png, r->info);
  result->color_type = png_get_color_type(r->png, r->info);
  png_set_interlace_handling(r->png);
  png_read_update_info(r->png, r->info);
  const size_t row = png_get_rowbytes(r->png, r->info);
  result->rows.assign(row * result->height, 0);
  r->rows.resize(result->height);
  for (uint32_t y = 0; y < result->height; ++y) r->rows[y] = result->rows.data() + y * row;
  png_read_image(r->png, r->rows.data());
  png_read_end(r->png, nullptr);
  return true;
}

}  // namespace

Outcome optimize_png(ByteView input, Context& context) {
  const Policy& policy = context.policy();
  const PngFile png = read_png_chunks(input);
  refuse_variants(png, policy);
  const Bytes idat = image_data(png);
  const uint64_t size =
      png_data_size(png.header, std::min<uint64_t>(policy.limits.max_expanded_bytes, 1ull << 34));
  Bytes original_filtered = inflate_exact(idat, size_t(size), DeflateWrapper::kZlib);
  Bytes raw = original_filtered;
  png_unfilter(raw, png.header);

  // Rank filterings by a quick compression, then compress the winner at the policy's effort.
  std::vector<Candidate> candidates;
  candidates.push_back({"original filters", std::move(original_filtered), 0});
  std::vector<PngFilterStrategy> strategies;
  if (policy.effort <= 2)
    strategies = {PngFilterStrategy::kMinSum};
  else if (policy.effort <= 4)
    strategies = {PngFilterStrategy::kNone, PngFilterStrategy::kMinSum};
  else
    strategies.assign(std::begin(kAllPngStrategies), std::end(kAllPngStrategies) - 1);
  if (policy.effort >= 7) strategies.push_back(PngFilterStrategy::kEntropy);
  for (PngFilterStrategy s : strategies)
    candidates.push_back({kStrategyNames[int(s)], png_filter(raw, png.header, s), 0});
  const int trial_level = policy.effort <= 4 ? 1 : policy.effort <= 6 ? 3 : 6;
  for (Candidate& c : candidates) {
    if (context.out_of_time())
      throw FormatError(Reason::kLimitExceeded, 0, "the time budget ran out");
    c.trial_size = deflate_at_level(c.filtered, trial_level, DeflateWrapper::kZlib).size();
  }
  std::stable_sort(
      candidates.begin(), candidates.end(),
      [](const Candidate& a, const Candidate& b) { return a.trial_size < b.trial_size; });
  // At high effort the best three get the full compressor: quick ranks are not always right.
  const size_t finalists = std::min<size_t>(policy.effort >= 7 ? 3 : 1, candidates.size());
  Bytes best;
  std::string best_name;
  for (size_t i = 0; i < finalists; ++i) {
    Bytes packed = deflate_bytes(candidates[i].filtered, policy.effort, DeflateWrapper::kZlib);
    if (best.empty() || packed.size() < best.size()) {
      best = std::move(packed);
      best_name = candidates[i].name;
    }
  }
  Outcome outcome;
  outcome.kind = Kind::kPng;
  outcome.bytes_in = input.size();
  outcome.bytes = assemble(png, best);
  outcome.action = Action::kReplaced;
  outcome.detail = "re-deflated, " + best_name;
  return outcome;
}

Verdict verify_png(ByteView input, ByteView output, Context&) {
  const PngFile a = read_png_chunks(input);
  const PngFile b = read_png_chunks(output);
  // Every chunk but IDAT identical and in the same order.
  std::vector<ByteView> x, y;
  for (const PngChunk& c : a.chunks)
    if (!c.is("IDAT")) x.push_back(c.whole);
  for (const PngChunk& c : b.chunks)
    if (!c.is("IDAT")) y.push_back(c.whole);
  if (x.size() != y.size()) return {false, "the chunk list changed", {}};
  for (size_t i = 0; i < x.size(); ++i)
    if (!std::equal(x[i].begin(), x[i].end(), y[i].begin(), y[i].end()))
      return {false, "chunk " + std::to_string(i) + " changed", {}};
  if (!std::equal(a.trailing.begin(), a.trailing.end(), b.trailing.begin(), b.trailing.end()))
    return {false, "bytes after IEND changed", {}};
  DecodedPng before, after;
  if (!decode_with_libpng(input, before))
    return {false, "libpng cannot decode the original, so the output cannot be checked", {}};
  if (!decode_with_libpng(output, after)) return {false, "libpng cannot decode the output", {}};
  if (before.width != after.width || before.height != after.height ||
      before.bit_depth != after.bit_depth || before.color_type != after.color_type)
    return {false, "image header changed", {}};
  if (before.rows != after.rows) return {false, "decoded pixels differ", {}};
  Verdict v;
  v.ok = true;
  v.quality.pixels_identical = true;
  return v;
}

void describe_png(ByteView input, FileInfo& info) {
  const PngFile png = read_png_chunks(input);
  static constexpr const char* kColorTypes[] = {"gray",       "?", "RGB", "palette",
                                                "gray+alpha", "?", "RGBA"};
  const PngHeader& h = png.header;
  info.properties.emplace_back("width", std::to_string(h.width));
  info.properties.emplace_back("height", std::to_string(h.height));
  info.properties.emplace_back("colour", std::string(kColorTypes[h.color_type]) + ", " +
                                             std::to_string(h.bit_depth) + "-bit");
  info.properties.emplace_back("interlaced", h.interlace ? "Adam7" : "no");
  size_t idat_chunks = 0, idat_bytes = 0;
  std::string others;
  for (const PngChunk& c : png.chunks) {
    if (c.is("IDAT")) {
      ++idat_chunks;
      idat_bytes += c.data.size();
    } else if (!c.is("IHDR") && !c.is("IEND")) {
      others += (others.empty() ? "" : ", ") + c.type_name() + " " + std::to_string(c.data.size());
    }
  }
  info.properties.emplace_back("image data", std::to_string(idat_bytes) + " bytes in " +
                                                 std::to_string(idat_chunks) + " IDAT chunks");
  info.properties.emplace_back("other chunks", others.empty() ? "none" : others);
  if (!png.trailing.empty())
    info.properties.emplace_back("after IEND", std::to_string(png.trailing.size()) + " bytes");
}

}  // namespace lighten
