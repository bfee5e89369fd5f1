#include "progress_view.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "lighten/lighten.h"
#include "lighten/report.h"

namespace lighten::cli {

std::string format_duration(double seconds) {
  if (seconds < 0 || seconds > 1e7) return "--";
  const auto s = static_cast<uint64_t>(seconds);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

std::string format_progress_line(const ProgressFigures& f, size_t width) {
  const double saved =
      f.bytes_in ? 100.0 * (double(f.bytes_in) - double(f.bytes_out)) / double(f.bytes_in) : 0.0;
  const std::string files = fmt::format("{}/{} files", f.files_done, f.files_total);
  const std::string bytes =
      fmt::format("{} -> {}", format_bytes(f.bytes_in), format_bytes(f.bytes_out));
  const std::string saved_text = fmt::format("saved {:.1f}%", saved);
  const std::string rate = fmt::format("{:.1f} MB/s", f.bytes_per_s / 1e6);
  const std::string eta = "ETA " + format_duration(f.eta_s);
  const std::string failed = f.failures ? fmt::format("{} failed", f.failures) : "";
  auto join = [](std::initializer_list<std::string_view> parts) {
    std::string text;
    for (std::string_view p : parts) {
      if (p.empty()) continue;
      if (!text.empty()) text += "  ";
      text += p;
    }
    return text;
  };
  // From the whole line down to the count alone; failures stay as long as anything does.
  const std::string candidates[] = {
      join({files, bytes, saved_text, rate, eta, failed}),
      join({files, saved_text, rate, eta, failed}),
      join({files, saved_text, eta, failed}),
      join({fmt::format("{}/{}", f.files_done, f.files_total), eta, failed}),
      join({fmt::format("{}/{}", f.files_done, f.files_total), failed}),
      fmt::format("{}/{}", f.files_done, f.files_total),
  };
  const size_t room = width > 1 ? width - 1 : 0;
  for (const std::string& c : candidates)
    if (c.size() <= room) return c;
  return candidates[std::size(candidates) - 1].substr(0, room);
}

bool colour_allowed(bool is_terminal, const char* no_color, const char* term) {
  if (!is_terminal) return false;
  if (no_color && *no_color) return false;
  return !(term && std::strcmp(term, "dumb") == 0);
}

size_t terminal_columns(int fd) {
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    const long n = std::strtol(columns, nullptr, 10);
    if (n > 0 && n < 10'000) return size_t(n);
  }
  return 80;
}

bool is_failure(Reason reason) {
  return reason == Reason::kIoError || reason == Reason::kInternalError ||
         reason == Reason::kVerifyFailed;
}

// One line per file whatever its name holds: a newline in a name must not forge a second line.
std::string file_line(const FileResult& r, bool colour, bool journaled) {
  const std::string path = printable_text(r.path);
  if (r.action == Action::kReplaced)
    return fmt::format("{}: {} -> {} ({})", path, format_bytes(r.bytes_in),
                       format_bytes(r.bytes_out), printable_text(r.detail));
  const std::string message = r.message.empty() ? "" : ": " + printable_text(r.message);
  if (!is_failure(r.reason))
    return fmt::format("{}: left alone ({}){}", path, reason_name(r.reason), message);
  const std::string label = colour ? "\x1b[31mfailed\x1b[0m" : "failed";
  return fmt::format("{}: {} ({}){}. {}", path, label, reason_name(r.reason), message,
                     reason_advice(r.reason, journaled));
}

ProgressView::ProgressView(std::FILE* out, Verbosity verbosity, bool keep_rows, bool journaled)
    : out_(out), verbosity_(verbosity), keep_rows_(keep_rows), journaled_(journaled) {
  const bool terminal = isatty(fileno(out)) != 0;
  const char* term = std::getenv("TERM");
  // A dumb terminal cannot erase a line: it gets the log lines a file would.
  live_ = terminal && verbosity != Verbosity::kQuiet && !(term && std::strcmp(term, "dumb") == 0);
  colour_ = colour_allowed(terminal, std::getenv("NO_COLOR"), term);
}

void ProgressView::on_discovered(uint64_t files, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  discovered_ = true;
  total_files_ = files;
  total_bytes_ = bytes;
  if (verbosity_ != Verbosity::kQuiet && !live_)
    fmt::print(out_, "lighten: {}, {} to look at\n", counted(files, "file"), format_bytes(bytes));
  draw(true);
}

void ProgressView::on_file(const FileResult& r) {
  std::lock_guard lock(mutex_);
  ++done_files_;
  done_bytes_in_ += r.bytes_in;
  done_bytes_out_ += r.bytes_out;
  if (!r.from_journal) worked_bytes_ += r.bytes_in;
  if (keep_rows_) rows_.push_back(r);
  const bool failure = is_failure(r.reason);
  if (failure) ++failures_;
  // Failures are errors: shown even with --quiet, which silences everything else; warnings
  // (what metadata `strip` lost that changes how the file shows) whenever not --quiet.
  const bool line = failure || verbosity_ == Verbosity::kVerbose;
  const bool warn = !r.warnings.empty() && verbosity_ != Verbosity::kQuiet;
  if (line || warn) {
    clear_line();
    if (line) fmt::print(out_, "{}\n", file_line(r, colour_, journaled_));
    for (const std::string& w : warn ? r.warnings : std::vector<std::string>{})
      fmt::print(out_, "{}: warning: {}\n", printable_text(r.path), printable_text(w));
    draw(true);  // put the live line back under the message at once
    return;
  }
  draw(false);
}

void ProgressView::on_finish(const BatchSummary&) {
  std::lock_guard lock(mutex_);
  finished_ = true;
  clear_line();
}

void ProgressView::tick() {
  std::lock_guard lock(mutex_);
  if (discovered_ && !finished_) draw(false);
}

ProgressFigures ProgressView::figures() const {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  ProgressFigures f;
  f.files_done = done_files_;
  f.files_total = total_files_;
  f.bytes_in = done_bytes_in_;
  f.bytes_out = done_bytes_out_;
  f.failures = failures_;
  // Files answered from the journal take no time: counting them would promise a false ETA.
  f.bytes_per_s = elapsed > 0 ? double(worked_bytes_) / elapsed : 0;
  if (f.bytes_per_s > 0 && total_bytes_ >= done_bytes_in_)
    f.eta_s = double(total_bytes_ - done_bytes_in_) / f.bytes_per_s;
  return f;
}

void ProgressView::draw(bool force) {
  if (verbosity_ == Verbosity::kQuiet) return;
  const auto now = Clock::now();
  const auto interval = live_ ? std::chrono::milliseconds(100) : std::chrono::seconds(5);
  if (!force && now - last_draw_ < interval) return;
  if (!live_) {  // a file or a pipe: a plain log line every few seconds
    if (force) return;
    last_draw_ = now;
    fmt::print(out_, "lighten: {}\n", format_progress_line(figures(), 10'000));
    std::fflush(out_);
    return;
  }
  last_draw_ = now;
  // Measured at every draw: the terminal may have been resized.
  const std::string text = format_progress_line(figures(), terminal_columns(fileno(out_)));
  fmt::print(out_, "\r{}\x1b[K", text);
  std::fflush(out_);
  line_shown_ = true;
}

void ProgressView::clear_line() {
  if (!live_ || !line_shown_) return;
  fmt::print(out_, "\r\x1b[K");
  std::fflush(out_);
  line_shown_ = false;
}

}  // namespace lighten::cli
