#include "progress_view.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "lighten/lighten.h"
#include "lighten/report.h"

namespace lighten::cli {
namespace {

size_t terminal_width(std::FILE* out) {
  winsize ws{};
  if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

std::string format_duration(double seconds) {
  if (seconds < 0 || seconds > 1e7) return "--";
  const auto s = static_cast<uint64_t>(seconds);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace

ProgressView::ProgressView(std::FILE* out, Verbosity verbosity, bool keep_rows)
    : out_(out),
      verbosity_(verbosity),
      keep_rows_(keep_rows),
      live_(isatty(fileno(out)) != 0 && verbosity != Verbosity::kQuiet) {}

void ProgressView::on_discovered(uint64_t files, uint64_t bytes) {
  total_files_ = files;
  total_bytes_ = bytes;
  if (verbosity_ != Verbosity::kQuiet && !live_)
    fmt::print(out_, "lighten: {} files, {} to look at\n", files, format_bytes(bytes));
  draw(true);
}

void ProgressView::on_file(const FileResult& r) {
  ++done_files_;
  done_bytes_in_ += r.bytes_in;
  done_bytes_out_ += r.bytes_out;
  if (keep_rows_) rows_.push_back(r);
  const bool failure = r.reason == Reason::kIoError || r.reason == Reason::kInternalError ||
                       r.reason == Reason::kVerifyFailed;
  if (failure) ++failures_;
  const bool show =
      (failure && verbosity_ != Verbosity::kQuiet) || verbosity_ == Verbosity::kVerbose;
  if (show) {
    clear_line();
    if (r.action == Action::kReplaced)
      fmt::print(out_, "{}: {} -> {} ({})\n", r.path, format_bytes(r.bytes_in),
                 format_bytes(r.bytes_out), r.detail);
    else
      fmt::print(out_, "{}: left alone, {}: {}\n", r.path, reason_name(r.reason), r.message);
  }
  draw(false);
}

void ProgressView::on_finish(const BatchSummary&) {
  draw(true);
  clear_line();
}

std::string ProgressView::status_text() const {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const double rate = elapsed > 0 ? double(done_bytes_in_) / elapsed : 0;
  const double saved = done_bytes_in_ ? 100.0 * (double(done_bytes_in_) - double(done_bytes_out_)) /
                                            double(done_bytes_in_)
                                      : 0.0;
  const double eta = rate > 0 && total_bytes_ >= done_bytes_in_
                         ? double(total_bytes_ - done_bytes_in_) / rate
                         : -1;
  std::string text =
      fmt::format("{}/{} files  {} -> {}  saved {:.1f}%  {:.1f} MB/s  ETA {}", done_files_,
                  total_files_, format_bytes(done_bytes_in_), format_bytes(done_bytes_out_), saved,
                  rate / 1e6, format_duration(eta));
  if (failures_) text += fmt::format("  {} failed", failures_);
  return text;
}

void ProgressView::draw(bool force) {
  if (verbosity_ == Verbosity::kQuiet) return;
  const auto now = Clock::now();
  const auto interval = live_ ? std::chrono::milliseconds(100) : std::chrono::seconds(5);
  if (!force && now - last_draw_ < interval) return;
  if (!live_ && !force) {
    fmt::print(out_, "lighten: {}\n", status_text());
    last_draw_ = now;
    return;
  }
  if (!live_) return;
  last_draw_ = now;
  std::string text = status_text();
  // Never wider than the terminal: a wrapped line could not be redrawn in place.
  const size_t width = terminal_width(out_);
  if (text.size() >= width) text.resize(width > 1 ? width - 1 : 0);
  fmt::print(out_, "\r{}\x1b[K", text);
  std::fflush(out_);
  line_shown_ = true;
}

void ProgressView::clear_line() {
  if (!live_ || !line_shown_) return;
  fmt::print(out_, "\r\x1b[K");
  line_shown_ = false;
}

}  // namespace lighten::cli
