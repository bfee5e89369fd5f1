#include "formats/jpeg/coefficients.h"

#include "formats/jpeg/huffman_stats.h"
#include "formats/jpeg/libjpeg_errors.h"

// clang-format off
#include <cstdio>  // jpeglib.h needs FILE
#include <jerror.h>
// clang-format on

#include <algorithm>
#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <string>

// Inlined so the hash compiles with this build's vector instructions (the fingerprint hashes
// every coefficient of the image).
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/context.h"
#include "core/errors.h"

namespace lighten::jpeg {

struct CoefficientImage::State {
  jpeg_decompress_struct info;
  ErrorMgr err;
  Progress progress;
  jvirt_barray_ptr* arrays = nullptr;
  bool created = false;
  std::vector<std::array<uint16_t, 64>> output_tables;  // empty: the source's
};

namespace {

// After jpeg_read_header: a three-component image that libjpeg takes as YCbCr or RGB is read as
// `color_space` when that is one of the two, a four-component one taken as CMYK or YCCK likewise
// (other images and colour spaces as marked).
void override_color_space(jpeg_decompress_struct& info, J_COLOR_SPACE color_space) {
  auto ycc_or_rgb = [](J_COLOR_SPACE c) { return c == JCS_YCbCr || c == JCS_RGB; };
  auto cmyk_or_ycck = [](J_COLOR_SPACE c) { return c == JCS_CMYK || c == JCS_YCCK; };
  const bool three =
      info.num_components == 3 && ycc_or_rgb(color_space) && ycc_or_rgb(info.jpeg_color_space);
  const bool four =
      info.num_components == 4 && cmyk_or_ycck(color_space) && cmyk_or_ycck(info.jpeg_color_space);
  // The output stays as libjpeg set it for either: RGB, or CMYK.
  if (three || four) info.jpeg_color_space = color_space;
}

bool read_raw(CoefficientImage::State* s, const uint8_t* data, size_t size,
              J_COLOR_SPACE color_space) {
  if (setjmp(s->err.jump)) return false;
  jpeg_create_decompress(&s->info);
  s->created = true;
  s->info.mem->max_memory_to_use = kMaxLibjpegMemory;
  s->info.progress = &s->progress.pub;
  jpeg_mem_src(&s->info, data, static_cast<unsigned long>(size));
  s->err.input = data;
  jpeg_read_header(&s->info, TRUE);
  s->err.in_scans = true;
  override_color_space(s->info, color_space);
  s->arrays = jpeg_read_coefficients(&s->info);
  return true;
}

bool access_raw(CoefficientImage::State* s, int ci, JDIMENSION row, JBLOCKARRAY* out,
                bool writable) {
  if (setjmp(s->err.jump)) return false;
  *out = (*s->info.mem->access_virt_barray)(reinterpret_cast<j_common_ptr>(&s->info), s->arrays[ci],
                                            row, 1, writable ? TRUE : FALSE);
  return true;
}

}  // namespace

CoefficientImage::CoefficientImage(ByteView jpeg, const Context* context, J_COLOR_SPACE color_space)
    : state_(std::make_unique<State>()) {
  State* s = state_.get();
  std::memset(&s->info, 0, sizeof(s->info));
  init_error_mgr(s->err);
  s->info.err = &s->err.pub;
  s->progress.pub.progress_monitor = lighten_jpeg_on_progress;
  s->progress.context = context;
  const bool ok = read_raw(s, jpeg.data(), jpeg.size(), color_space);
  if (ok && s->err.warning_code < 0) return;
  // The destructor does not run when the constructor throws: release libjpeg's memory here.
  if (s->created) jpeg_destroy_decompress(&s->info);
  s->created = false;
  if (!ok) throw_error(s->err, "libjpeg");
  throw_warning(s->err);
}

CoefficientImage::~CoefficientImage() {
  if (state_->created) jpeg_destroy_decompress(&state_->info);
}

const jpeg_decompress_struct& CoefficientImage::info() const { return state_->info; }
jpeg_decompress_struct* CoefficientImage::decompressor() { return &state_->info; }
jvirt_barray_ptr* CoefficientImage::arrays() { return state_->arrays; }

bool CoefficientImage::progression_complete() const {
  const jpeg_decompress_struct& d = state_->info;
  if (!d.progressive_mode || !d.coef_bits) return true;
  for (int ci = 0; ci < d.num_components; ++ci)
    for (int k = 0; k < DCTSIZE2; ++k)
      if (d.coef_bits[ci][k] != 0) return false;
  return true;
}

const JBLOCK* CoefficientImage::block_row(int ci, JDIMENSION row) {
  JBLOCKARRAY rows = nullptr;
  if (!access_raw(state_.get(), ci, row, &rows, false)) throw_error(state_->err, "libjpeg");
  return rows[0];
}

JBLOCK* CoefficientImage::mutable_block_row(int ci, JDIMENSION row) {
  JBLOCKARRAY rows = nullptr;
  if (!access_raw(state_.get(), ci, row, &rows, true)) throw_error(state_->err, "libjpeg");
  return rows[0];
}

void CoefficientImage::set_output_tables(std::vector<std::array<uint16_t, 64>> tables) {
  state_->output_tables = std::move(tables);
}

const std::vector<std::array<uint16_t, 64>>& CoefficientImage::output_tables() const {
  return state_->output_tables;
}

DecodedFingerprint fingerprint_coefficients(CoefficientImage& image) {
  const jpeg_decompress_struct& d = image.info();
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) throw FormatError(Reason::kLimitExceeded, 0, "out of memory");
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> owned(state, XXH3_freeState);
  XXH3_128bits_reset(state);
  auto add = [&](const auto& value) { XXH3_128bits_update(state, &value, sizeof(value)); };
  add(uint64_t(d.image_width));
  add(uint64_t(d.image_height));
  add(int64_t(d.num_components));
  add(int64_t(d.jpeg_color_space));
  for (int ci = 0; ci < d.num_components; ++ci) {
    const jpeg_component_info& c = d.comp_info[ci];
    add(int64_t(c.component_id));
    add(int64_t(c.h_samp_factor));
    add(int64_t(c.v_samp_factor));
    add(uint64_t(c.width_in_blocks));
    add(uint64_t(c.height_in_blocks));
    if (c.quant_table == nullptr)
      throw FormatError(Reason::kCorrupt, 0, "missing quantisation table");
    // Requantised coefficients are written with their own tables: those are the ones they mean.
    const auto& written = image.output_tables();
    static_assert(sizeof(written[0]) == sizeof(c.quant_table->quantval));
    if (size_t(c.quant_tbl_no) < written.size())
      XXH3_128bits_update(state, written[size_t(c.quant_tbl_no)].data(), sizeof(written[0]));
    else
      add(c.quant_table->quantval);
    for (JDIMENSION row = 0; row < c.height_in_blocks; ++row)
      XXH3_128bits_update(state, image.block_row(ci, row), sizeof(JBLOCK) * c.width_in_blocks);
  }
  const XXH128_hash_t h = XXH3_128bits_digest(state);
  return {h.low64, h.high64};
}

