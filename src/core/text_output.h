// Small text outputs (reports, probe results) written so a reader never sees half of one, and the
// UTC timestamps they carry.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace lighten {

// Writes `text` to a temporary file beside `path`, syncs it and renames it over `path`; through
// a symbolic link, beside and over what it names (the link stays; a loop is an error). A pipe
// or device at `path` is written directly, and /dev/stdout, /dev/stderr and /dev/fd/N are
// written through the descriptor the process holds (a pipe, or a file the shell opened).
// Throws std::runtime_error naming the operation, the path and the system's reason, followed by
// `advice` ("choose a writable --json path").
void write_text_atomically(const std::string& path, std::string_view text, std::string_view advice);

// As write_text_atomically, for text `write` puts into a stream (a CSV of a million rows is
// not held whole): it reaches the file in pieces and replaces `path` once all of it is written.
// What `write` throws, and a failed write, leaves `path` as it was.
void write_stream_atomically(const std::string& path,
                             const std::function<void(std::ostream&)>& write,
                             std::string_view advice);

// The current time in UTC, formatted by strftime's `format` ("%Y-%m-%dT%H:%M:%SZ").
std::string utc_time_text(const char* format);

}  // namespace lighten
