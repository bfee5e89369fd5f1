// run_batch: walk, schedule, process, summarise.
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "batch/journal.h"
#include "batch/memory_estimate.h"
#include "batch/process.h"
#include "batch/scheduler.h"
#include "batch/shard.h"
#include "batch/store.h"
#include "batch/walk.h"
#include "lighten/batch.h"
#include "lighten/options.h"

namespace lighten {
namespace {

constexpr const char* kMirrorJournalName = ".lighten-journal";

std::string hex64(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::string policy_text(const Policy& policy) {
  std::string text;
  for (const auto& [name, value] : describe_policy(policy)) text += name + "=" + value + "\n";
  return text;
}

std::string shard_suffix(const Shard& shard) {
  if (shard.count <= 1) return "";
  return ".shard-" + std::to_string(shard.index + 1) + "-of-" + std::to_string(shard.count);
}

std::string make_run_id(const Shard& shard) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::random_device random;
  char tail[16];
  std::snprintf(tail, sizeof tail, "%08x", unsigned(random()));
  return std::string(stamp) + "-" + tail + shard_suffix(shard);
}

void add(KindTotals& totals, const FileResult& r) {
  ++totals.files;
  totals.bytes_in += r.bytes_in;
  totals.bytes_out += r.bytes_out;
  if (r.action == Action::kReplaced)
    ++totals.replaced;
  else
    ++totals.kept[r.reason];
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec) && !ec;
}

// Without a trailing separator ("out/" and "out" alike): paths are compared element-wise.
std::filesystem::path without_trailing_separator(std::filesystem::path p) {
  if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();
  return p;
}

std::filesystem::path absolute_path(const std::string& path) {
  // Absolute first: weakly_canonical leaves a path relative when none of it exists yet.
  std::error_code ec;
  const std::filesystem::path whole = std::filesystem::absolute(path, ec);
  const std::filesystem::path p = std::filesystem::weakly_canonical(whole, ec);
  return without_trailing_separator((ec ? whole : p).lexically_normal());
}

// Where `path` itself sits: its folder resolved, its own name not (a link stays where it is).
std::filesystem::path location_path(const std::string& path) {
  const std::filesystem::path p =
      without_trailing_separator(std::filesystem::absolute(path).lexically_normal());
  if (!p.has_relative_path()) return p;
  return absolute_path(p.parent_path().string()) / p.filename();
}

// An input inside another would reach the mirror twice (once under each) and keep only one of
// them: the mirror of the outer one would lack it. Sorted by path elements, whatever lies
// inside an input follows it at once, so neighbours alone are compared (inputs may be many).
void refuse_nested_inputs(const std::vector<std::string>& inputs) {
  std::vector<std::pair<std::filesystem::path, const std::string*>> paths;
  for (const auto& input : inputs) paths.emplace_back(absolute_path(input), &input);
  std::sort(paths.begin(), paths.end());
  for (size_t i = 1; i < paths.size(); ++i) {
    const auto& [outer, outer_name] = paths[i - 1];
    const auto& [inner, inner_name] = paths[i];
    const auto [end, _] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
    if (end == outer.end() && inner != outer)
      throw BatchOptionError(*inner_name + " lies inside " + *outer_name + ": give " + *outer_name +
                             " alone, or mirror them separately");
  }
}

// An input inside the output directory (`-o . photo.jpg`) would be overwritten by its own
// mirror, or by another file's: the input where it sits (a link inside OUT), and where it leads
// (a link to a file or folder inside OUT).
void refuse_inputs_inside_output(const std::vector<std::string>& inputs, const std::string& out) {
  const std::filesystem::path root = absolute_path(out);
  const auto inside = [&](const std::filesystem::path& p) {
    return std::mismatch(root.begin(), root.end(), p.begin(), p.end()).first == root.end();
  };
  for (const auto& input : inputs) {
    if (inside(location_path(input)) || inside(absolute_path(input)))
      throw BatchOptionError(input + " lies inside the output directory " + out +
                             ", where the mirror could overwrite it: choose an output directory "
                             "outside the inputs");
  }
}

// Of several inputs each is mirrored under its own name: two of one name (a/x.jpg and b/x.jpg,
// or two folders called photos) would land on one path, the second overwriting the first.
void refuse_colliding_names(const std::vector<std::string>& inputs, const std::string& out) {
  if (inputs.size() < 2) return;
  std::unordered_map<std::string, const std::string*> seen;
  for (const auto& input : inputs)
    if (auto [it, fresh] = seen.emplace(batch::input_name(input), &input);
        !fresh && !same_file(*it->second, input))
      throw BatchOptionError(*it->second + " and " + input + " would both be written to " +
                             batch::mirror_path(out, it->first) +
                             ": give the folder that holds both, or mirror them separately");
}

// Serialises the progress sink and the summary: workers report from many threads.
class Collector {
 public:
  Collector(ProgressSink& sink, BatchSummary& summary) : sink_(sink), summary_(summary) {}
  void file(const FileResult& r) {
    std::lock_guard lock(mutex_);
    add(summary_.by_kind[r.kind], r);
    add(summary_.total, r);
    if (r.reason == Reason::kIoError) ++summary_.io_errors;
    if (r.reason == Reason::kVerifyFailed || r.reason == Reason::kInternalError)
      ++summary_.failures;
    if (r.from_journal) ++summary_.from_journal;
    sink_.on_file(r);
  }