namespace {

// A growing output buffer of our own: libjpeg's jpeg_mem_dest frees the buffer it hands out
// when it grows, so after an error the caller cannot tell which pointer to free.
struct Destination {
  jpeg_destination_mgr pub;
  unsigned char* buffer = nullptr;
  size_t capacity = 0;
  size_t size = 0;
};

constexpr size_t kInitialOutput = 256 * 1024;

extern "C" void dest_init(j_compress_ptr c) {
  auto* d = reinterpret_cast<Destination*>(c->dest);
  d->buffer = static_cast<unsigned char*>(std::malloc(kInitialOutput));
  if (!d->buffer) ERREXIT1(c, JERR_OUT_OF_MEMORY, 10);
  d->capacity = kInitialOutput;
  d->pub.next_output_byte = d->buffer;
  d->pub.free_in_buffer = d->capacity;
}

extern "C" boolean dest_empty(j_compress_ptr c) {
  auto* d = reinterpret_cast<Destination*>(c->dest);
  const size_t grown = d->capacity * 2;
  auto* p = static_cast<unsigned char*>(std::realloc(d->buffer, grown));
  if (!p) ERREXIT1(c, JERR_OUT_OF_MEMORY, 10);
  d->buffer = p;
  d->pub.next_output_byte = p + d->capacity;
  d->pub.free_in_buffer = grown - d->capacity;
  d->capacity = grown;
  return TRUE;
}

extern "C" void dest_term(j_compress_ptr c) {
  auto* d = reinterpret_cast<Destination*>(c->dest);
  d->size = d->capacity - d->pub.free_in_buffer;
}

struct Writer {
  jpeg_compress_struct info;
  ErrorMgr err;
  Destination dest;
  bool created = false;
};

// Installs optimal tables built from `counts` for every table slot the components use; false
// (nothing installed) when a slot gets no code or has no table yet, so libjpeg gathers its own
// statistics. Calls nothing of libjpeg's: no longjmp can skip a destructor here.
bool install_optimal_tables(jpeg_compress_struct& info, const SymbolCounts& counts) {
  std::array<std::array<uint64_t, 256>, NUM_HUFF_TBLS> dc{}, ac{};
  std::array<bool, NUM_HUFF_TBLS> dc_used{}, ac_used{};
  for (int ci = 0; ci < info.num_components; ++ci) {
    const int d = info.comp_info[ci].dc_tbl_no, a = info.comp_info[ci].ac_tbl_no;
    if (d < 0 || d >= NUM_HUFF_TBLS || a < 0 || a >= NUM_HUFF_TBLS) return false;
    dc_used[size_t(d)] = ac_used[size_t(a)] = true;
    for (size_t s = 0; s < 256; ++s) {
      dc[size_t(d)][s] += counts.dc[size_t(ci)][s];
      ac[size_t(a)][s] += counts.ac[size_t(ci)][s];
    }
  }
  std::array<std::optional<HuffmanCode>, NUM_HUFF_TBLS> dc_codes, ac_codes;
  for (size_t t = 0; t < NUM_HUFF_TBLS; ++t) {
    if (dc_used[t] && !(dc_codes[t] = optimal_huffman_code(dc[t]))) return false;
    if (ac_used[t] && !(ac_codes[t] = optimal_huffman_code(ac[t]))) return false;
  }
  for (size_t t = 0; t < NUM_HUFF_TBLS; ++t)
    if ((dc_used[t] && !info.dc_huff_tbl_ptrs[t]) || (ac_used[t] && !info.ac_huff_tbl_ptrs[t]))
      return false;
  auto install = [](JHUFF_TBL* slot, const HuffmanCode& code) {
    std::memcpy(slot->bits, code.bits.data(), sizeof(slot->bits));
    std::memset(slot->huffval, 0, sizeof(slot->huffval));
    std::memcpy(slot->huffval, code.values.data(), code.values.size());
    slot->sent_table = FALSE;
  };
  for (size_t t = 0; t < NUM_HUFF_TBLS; ++t) {
    if (dc_codes[t]) install(info.dc_huff_tbl_ptrs[t], *dc_codes[t]);
    if (ac_codes[t]) install(info.ac_huff_tbl_ptrs[t], *ac_codes[t]);
  }
  return true;
}

// Creates the compressor writing into `w`'s own buffer. Called after the caller's setjmp: libjpeg
// may longjmp out of it, and it holds no C++ object.
void start_writer(Writer* w) {
  jpeg_create_compress(&w->info);
  w->created = true;
  w->info.mem->max_memory_to_use = kMaxLibjpegMemory;
  w->dest.pub.init_destination = dest_init;
  w->dest.pub.empty_output_buffer = dest_empty;
  w->dest.pub.term_destination = dest_term;
  w->info.dest = &w->dest.pub;
}

// Runs one compression on a Writer of its own (not on the caller's stack: a longjmp must not skip
// a C++ destructor) and returns its bytes; `compress` returns false after a libjpeg error.
template <typename Compress>
Bytes run_writer(Compress&& compress, const char* what) {
  auto w = std::make_unique<Writer>();
  std::memset(&w->info, 0, sizeof(w->info));
  init_error_mgr(w->err);
  w->info.err = &w->err.pub;
  const bool ok = compress(w.get());
  Bytes out;
  if (ok) out.assign(w->dest.buffer, w->dest.buffer + w->dest.size);
  if (w->created) jpeg_destroy_compress(&w->info);
  std::free(w->dest.buffer);
  if (!ok) throw_writer_error(w->err, what);
  return out;
}

bool write_raw(Writer* w, CoefficientImage::State* src, const WriteOptions* o,
               const SymbolCounts* counts) {
  if (setjmp(w->err.jump)) return false;
  start_writer(w);
  jpeg_copy_critical_parameters(&src->info, &w->info);
  // Requantised coefficients go out with their own tables, slot for slot.
  for (size_t slot = 0; slot < src->output_tables.size() && slot < NUM_QUANT_TBLS; ++slot) {
    JQUANT_TBL* t = w->info.quant_tbl_ptrs[slot];
    if (!t) continue;
    for (int k = 0; k < DCTSIZE2; ++k) t->quantval[k] = src->output_tables[slot][size_t(k)];
  }
  // Metadata is spliced in from the original by the caller, byte for byte.
  w->info.write_JFIF_header = FALSE;
  w->info.write_Adobe_marker = FALSE;
  w->info.arith_code = FALSE;
  // Tables counted beforehand spare libjpeg its own (slower) statistics pass; same bytes.
  w->info.optimize_coding = !(counts && install_optimal_tables(w->info, *counts));
  w->info.restart_interval = o->restart_interval;
  w->info.restart_in_rows = 0;
  if (o->scans == WriteOptions::Scans::kSimpleProgressive) {
    jpeg_simple_progression(&w->info);
  } else if (o->scans == WriteOptions::Scans::kScript) {
    w->info.scan_info = o->script.data();
    w->info.num_scans = static_cast<int>(o->script.size());
  }
  jpeg_write_coefficients(&w->info, src->arrays);
  jpeg_finish_compress(&w->info);
  return true;
}

}  // namespace

