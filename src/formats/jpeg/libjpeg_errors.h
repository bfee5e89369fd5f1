// How lighten's libjpeg calls report trouble: an error manager that longjmps back to the call
// that set it and keeps the first warning that matters, and the FormatError each turns into.
#pragma once

// clang-format off
#include <cstddef>
#include <cstdio>  // jpeglib.h needs size_t and FILE first
#include <jpeglib.h>
// clang-format on

#include <csetjmp>
#include <cstdint>

#include "core/context.h"

namespace lighten::jpeg {

// libjpeg reports errors through a callback that must not return; it longjmps back to the
// jmp_buf of the one call that set it. Only plain C data lives between setjmp and longjmp.
struct ErrorMgr {
  jpeg_error_mgr pub;
  jmp_buf jump;
  int error_code = 0;
  int warning_code = -1;  // first warning that is not tolerated
  bool timed_out = false;
  bool in_scans = false;  // jpeg_read_header has returned: markers now follow scan data
  // Where the reader was in the input when the error or the first untolerated warning came.
  const uint8_t* input = nullptr;
  size_t position = 0;
  char message[JMSG_LENGTH_MAX] = {};
  char warning[JMSG_LENGTH_MAX] = {};
};

// Installs the callbacks on `e.pub` (then set as the libjpeg object's `err`).
void init_error_mgr(ErrorMgr& e);

// FormatError for an error (`what` names the call), with the reason its code means.
[[noreturn]] void throw_error(const ErrorMgr& e, const char* what);
// The same for an error of the writer: the input was read whole, so what libjpeg cannot write
// (a sampling too large for one interleaved scan, a table slot redefined between scans) is a
// variant it cannot carry, not damage; memory and time stay limits.
[[noreturn]] void throw_writer_error(const ErrorMgr& e, const char* what);
// FormatError for the first warning that was not tolerated.
[[noreturn]] void throw_warning(const ErrorMgr& e);

// Caps what libjpeg may allocate for one image (it has no backing store, so it fails cleanly).
inline constexpr long kMaxLibjpegMemory = 6L << 30;

// Ends a libjpeg call through its error manager once `context` is out of time.
struct Progress {
  jpeg_progress_mgr pub;
  const Context* context = nullptr;
};
extern "C" void lighten_jpeg_on_progress(j_common_ptr c);

}  // namespace lighten::jpeg
