#include "batch/walk.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>
#include <unordered_set>
#include <utility>

namespace lighten::batch {
namespace {

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

}  // namespace

bool is_journal_name(std::string_view name) {
  if (!name.starts_with(".lighten-journal")) return false;
  for (const std::string_view suffix : {".sqlite", ".sqlite-wal", ".sqlite-shm", ".sqlite-journal"})
    if (name.ends_with(suffix)) return true;
  return false;
}

std::string absolute_normal_path(const std::string& path) {
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(path, ec);
  return (ec ? std::filesystem::path(path) : absolute).lexically_normal().string();
}

std::string input_name(const std::string& path) {
  auto p = std::filesystem::path(path).lexically_normal();
  auto name = p.filename().string();
  if (name.empty()) name = p.parent_path().filename().string();  // "dir/" -> "dir"
  return name.empty() || name == "." || name == ".." ? std::string("input") : name;
}

namespace {

class Walker {
 public:
  Walker(Store& store, const std::vector<std::string>& inputs, const WalkOptions& options,
         WalkResult& result)
      : store_(store), options_(options), result_(result) {
    for (const auto& path : options.exclude_paths) {
      FileStat st;
      if (store_.stat(path, true, st).ok()) excluded_.insert({st.dev, st.ino});
    }
    for (const auto& path : inputs)
      if (std::string name = link_name(path); is_link(name))
        link_inputs_.insert(absolute_normal_path(name));
  }

  void input(const std::string& path, const std::string& relative) {
    const bool link = is_link(link_name(path));
    FileStat st;
    if (auto s = store_.stat(path, true, st); !s.ok()) {
      result_.problems.push_back({path, s.message, true});
      return;
    }
    if (st.is_directory()) {
      directory(path, relative, st, link);
    } else if (st.is_regular()) {
      if (!is_excluded(st)) add(path, relative, st, link);
    } else {
      result_.problems.push_back({path, "not a regular file", false});
    }
  }

 private:
  // "dir/" would name the folder a link leads to, not the link.
  static std::string link_name(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
  }
  bool is_link(const std::string& name) {
    FileStat own;
    return store_.stat(name, false, own).ok() && own.is_symlink();
  }

  bool is_excluded(const FileStat& st) const { return excluded_.count({st.dev, st.ino}) > 0; }

  void add(const std::string& path, const std::string& relative, const FileStat& st,
           bool through_link) {
    // The same file named twice (an input inside another) must not get two writers.
    if (!seen_.insert(absolute_normal_path(path)).second) return;
    result_.total_bytes += st.size;
    result_.files.push_back({path, relative, st, through_link});
  }

