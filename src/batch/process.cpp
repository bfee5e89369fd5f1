#include "batch/process.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <new>
#include <vector>

#include "batch/memory_estimate.h"
#include "core/errors.h"
#include "core/file_backed_buffer.h"
#include "lighten/lighten.h"

namespace lighten::batch {
namespace {

std::string hex64(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void set_io_error(FileResult& r, const IoStatus& status) {
  r.action = Action::kKept;
  r.bytes_out = r.bytes_in;
  if (status.source_changed) {
    r.reason = Reason::kSkipped;
  } else {
    r.reason = Reason::kIoError;
  }
  r.message = status.message;
}

// A failed write of this file's output: said in its row, and to the run when the disk is full.
void set_write_error(const RunContext& ctx, FileResult& r, const IoStatus& status) {
  set_io_error(r, status);
  if (ctx.destination_full) ctx.destination_full->note(status);
}

// Reasons that say nothing final about the file: they are redone by the next run.
bool is_final(Reason reason) { return reason != Reason::kIoError && reason != Reason::kSkipped; }

// The journal's row for this file as it is now (the input it saw, or in place the output it
// wrote), final under this run's policy; nullopt when the file has to be processed.
std::optional<JournalRow> final_journal_row(const RunContext& ctx, const WalkEntry& entry,
                                            const std::string& key) {
  if (!ctx.journal) return std::nullopt;
  auto row = ctx.journal->find(key);
  if (!row || row->policy_fingerprint != ctx.policy_fingerprint || !is_final(row->reason))
    return std::nullopt;
  const FileStat& st = entry.stat;
  // In place, a file the row says was replaced is done only while it is that output: one that
  // is the input again (restored from a backup with its times) or a row of a mirror run (which
  // replaced nothing here) leave the work to do.
  const bool replaced_here = ctx.options.in_place && row->action == Action::kReplaced;
  const bool as_input = !replaced_here && row->size == st.size && row->mtime_ns == st.mtime_ns;
  const bool as_output =
      replaced_here && row->out_size == st.size && row->out_mtime_ns == st.mtime_ns;
  if (!as_input && !as_output) return std::nullopt;
  return row;
}

// The same, in a mirror only while the mirror still holds what the row says was written there.
std::optional<JournalRow> holding_journal_row(const RunContext& ctx, const WalkEntry& entry,
                                              const std::string& key) {
  auto row = final_journal_row(ctx, entry, key);
  if (!row || ctx.options.in_place || ctx.options.output_dir.empty()) return row;
  FileStat out;
  if (!ctx.store.stat(mirror_path(ctx.options.output_dir, entry.relative), false, out).ok() ||
      out.size != row->out_size || out.mtime_ns != row->out_mtime_ns)
    return std::nullopt;
  return row;
}

class FileJob {
 public:
  FileJob(const RunContext& context, const WalkEntry& entry, const FirstName* first)
      : ctx_(context),
        options_(context.options),
        entry_(entry),
        first_(first),
        mirror_(!options_.in_place && !options_.output_dir.empty()),
        out_path_(mirror_ ? mirror_path(options_.output_dir, entry.relative) : entry.path) {
    result_.path = entry.path;
    result_.bytes_in = result_.bytes_out = entry.stat.size;
  }

  FileResult run() {
    auto start = std::chrono::steady_clock::now();
    if (ctx_.journal) key_ = journal_key(entry_.path);
    if (!from_journal()) {
      if (!link_to_first_name()) optimise_and_write();
      result_.ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      record();
    }
    return result_;
  }

 private:
  // A write's note (extended attributes the mirror cannot hold) goes where the file's line shows
  // it: the details of an optimised file, the message of one left alone.
  void note_what_was_not_kept(const IoStatus& s) {
    if (s.note.empty() || !s.ok()) return;
    std::string& text = result_.action == Action::kReplaced ? result_.detail : result_.message;
    text += (text.empty() ? "" : "; ") + s.note;
  }

  // The folders this file needs in the mirror, each a real folder inside it.
  IoStatus make_mirror_dirs() {
    return ctx_.store.make_dirs_for(options_.output_dir, entry_.relative, entry_.path);
  }

  bool from_journal() {
    auto row = holding_journal_row(ctx_, entry_, key_);
    if (!row) return false;
    result_ = row->to_result();
    result_.path = entry_.path;
    result_.from_journal = true;
    return true;
  }

  // A later name of a hard-linked file becomes a hard link to its first name's output, with that
  // name's result: false where there is none to link to, or the link (and a copy) fails.
  bool link_to_first_name() {
    if (first_ == nullptr || !mirror_ || options_.dry_run) return false;
    // An output the first name did not write (or hold from an earlier run) may be stale.
    const Reason why = first_->result.reason;
    if (first_->result.path.empty() || why == Reason::kIoError || why == Reason::kSkipped ||
        why == Reason::kInternalError)
      return false;
    // Each name answers for its own extension: a name that claims another kind than the content
    // is left as it is, and one that does not is not held to another name's misnaming.
    if (why == Reason::kMisnamed || !misnaming(entry_.path, first_->result.kind).empty())
      return false;
    FileStat out;
    if (!ctx_.store.stat(first_->out_path, false, out).ok() || !out.is_regular()) return false;
    IoStatus s = make_mirror_dirs();
    if (s.ok()) s = ctx_.store.link_or_copy(out_path_, first_->out_path);
    if (!s.ok()) return false;
    const FileResult& r = first_->result;
    result_.kind = r.kind;
    result_.action = r.action;
    result_.reason = r.reason;
    result_.message = r.message;
    result_.detail = r.detail;
    result_.warnings = r.warnings;
    result_.bytes_in = r.bytes_in;
    result_.bytes_out = r.bytes_out;
    const std::string linked = "a hard link of " + r.path + "'s output, as in the input";
    std::string& text = r.action == Action::kReplaced ? result_.detail : result_.message;
    text += (text.empty() ? "" : "; ") + linked;
    wrote_ = true;
    return true;
  }

  // The mirror stays complete without reading the file into memory.
  void copy_unread_into_mirror() {
    if (!mirror_ || options_.dry_run) return;
    IoStatus s = make_mirror_dirs();
    if (s.ok())
      s = options_.unchanged == UnchangedFiles::kHardlink
              ? ctx_.store.link_or_copy(out_path_, entry_.path)
              : ctx_.store.copy_atomic(out_path_, entry_.path, &entry_.stat);
    if (!s.ok()) set_write_error(ctx_, result_, s);
    note_what_was_not_kept(s);
  }

  void optimise_and_write() {
    const Policy& policy = options_.policy;
    // Replacing one name of a hard-linked file would split it from the others: both contents
    // would then be stored, and the other names would keep the old one.
    if (options_.in_place && entry_.stat.links > 1) {
      result_.reason = Reason::kSkipped;
      result_.message = fmt::format(
          "hard-linked ({} names): replacing this one in place would split it from the others "
          "and store both",
          entry_.stat.links);
      return;
    }
    if (entry_.stat.size > policy.limits.max_input_bytes) {
      result_.reason = Reason::kLimitExceeded;
      result_.message = "larger than the input limit of " +
                        std::to_string(policy.limits.max_input_bytes) + " bytes; not read";
      copy_unread_into_mirror();
      return;
    }
    // A large file of a kind lighten has no optimiser for (a disk image, an MKV) is told by its
    // first bytes and not read whole: a mirror gets it streamed across, its holes kept.
    if (entry_.stat.size > kStreamedAbove) {
      std::vector<uint8_t> head;
      if (const IoStatus s = ctx_.store.read_head(entry_.path, kEstimateHeadBytes, head); !s.ok()) {
        set_io_error(result_, s);
        return;
      }
      if (streamed_unread(entry_.stat.size, head)) {
        const Outcome outcome = optimize(head, policy);  // says which kind, and that it is kept
        result_.kind = outcome.kind;
        result_.reason = outcome.reason;
        result_.message = outcome.message;
        copy_unread_into_mirror();
        return;
      }
    }

    // A file larger than the large-output limit (a long video) is read into a file-backed
    // buffer, not into memory; its output goes to one too.
    std::vector<uint8_t> memory;
    std::unique_ptr<FileBackedBuffer> large;
    IoStatus read_status;
    if (entry_.stat.size > policy.limits.large_output_bytes) {
      try {
        large = std::make_unique<FileBackedBuffer>(entry_.stat.size);
        read_status = ctx_.store.read_into(entry_.path, *large, read_stat_);
      } catch (const FormatError& e) {
        read_status = IoStatus::fail(std::string("read into ") + e.what(), entry_.path, ENOSPC);
      }
    } else {
      read_status = ctx_.store.read(entry_.path, memory, read_stat_);
    }
    if (!read_status.ok()) {
      set_io_error(result_, read_status);
      return;
    }
    const std::span<const uint8_t> bytes = large ? large->view() : std::span<const uint8_t>(memory);
    read_ = true;
    result_.bytes_in = result_.bytes_out = bytes.size();
    hash_ = hex64(XXH3_64bits(bytes.data(), bytes.size()));

    Outcome outcome;
    // A name that claims another kind than the content (a JPEG saved as .png) is bad input:
    // readers that go by the name may fail on it; it is left as it is, with the reason.
    const Kind content = sniff(bytes);
    try {
      if (const std::string why = misnaming(entry_.path, content); !why.empty()) {
        outcome = kept(Reason::kMisnamed, why + ": left as it is");
        outcome.kind = content;
      } else {
        outcome = ctx_.memory_gate != nullptr ? optimize(bytes, policy, *ctx_.memory_gate)
                                              : optimize(bytes, policy);
      }
    } catch (const std::bad_alloc&) {
      outcome = kept(Reason::kLimitExceeded, "out of memory while optimising");
    } catch (const std::exception& e) {  // optimize() promises not to; keep the file if it does
      outcome = kept(Reason::kInternalError, std::string("internal error: ") + e.what());
    }
    result_.kind = outcome.kind != Kind::kUnknown ? outcome.kind : content;
    result_.action = outcome.action;
    result_.reason = outcome.reason;
    result_.message = outcome.message;
    result_.detail = outcome.detail;
    // Never larger, whatever the optimiser says.
    if (outcome.replaced() &&
        (outcome.output().empty() || outcome.output().size() >= bytes.size())) {
      result_.action = Action::kKept;
      result_.reason = Reason::kNoGain;
      result_.message = "the output was not smaller";
    }
    bool replace = result_.action == Action::kReplaced;
    // What the output lost: a file left as it was lost nothing.
    if (replace) result_.warnings = outcome.warnings;
    result_.bytes_out = replace ? outcome.output().size() : bytes.size();
    if (options_.dry_run) return;

    IoStatus s;
    if (mirror_) {
      s = make_mirror_dirs();
      if (s.ok()) {
        if (replace)
          s = ctx_.store.write_atomic(out_path_, outcome.output(), entry_.path, &read_stat_);
        else if (options_.unchanged == UnchangedFiles::kHardlink)
          s = ctx_.store.link_or_copy(out_path_, entry_.path);
        else
          s = ctx_.store.write_atomic(out_path_, bytes, entry_.path, &read_stat_);
      }
    } else if (options_.in_place && replace) {
      // Through a link, the file it leads to is replaced, and the link stays a link.
      std::error_code ec;
      const std::string target =
          entry_.through_link ? std::filesystem::canonical(entry_.path, ec).string() : entry_.path;
      s = ec ? IoStatus::fail("resolve link", entry_.path, ec.value())
             : ctx_.store.write_atomic(target, outcome.output(), entry_.path, &read_stat_);
    }
    if (!s.ok()) {
      set_write_error(ctx_, result_, s);
      return;
    }
    note_what_was_not_kept(s);
    wrote_ = true;
  }

  Outcome kept(Reason reason, std::string message) {
    Outcome o;
    o.action = Action::kKept;
    o.reason = reason;
    o.message = std::move(message);
    return o;
  }

  void record() {
    if (!ctx_.journal || options_.dry_run) return;
    JournalRow row;
    row.path = key_;
    const FileStat& in = read_ ? read_stat_ : entry_.stat;
    row.size = in.size;
    row.mtime_ns = in.mtime_ns;
    row.hash = hash_;
    row.kind = result_.kind;
    row.action = result_.action;
    row.reason = result_.reason;
    row.message = result_.message;
    row.detail = result_.detail;
    for (const std::string& w : result_.warnings)
      row.detail += (row.detail.empty() ? "warning: " : "; warning: ") + w;
    row.bytes_before = result_.bytes_in;
    row.bytes_after = result_.bytes_out;
    row.out_size = in.size;
    row.out_mtime_ns = in.mtime_ns;
    if (wrote_ || mirror_) {
      FileStat out;
      // In place, the file written (also where the path is a link to it); in a mirror, the
      // mirror's own entry.
      if (ctx_.store.stat(out_path_, !mirror_, out).ok()) {
        row.out_size = out.size;
        row.out_mtime_ns = out.mtime_ns;
      }
    }
    row.ms = result_.ms;
    row.run_id = ctx_.run_id;
    row.policy_fingerprint = ctx_.policy_fingerprint;
    row.done_ns = now_ns();
    try {
      ctx_.journal->record(row);
    } catch (const std::exception&) {
      // A row that cannot be written only means the file is looked at again next time.
    }
  }

  const RunContext& ctx_;
  const BatchOptions& options_;
  const WalkEntry& entry_;
  const FirstName* first_;
  bool mirror_;
  std::string out_path_;
  std::string key_;
  std::string hash_;
  FileStat read_stat_;
  bool read_ = false;
  bool wrote_ = false;
  FileResult result_;
};

}  // namespace

bool journal_says_done(const RunContext& context, const WalkEntry& entry) {
  return context.journal && holding_journal_row(context, entry, journal_key(entry.path));
}

std::string journal_key(const std::string& path) { return absolute_normal_path(path); }

std::string mirror_path(const std::string& output_dir, const std::string& relative) {
  if (output_dir.empty() || output_dir.back() == '/') return output_dir + relative;
  return output_dir + "/" + relative;
}

FileResult process_file(const RunContext& context, const WalkEntry& entry, const FirstName* first) {
  FileResult r;
  r.path = entry.path;
  r.bytes_in = r.bytes_out = entry.stat.size;
  try {
    return FileJob(context, entry, first).run();
  } catch (const std::bad_alloc&) {
    r.reason = Reason::kLimitExceeded;
    r.message = "out of memory";
  } catch (const std::exception& e) {
    r.reason = Reason::kInternalError;
    r.message = std::string("internal error: ") + e.what();
  }
  return r;
}

void DestinationFull::note(const IoStatus& status) {
  if (status.error != ENOSPC && status.error != EDQUOT) return;
  static constexpr std::string_view kWritesOfSpace[] = {
      "write",   "create temporary file for", "fsync", "close", "rename", "link",
      "symlink", "create directory"};
  if (std::find(std::begin(kWritesOfSpace), std::end(kWritesOfSpace), status.op) ==
      std::end(kWritesOfSpace))
    return;
  std::lock_guard lock(mutex_);
  if (message_.empty()) message_ = status.message;
  hit_.store(true);
}

std::string DestinationFull::message() const {
  std::lock_guard lock(mutex_);
  return message_;
}

void HardLinkedNames::add(size_t later, size_t first) {
  first_of_[later] = first;
  firsts_.insert(first);
}

std::optional<size_t> HardLinkedNames::first_of(size_t index) const {
  const auto it = first_of_.find(index);
  return it == first_of_.end() ? std::nullopt : std::optional<size_t>(it->second);
}

void HardLinkedNames::finish(size_t index, const FileResult& result) {
  if (firsts_.count(index) == 0) return;
  std::lock_guard lock(mutex_);
  results_[index] = result;
}

FileResult HardLinkedNames::result_of(size_t first) const {
  std::lock_guard lock(mutex_);
  const auto it = results_.find(first);
  return it == results_.end() ? FileResult{} : it->second;
}

}  // namespace lighten::batch