Bytes write_coefficients(CoefficientImage& image, const WriteOptions& options) {
  const bool sequential = options.scans == WriteOptions::Scans::kSequential;
  const SymbolCounts* counts = sequential ? options.counts : nullptr;
  std::optional<SymbolCounts> counted;
  if (sequential && !counts &&
      (counted = count_sequential_symbols(image, options.restart_interval)))
    counts = &*counted;
  return run_writer([&](Writer* w) { return write_raw(w, image.state(), &options, counts); },
                    "libjpeg while writing");
}

namespace {

bool write_rows_raw(Writer* w, CoefficientImage::State* src, const std::vector<McuRows>* bands) {
  if (setjmp(w->err.jump)) return false;
  start_writer(w);
  jpeg_decompress_struct& in = src->info;
  jpeg_copy_critical_parameters(&in, &w->info);
  JDIMENSION mcu_rows = 0;
  for (const McuRows& b : *bands) mcu_rows += b.count;
  w->info.image_height = mcu_rows * JDIMENSION(in.max_v_samp_factor * DCTSIZE);
  w->info.write_JFIF_header = FALSE;
  w->info.write_Adobe_marker = FALSE;
  w->info.arith_code = FALSE;
  w->info.optimize_coding = TRUE;
  jvirt_barray_ptr arrays[MAX_COMPONENTS] = {};
  auto* common = reinterpret_cast<j_common_ptr>(&w->info);
  for (int ci = 0; ci < in.num_components; ++ci) {
    const jpeg_component_info& c = in.comp_info[ci];
    arrays[ci] = (*w->info.mem->request_virt_barray)(common, JPOOL_IMAGE, FALSE, c.width_in_blocks,
                                                     mcu_rows * JDIMENSION(c.v_samp_factor),
                                                     JDIMENSION(c.v_samp_factor));
  }
  (*w->info.mem->realize_virt_arrays)(common);
  for (int ci = 0; ci < in.num_components; ++ci) {
    const jpeg_component_info& c = in.comp_info[ci];
    const JDIMENSION v = JDIMENSION(c.v_samp_factor);
    JDIMENSION out_row = 0;
    for (const McuRows& b : *bands) {
      for (JDIMENSION row = b.first * v; row < (b.first + b.count) * v; ++row, ++out_row) {
        JBLOCKARRAY from = (*in.mem->access_virt_barray)(reinterpret_cast<j_common_ptr>(&in),
                                                         src->arrays[ci], row, 1, FALSE);
        JBLOCKARRAY to = (*w->info.mem->access_virt_barray)(common, arrays[ci], out_row, 1, TRUE);
        std::memcpy(to[0], from[0], sizeof(JBLOCK) * c.width_in_blocks);
      }
    }
  }
  jpeg_write_coefficients(&w->info, arrays);
  jpeg_finish_compress(&w->info);
  return true;
}

}  // namespace