  // `through_link`: the folder was reached through a symbolic link (its own name, or a folder's
  // above it), so its files may be reached under other names too.
  void directory(const std::string& path, const std::string& relative, const FileStat& st,
                 bool through_link) {
    if (is_excluded(st)) return;
    // Guards against cycles when following symbolic links.
    if (!visiting_.insert({st.dev, st.ino}).second) {
      result_.problems.push_back({path, "directory cycle through a symbolic link", false});
      return;
    }
    std::vector<DirEntry> entries;
    if (auto s = store_.list(path, entries); !s.ok()) {
      result_.problems.push_back({path, s.message, true});
      visiting_.erase({st.dev, st.ino});
      return;
    }
    std::sort(entries.begin(), entries.end(),
              [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    for (const auto& e : entries) {
      std::string child = join(path, e.name);
      std::string child_relative = join(relative, e.name);
      if (options_.skip_journals && is_journal_name(e.name) && e.type == EntryType::kFile) continue;
      // Temp names are never walked; links under one are removed only where make_link wrote.
      if (is_temp_name(e.name) && (e.type == EntryType::kFile || e.type == EntryType::kSymlink) &&
          (!options_.temps_beside_their_file || made_for_a_neighbour(e.name, entries))) {
        const bool removable = e.type == EntryType::kFile || options_.clean_temp_links;
        if (removable && options_.clean_temps && owns_temp(relative, e.name) &&
            store_.remove(child).ok())
          ++result_.cleaned_temps;
        continue;
      }
      EntryType type = e.type;
      FileStat child_stat;
      if (type == EntryType::kSymlink) {
        if (!options_.follow_symlinks) {
          std::string text;
          // A link that is also an input of its own (to a file or a folder) is taken there: its
          // own rows say what became of it, and one more would say it was left alone.
          if (!options_.collect_links) {
            if (!link_inputs_.count(absolute_normal_path(child)))
              result_.problems.push_back({child, "symbolic link not followed", false});
          } else if (auto s = store_.read_link(child, text); s.ok())
            result_.links.push_back({child, child_relative, std::move(text)});
          else
            result_.problems.push_back({child, s.message, true});
          continue;
        }
        if (auto s = store_.stat(child, true, child_stat); !s.ok()) {
          // A link that leads nowhere is the tree's state, not a failure a new run could mend.
          if (s.error == ENOENT)
            result_.problems.push_back({child, "symbolic link leads nowhere: " + s.message, false});
          else
            result_.problems.push_back({child, s.message, true});
          continue;
        }
        type = child_stat.is_directory() ? EntryType::kDirectory
               : child_stat.is_regular() ? EntryType::kFile
                                         : EntryType::kOther;
      } else if (type == EntryType::kFile || type == EntryType::kDirectory) {
        if (auto s = store_.stat(child, false, child_stat); !s.ok()) {
          result_.problems.push_back({child, s.message, true});
          continue;
        }
      }
      if (type == EntryType::kDirectory) {
        directory(child, child_relative, child_stat, through_link || e.type == EntryType::kSymlink);
      } else if (type == EntryType::kFile) {
        if (!is_excluded(child_stat))
          add(child, child_relative, child_stat, through_link || e.type == EntryType::kSymlink);
      } else {
        result_.problems.push_back({child, "not a regular file", false});
      }
    }
    visiting_.erase({st.dev, st.ino});
  }

  // Whether the file a temp name was made for is among `entries` (where the name was cut to fit,
  // a file whose name begins with what is left).
  static bool made_for_a_neighbour(const std::string& temp_name,
                                   const std::vector<DirEntry>& entries) {
    const std::string target = temp_target(temp_name);
    const std::string cut = temp_cut_target(temp_name);
    return std::any_of(entries.begin(), entries.end(), [&](const DirEntry& other) {
      if (is_temp_name(other.name)) return false;
      return target.empty() ? other.name.starts_with(cut) : other.name == target;
    });
  }

  bool owns_temp(const std::string& relative, const std::string& temp_name) const {
    if (!options_.owns_temp) return true;
    const std::string target = temp_target(temp_name);
    return options_.owns_temp(target.empty() ? std::string() : join(relative, target));
  }

  Store& store_;
  const WalkOptions& options_;
  WalkResult& result_;
  std::set<std::pair<uint64_t, uint64_t>> excluded_;
  std::set<std::pair<uint64_t, uint64_t>> visiting_;
  std::unordered_set<std::string> seen_;
  std::unordered_set<std::string> link_inputs_;  // inputs that are links, as absolute_normal_path
};

}  // namespace

WalkResult walk(Store& store, const std::vector<std::string>& inputs, const WalkOptions& options) {
  WalkResult result;
  Walker walker(store, inputs, options, result);
  size_t directories = 0;
  for (const auto& input : inputs) {
    FileStat st;
    if (store.stat(input, true, st).ok() && st.is_directory()) ++directories;
  }
  bool single_directory = inputs.size() == 1 && directories == 1;
  for (const auto& input : inputs) walker.input(input, single_directory ? "" : input_name(input));
  return result;
}

}  // namespace lighten::batch