 private:
  std::mutex mutex_;
  ProgressSink& sink_;
  BatchSummary& summary_;
};

// Where an in-place run keeps its journal when neither XDG_STATE_HOME nor HOME is set (cron,
// system services): a folder of the user's own in /tmp, which make_private_dir vets.
std::string shared_state_dir() { return "/tmp/lighten-" + std::to_string(::geteuid()); }

}  // namespace

bool mirror_writes_at(const BatchOptions& options, const std::string& path) {
  namespace fs = std::filesystem;
  if (options.in_place || options.output_dir.empty()) return false;
  const fs::path root = absolute_path(options.output_dir), file = location_path(path);
  const auto [in_root, in_file] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
  if (in_root != root.end() || in_file == file.end()) return false;
  fs::path relative;
  for (auto part = in_file; part != file.end(); ++part) relative /= *part;
  const auto exists = [](const fs::path& p) {
    std::error_code ec;
    return fs::exists(fs::symlink_status(p, ec));
  };
  std::error_code ec;
  // One folder alone is mirrored as OUT itself, other inputs each under batch::input_name.
  if (options.inputs.size() == 1 && fs::is_directory(options.inputs[0], ec))
    return exists(fs::path(options.inputs[0]) / relative);
  const std::string first = relative.begin()->string();
  const fs::path rest = relative.lexically_relative(first);
  return std::any_of(options.inputs.begin(), options.inputs.end(), [&](const std::string& input) {
    if (batch::input_name(input) != first) return false;
    return rest == "." ? exists(input) : exists(fs::path(input) / rest);
  });
}

std::string default_journal_path(const BatchOptions& options) {
  if (!options.in_place && !options.output_dir.empty())
    return batch::mirror_path(options.output_dir, std::string(kMirrorJournalName) +
                                                      shard_suffix(options.shard) + ".sqlite");
  std::string state;
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg)
    state = std::string(xdg) + "/lighten";
  else if (const char* home = std::getenv("HOME"); home && *home)
    state = std::string(home) + "/.local/state/lighten";
  else
    state = shared_state_dir();
  // Named after the inputs: the same tree finds its journal again from any working directory.
  // "d/" (as tab completion writes it) and "." inside d name the same tree as "d".
  std::vector<std::string> keys;
  for (const auto& input : options.inputs) {
    std::string key = batch::journal_key(input);
    while (key.size() > 1 && key.back() == '/') key.pop_back();
    keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  std::string joined;
  for (const auto& k : keys) joined += k + "\n";
  std::string name = keys.empty() ? "inputs" : std::filesystem::path(keys.front()).filename();
  if (name.empty()) name = "root";
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return state + "/" + name + "-" + hex64(XXH3_64bits(joined.data(), joined.size())) +
         shard_suffix(options.shard) + ".sqlite";
}