Bytes write_mcu_rows(CoefficientImage& image, const std::vector<McuRows>& bands) {
  const jpeg_decompress_struct& info = image.info();
  const JDIMENSION mcu_height = JDIMENSION(info.max_v_samp_factor * DCTSIZE);
  const JDIMENSION whole_rows = info.image_height / mcu_height;
  JDIMENSION total = 0;
  for (const McuRows& b : bands) {
    if (b.count == 0 || b.first > whole_rows || b.count > whole_rows - b.first)
      throw FormatError(Reason::kInternalError, 0, "MCU rows outside the image");
    total += b.count;
  }
  if (total == 0) throw FormatError(Reason::kInternalError, 0, "no MCU rows to write");
  return run_writer([&](Writer* w) { return write_rows_raw(w, image.state(), &bands); },
                    "libjpeg while writing rows");
}

namespace {

bool encode_raw(Writer* w, const ImageRgb8* rgb, const std::array<uint16_t, 64>* luma,
                const std::array<uint16_t, 64>* chroma, const std::array<int, 3>* ids) {
  if (setjmp(w->err.jump)) return false;
  start_writer(w);
  w->info.image_width = rgb->width;
  w->info.image_height = rgb->height;
  w->info.input_components = 3;
  w->info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&w->info);  // YCbCr, luma 2x2 against chroma 1x1: 4:2:0
  w->info.comp_info[0].h_samp_factor = w->info.comp_info[0].v_samp_factor = 2;
  for (int ci = 1; ci < 3; ++ci)
    w->info.comp_info[ci].h_samp_factor = w->info.comp_info[ci].v_samp_factor = 1;
  for (int ci = 0; ci < 3; ++ci) w->info.comp_info[ci].component_id = (*ids)[size_t(ci)];
  unsigned int table[DCTSIZE2];
  for (int k = 0; k < DCTSIZE2; ++k) table[k] = (*luma)[size_t(k)];
  jpeg_add_quant_table(&w->info, 0, table, 100, TRUE);
  for (int k = 0; k < DCTSIZE2; ++k) table[k] = (*chroma)[size_t(k)];
  jpeg_add_quant_table(&w->info, 1, table, 100, TRUE);
  w->info.dct_method = JDCT_ISLOW;
  w->info.write_JFIF_header = FALSE;
  w->info.write_Adobe_marker = FALSE;
  w->info.optimize_coding = FALSE;
  jpeg_start_compress(&w->info, TRUE);
  const size_t stride = size_t(rgb->width) * 3;
  while (w->info.next_scanline < w->info.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(rgb->samples.data() + stride * w->info.next_scanline);
    jpeg_write_scanlines(&w->info, &row, 1);
  }
  jpeg_finish_compress(&w->info);
  return true;
}

}  // namespace

