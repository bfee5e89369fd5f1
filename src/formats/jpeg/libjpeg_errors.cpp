#include "formats/jpeg/libjpeg_errors.h"

// clang-format off
#include <jerror.h>
// clang-format on

#include <algorithm>
#include <string>

#include "codecs/libjpeg_warnings.h"
#include "core/errors.h"

namespace lighten::jpeg {
namespace {

ErrorMgr* error_mgr(j_common_ptr c) { return reinterpret_cast<ErrorMgr*>(c->err); }

void note_position(j_common_ptr c, ErrorMgr* e) {
  if (!c->is_decompressor || !e->input) return;
  const jpeg_source_mgr* src = reinterpret_cast<j_decompress_ptr>(c)->src;
  if (src && src->next_input_byte >= e->input)
    e->position = size_t(src->next_input_byte - e->input);
}

extern "C" void on_error_exit(j_common_ptr c) {
  ErrorMgr* e = error_mgr(c);
  e->error_code = c->err->msg_code;
  note_position(c, e);
  (*c->err->format_message)(c, e->message);
  longjmp(e->jump, 1);
}

// Bytes left over after a scan's last block that are still taken for padding, whatever they
// hold: a stray byte or two before the EOI is a known encoder quirk; more is damage.
constexpr long kStrayScanBytes = 2;

// Whether the `count` bytes libjpeg skipped before the marker it is at (its source stops at the
// marker's first 0xFF once it has skipped any) are padding: a few stray bytes, or zeros or fill
// bytes only. More data than the scan's blocks need is what a damaged scan leaves: the decoder
// lost its place and read garbage up to the marker.
bool padding_before_marker(j_common_ptr c, const ErrorMgr* e, long count) {
  if (count <= kStrayScanBytes) return true;
  const jpeg_source_mgr* src = reinterpret_cast<j_decompress_ptr>(c)->src;
  if (!e->input || !src || src->next_input_byte < e->input) return false;
  const size_t at = size_t(src->next_input_byte - e->input);
  if (at < size_t(count) || src->bytes_in_buffer == 0 || *src->next_input_byte != 0xFF)
    return false;
  const uint8_t* first = src->next_input_byte - count;
  return std::all_of(first, src->next_input_byte, [&](uint8_t b) { return b == first[0]; }) &&
         (first[0] == 0x00 || first[0] == 0xFF);
}

// Harmless warnings: junk between header markers, padding after a scan, odd JFIF versions,
// unknown Adobe transform or a malformed ICC chunk (the markers are copied byte for byte, so
// readers see what they saw).
bool tolerated(j_common_ptr c, const ErrorMgr* e) {
  const int code = c->err->msg_code;
  if (code == JWRN_EXTRANEOUS_DATA)
    return !e->in_scans || padding_before_marker(c, e, c->err->msg_parm.i[0]);
  return libjpeg_marker_warning(code);
}

extern "C" void on_emit_message(j_common_ptr c, int level) {
  if (level >= 0) return;  // trace messages
  ErrorMgr* e = error_mgr(c);
  if (e->warning_code >= 0 || tolerated(c, e)) return;
  e->warning_code = c->err->msg_code;
  note_position(c, e);
  (*c->err->format_message)(c, e->warning);
}

Reason reason_for_error(int code) {
  switch (code) {
    case JERR_INPUT_EOF:
      return Reason::kTruncated;
    case JERR_OUT_OF_MEMORY:
    case JERR_NO_BACKING_STORE:
    case JERR_IMAGE_TOO_BIG:
    case JERR_WIDTH_OVERFLOW:
      return Reason::kLimitExceeded;
    case JERR_BAD_PRECISION:
    case JERR_NOT_COMPILED:
    case JERR_ARITH_NOTIMPL:
    case JERR_COMPONENT_COUNT:
      return Reason::kUnsupportedVariant;
    default:
      return Reason::kCorrupt;
  }
}

}  // namespace

void init_error_mgr(ErrorMgr& e) {
  jpeg_std_error(&e.pub);
  e.pub.error_exit = on_error_exit;
  e.pub.emit_message = on_emit_message;
}

[[noreturn]] void throw_error(const ErrorMgr& e, const char* what) {
  if (e.timed_out) throw FormatError(Reason::kLimitExceeded, 0, "time budget spent while decoding");
  throw FormatError(reason_for_error(e.error_code), e.position,
                    std::string(what) + ": " + e.message);
}

[[noreturn]] void throw_writer_error(const ErrorMgr& e, const char* what) {
  const Reason r = reason_for_error(e.error_code);
  if (e.timed_out || r == Reason::kLimitExceeded) throw_error(e, what);
  throw FormatError(Reason::kUnsupportedVariant, 0,
                    std::string(what) + ": " + e.message + " (libjpeg cannot write it so)");
}

[[noreturn]] void throw_warning(const ErrorMgr& e) {
  Reason r = e.warning_code == JWRN_JPEG_EOF ? Reason::kTruncated : Reason::kCorrupt;
  throw FormatError(r, e.position,
                    std::string("libjpeg: ") + e.warning +
                        (e.warning_code == JWRN_EXTRANEOUS_DATA
                             ? " (after a scan: more data than its blocks hold, so it is damaged)"
                             : ""));
}

extern "C" void lighten_jpeg_on_progress(j_common_ptr c) {
  auto* p = reinterpret_cast<Progress*>(c->progress);
  if (p->context && p->context->out_of_time()) {
    error_mgr(c)->timed_out = true;
    c->err->msg_code = JERR_OUT_OF_MEMORY;  // any code; timed_out decides the reason
    on_error_exit(c);
  }
}

}  // namespace lighten::jpeg