BatchSummary run_batch(const BatchOptions& options, ProgressSink& progress) {
  auto start = std::chrono::steady_clock::now();
  bool mirror = !options.in_place && !options.output_dir.empty();
  if (options.in_place && !options.output_dir.empty())
    throw BatchOptionError("choose either an output directory or in-place, not both");
  if (!options.in_place && options.output_dir.empty() && !options.dry_run)
    throw BatchOptionError("no output: give an output directory, in-place, or a dry run");
  if (options.shard.count == 0 || options.shard.index >= options.shard.count)
    throw BatchOptionError("invalid shard");

  auto store = batch::make_local_store();
  BatchSummary summary;
  summary.run_id = make_run_id(options.shard);

  if (mirror) {
    for (const auto& input : options.inputs)
      if (same_file(input, options.output_dir))
        throw BatchOptionError("the output directory " + options.output_dir +
                               " is also an input; use in-place instead");
    refuse_inputs_inside_output(options.inputs, options.output_dir);
    refuse_nested_inputs(options.inputs);
    refuse_colliding_names(options.inputs, options.output_dir);
    if (!options.dry_run) {
      std::error_code ec;
      const bool made = !std::filesystem::exists(options.output_dir, ec);
      if (auto s = store->make_dirs(options.output_dir); !s.ok())
        throw std::runtime_error("cannot use the output directory: " + s.message +
                                 "; choose a writable -o directory");
      // With one input folder the mirror's root stands for it: a private folder stays private.
      if (made && options.inputs.size() == 1 &&
          std::filesystem::is_directory(options.inputs[0], ec))
        store->take_permissions_of(options.output_dir, options.inputs[0]);
    }
  }

  std::unique_ptr<batch::Journal> journal;
  std::string text = policy_text(options.policy);
  std::string fingerprint = hex64(XXH3_64bits(text.data(), text.size()));
  if (options.use_journal && !options.dry_run) {
    summary.journal_path =
        options.journal_path.empty() ? default_journal_path(options) : options.journal_path;
    auto dir = std::filesystem::path(summary.journal_path).parent_path().string();
    if (options.journal_path.empty() && dir == shared_state_dir()) {
      if (auto s = batch::make_private_dir(dir); !s.ok())
        throw std::runtime_error(
            "the journal's folder " + dir +
            " must be this user's alone (not a link, not writable by others): " + s.message +
            "; set HOME or XDG_STATE_HOME, or pass --journal FILE or --no-journal");
    } else if (auto s = store->make_dirs(dir); !s.ok()) {
      throw std::runtime_error("cannot create the journal's directory: " + s.message +
                               "; pass --journal FILE in a writable place, or --no-journal");
    }
    journal = std::make_unique<batch::Journal>(summary.journal_path);
    journal->begin_run(summary.run_id, text);
  }

  batch::WalkOptions walk_options;
  walk_options.follow_symlinks = options.follow_symlinks;
  // A mirror run writes nothing in its inputs: a temp file there is an in-place run's, killed or
  // live, and that run's to remove.
  walk_options.clean_temps = !options.dry_run && !mirror;
  walk_options.temps_beside_their_file = true;
  walk_options.owns_temp = [&](const std::string& relative) {
    // One whose file cannot be told is any shard's: only a run of the whole tree removes it.
    return relative.empty() ? options.shard.count <= 1 : batch::in_shard(relative, options.shard);
  };
  if (mirror) {
    walk_options.exclude_paths.push_back(options.output_dir);
    walk_options.collect_links = true;
  }
  if (journal) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      walk_options.exclude_paths.push_back(summary.journal_path + suffix);
  }
  auto found = batch::walk(*store, options.inputs, walk_options);
  summary.cleaned_temps = found.cleaned_temps;
  if (mirror && !options.dry_run) {
    // Temp files of a killed mirror run lie in the output tree, which the walk above skips.
    batch::WalkOptions out_options = walk_options;
    out_options.exclude_paths.clear();
    out_options.follow_symlinks = false;  // the mirror's links lead out of it
    out_options.collect_links = false;
    out_options.clean_temps = true;
    out_options.clean_temp_links = true;          // make_link's, where only lighten writes
    out_options.temps_beside_their_file = false;  // a killed run's first copy has no file yet
    summary.cleaned_temps += batch::walk(*store, {options.output_dir}, out_options).cleaned_temps;
  }

  std::vector<FileResult> rows_first;
  // An input's file or link of the journal's name (an input that is itself a mirror) would
  // replace the live journal in the mirror, or, in a run without one, be taken by a later run
  // for its own: it is left out, as a row of its own.
  const std::string mirror_journal = journal ? summary.journal_path : default_journal_path(options);
  const auto takes_journals_place = [&](const std::string& path, const std::string& relative) {
    if (!mirror) return false;
    const auto name = std::filesystem::path(relative).filename();
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      const std::filesystem::path own(mirror_journal + suffix);
      if (name != own.filename()) continue;
      const auto target = batch::mirror_path(options.output_dir, relative);
      if (std::filesystem::absolute(target).lexically_normal() !=
          std::filesystem::absolute(own).lexically_normal())
        continue;
      FileResult r;
      r.path = path;
      r.reason = Reason::kSkipped;
      r.message = "has the name of this mirror's journal (" + own.string() + "): not mirrored";
      rows_first.push_back(std::move(r));
      return true;
    }
    return false;
  };
  // In place, a file reached through a link as well as under its own name (or through several
  // links) is optimised once, under its own name where it has one: two writers of one file would
  // race. Decided over the whole walk, so that every shard agrees.
  struct Owner {
    const batch::WalkEntry* entry;
    std::string path;  // kept: the entry's own moves to the work list
  };
  std::map<std::pair<uint64_t, uint64_t>, Owner> optimised_as;
  if (options.in_place && std::any_of(found.files.begin(), found.files.end(),
                                      [](const auto& e) { return e.through_link; })) {
    for (const bool link : {false, true})
      for (const auto& e : found.files)
        if (e.through_link == link)
          optimised_as.try_emplace({e.stat.dev, e.stat.ino}, Owner{&e, e.path});
  }
  // In a mirror, the names of a hard-linked file stay hard links of one output, as in the input
  // (a tree of backups holds many): the first name is optimised, the others linked to its output
  // after it. All go to the first name's shard.
  const bool keep_hard_links = mirror && !options.dry_run;
  std::map<std::pair<uint64_t, uint64_t>, std::string> first_names;  // inode -> first's relative
  if (keep_hard_links)
    for (const auto& e : found.files)
      if (e.stat.links > 1) first_names.try_emplace({e.stat.dev, e.stat.ino}, e.relative);
  const auto shard_key = [&](const batch::WalkEntry& e) -> const std::string& {
    const auto it =
        e.stat.links > 1 ? first_names.find({e.stat.dev, e.stat.ino}) : first_names.end();
    return it == first_names.end() ? e.relative : it->second;
  };
  std::vector<batch::WalkEntry> files;
  uint64_t bytes = 0;
  for (auto& entry : found.files) {
    if (!batch::in_shard(shard_key(entry), options.shard)) continue;
    if (takes_journals_place(entry.path, entry.relative)) continue;
    // (A file of several hard links is left alone under each name: process_file says why.)
    if (entry.through_link && entry.stat.links <= 1 && !optimised_as.empty())
      if (const Owner& own = optimised_as.at({entry.stat.dev, entry.stat.ino});
          own.entry != &entry) {
        FileResult r;
        r.path = entry.path;
        r.reason = Reason::kSkipped;
        r.message = "the same file as " + own.path + " (through a link), optimised under that name";
        rows_first.push_back(std::move(r));
        continue;
      }
    bytes += entry.stat.size;
    files.push_back(std::move(entry));
  }
  // Later names go after every other file, and are taken once all of those are done: a worker
  // that waited for a first name could hold up the memory that name waits for.
  batch::HardLinkedNames hard_links;
  size_t later_from = files.size();
  if (!first_names.empty()) {
    // The first of each file's names this run holds (the walk's first may have been left out:
    // one of the journal's name).
    std::set<std::pair<uint64_t, uint64_t>> seen;
    std::set<std::string> firsts;
    for (const auto& e : files)
      if (e.stat.links > 1 && seen.insert({e.stat.dev, e.stat.ino}).second)
        firsts.insert(e.relative);
    later_from =
        size_t(std::stable_partition(files.begin(), files.end(),
                                     [&](const batch::WalkEntry& e) {
                                       return e.stat.links <= 1 || firsts.count(e.relative) > 0;
                                     }) -
               files.begin());
    std::map<std::pair<uint64_t, uint64_t>, size_t> first_index;
    for (size_t i = 0; i < files.size(); ++i) {
      if (files[i].stat.links <= 1) continue;
      const auto [it, first] = first_index.try_emplace({files[i].stat.dev, files[i].stat.ino}, i);
      if (!first) hard_links.add(i, it->second);
    }
  }
  // Problems of the walk are reported once, by the first shard, each as a row of its own.
  if (options.shard.index == 0)
    for (const auto& problem : found.problems) {
      FileResult r;
      r.path = problem.path;
      r.reason = problem.io_error ? Reason::kIoError : Reason::kSkipped;
      r.message = problem.message;
      rows_first.push_back(std::move(r));
    }
  batch::DestinationFull destination_full;  // told of a mirror's writes that find no space
  // A mirror holds the tree's symbolic links as links with the same text, as `cp -a` copies
  // them (a relative link that leaves the tree then leads elsewhere from the mirror, as with
  // cp). One that cannot be made is a row of its own.
  for (const auto& link : found.links) {
    if (!batch::in_shard(link.relative, options.shard)) continue;
    if (takes_journals_place(link.path, link.relative)) continue;
    if (options.dry_run) {
      ++summary.links;
      continue;
    }
    // After a full disk the rest wait for the next run, as files do: a row each would bury
    // the one that matters.
    if ((options.stop && options.stop->load()) || destination_full.hit()) {
      ++summary.links_not_started;
      continue;
    }
    batch::IoStatus s = store->make_dirs_for(options.output_dir, link.relative, link.path);
    if (s.ok())
      s = store->make_link(batch::mirror_path(options.output_dir, link.relative), link.text);
    if (s.ok()) {
      ++summary.links;
      continue;
    }
    destination_full.note(s);
    FileResult r;
    r.path = link.path;
    r.reason = Reason::kIoError;
    r.message = "symbolic link not made in the mirror: " + s.message;
    if (s.error == EISDIR || s.error == ENOTEMPTY || s.error == EEXIST)
      r.message +=
          " (a folder holds its place, as a run with --follow-symlinks leaves it: remove that "
          "folder from the mirror to have the link, or run with --follow-symlinks)";
    rows_first.push_back(std::move(r));
  }
  progress.on_discovered(files.size() + rows_first.size(), bytes);

  Collector collector(progress, summary);
  for (const FileResult& r : rows_first) collector.file(r);
  if (journal && !options.dry_run) {
    // Keyed as the files' rows are: absolute, lexically normal.
    std::vector<FileResult> walk_rows = rows_first;
    for (FileResult& r : walk_rows) r.path = batch::journal_key(r.path);
    journal->replace_walk_rows(summary.run_id, walk_rows, shard_suffix(options.shard));
  }

  batch::RunContext context{.options = options,
                            .store = *store,
                            .journal = journal.get(),
                            .run_id = summary.run_id,
                            .policy_fingerprint = fingerprint,
                            .destination_full = mirror ? &destination_full : nullptr};
  batch::Scheduler scheduler(options.jobs, options.memory_budget);
  batch::ItemGate item_gate(scheduler);
  context.memory_gate = &item_gate;
  // Images are priced by their pixels, read from their headers as each reaches the head of the
  // queue; files the journal has done are not read. A file that cannot be read is priced by its
  // size (its worker reports why).
  auto estimate = [&](size_t i) -> uint64_t {
    const batch::WalkEntry& file = files[i];
    try {
      if (batch::journal_says_done(context, file)) return 0;
      std::vector<uint8_t> head;
      (void)store->read_head(file.path, batch::kEstimateHeadBytes, head);
      if (head.size() == batch::kEstimateHeadBytes && batch::frame_header_beyond(head))
        (void)store->read_head(file.path, batch::kEstimateLongHeadBytes, head);
      return batch::memory_estimate(file.stat.size, head, options.policy);
    } catch (const std::exception&) {  // out of memory for the head, or the journal failing
      return batch::memory_estimate(file.stat.size, {}, options.policy);
    }
  };
  const auto stopped = [&] {
    return (options.stop && options.stop->load()) || destination_full.hit();
  };
  const batch::SchedulerStats stats = scheduler.run(
      later_from, estimate,
      [&](size_t i) {
        const FileResult r = batch::process_file(context, files[i]);
        hard_links.finish(i, r);
        collector.file(r);
      },
      stopped);
  size_t started = stats.started;
  const auto count_refused = [&](const batch::SchedulerStats& run, size_t tasks) {
    const size_t wanted = std::min<size_t>(scheduler.jobs(), std::max<size_t>(tasks, 1));
    summary.workers_refused = std::max<uint64_t>(summary.workers_refused, wanted - run.workers);
  };
  count_refused(stats, later_from);
  if (later_from < files.size() && started == later_from) {
    const batch::SchedulerStats later = scheduler.run(
        files.size() - later_from, [&](size_t k) { return estimate(later_from + k); },
        [&](size_t k) {
          const size_t i = later_from + k;
          const std::optional<size_t> first = hard_links.first_of(i);
          if (!first) {  // every later name has a first one; processed alone otherwise
            collector.file(batch::process_file(context, files[i]));
            return;
          }
          const batch::FirstName name{
              batch::mirror_path(options.output_dir, files[*first].relative),
              hard_links.result_of(*first)};
          collector.file(batch::process_file(context, files[i], &name));
        },
        stopped);
    started += later.started;
    count_refused(later, files.size() - later_from);
  }
  summary.not_started = files.size() - started;
  summary.stopped_because = destination_full.message();

  if (journal) {
    try {
      journal->flush();
    } catch (const std::exception& e) {
      summary.journal_error = e.what();
    }
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.on_finish(summary);
  return summary;
}

}  // namespace lighten