Bytes encode_pixels_420(const ImageRgb8& rgb, const std::array<uint16_t, 64>& luma,
                        const std::array<uint16_t, 64>& chroma,
                        const std::array<int, 3>& component_ids) {
  if (rgb.channels != 3 || rgb.width == 0 || rgb.height == 0 ||
      rgb.samples.size() != size_t(rgb.width) * rgb.height * 3)
    throw FormatError(Reason::kUnsupportedVariant, 0, "only RGB pixels are re-encoded as 4:2:0");
  return run_writer([&](Writer* w) { return encode_raw(w, &rgb, &luma, &chroma, &component_ids); },
                    "libjpeg while encoding");
}

namespace {

struct Decoder {
  jpeg_decompress_struct info;
  ErrorMgr err;
  bool created = false;
};

bool decode_raw(Decoder* d, const uint8_t* data, size_t size, J_COLOR_SPACE color_space,
                PixelImage* out) {
  if (setjmp(d->err.jump)) return false;
  jpeg_create_decompress(&d->info);
  d->created = true;
  d->info.mem->max_memory_to_use = kMaxLibjpegMemory;
  jpeg_mem_src(&d->info, data, static_cast<unsigned long>(size));
  d->err.input = data;
  jpeg_read_header(&d->info, TRUE);
  d->err.in_scans = true;
  override_color_space(d->info, color_space);
  jpeg_start_decompress(&d->info);
  out->width = d->info.output_width;
  out->height = d->info.output_height;
  out->components = static_cast<unsigned>(d->info.output_components);
  size_t stride = size_t(out->width) * out->components;
  // Sized by the frame header, capped by the caller; a buffer of the same size is reused as is.
  out->samples.resize(stride * out->height);
  while (d->info.output_scanline < d->info.output_height) {
    JSAMPROW row = out->samples.data() + stride * d->info.output_scanline;
    jpeg_read_scanlines(&d->info, &row, 1);
  }
  jpeg_finish_decompress(&d->info);
  return true;
}

}  // namespace

void decode_pixels_into(ByteView jpeg, PixelImage& out, J_COLOR_SPACE color_space) {
  auto d = std::make_unique<Decoder>();
  std::memset(&d->info, 0, sizeof(d->info));
  init_error_mgr(d->err);
  d->info.err = &d->err.pub;
  bool ok = decode_raw(d.get(), jpeg.data(), jpeg.size(), color_space, &out);
  if (d->created) jpeg_destroy_decompress(&d->info);
  if (!ok) throw_error(d->err, "libjpeg");
  if (d->err.warning_code >= 0) throw_warning(d->err);
}

PixelImage decode_pixels(ByteView jpeg, J_COLOR_SPACE color_space) {
  PixelImage img;
  decode_pixels_into(jpeg, img, color_space);
  return img;
}

}  // namespace lighten::jpeg
