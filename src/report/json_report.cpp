#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <string_view>

#include "core/text_output.h"
#include "lighten/lighten.h"
#include "lighten/report.h"

namespace lighten {
namespace {

// nlohmann's strict dump refuses a string that is not UTF-8.
bool is_utf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

std::string hex_of(std::string_view s) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    out += kDigits[c >> 4];
    out += kDigits[c & 0xF];
  }
  return out;
}

nlohmann::json totals_json(const KindTotals& t) {
  nlohmann::json kept = nlohmann::json::object();
  for (const auto& [reason, count] : t.kept) kept[std::string(reason_name(reason))] = count;
  return {{"files", t.files},
          {"optimized", t.replaced},
          {"bytes_before", t.bytes_in},
          {"bytes_after", t.bytes_out},
          {"saved_percent", t.bytes_in == 0 ? 0.0
                                            : 100.0 * (double(t.bytes_in) - double(t.bytes_out)) /
                                                  double(t.bytes_in)},
          {"kept", kept}};
}

nlohmann::json file_row(const FileResult& r) {
  nlohmann::json row = {{"path", r.path},
                        {"kind", std::string(kind_name(r.kind))},
                        {"action", r.action == Action::kReplaced ? "optimized" : "kept"},
                        {"reason", std::string(reason_name(r.reason))},
                        {"message", r.message},
                        {"detail", r.detail},
                        {"bytes_before", r.bytes_in},
                        {"bytes_after", r.bytes_out},
                        {"ms", r.ms},
                        {"from_journal", r.from_journal}};
  if (!r.warnings.empty()) row["warnings"] = r.warnings;
  // JSON strings hold only UTF-8: a name in another encoding shows with replacements in
  // "path" and exactly, as hexadecimal bytes, in "path_bytes".
  if (!is_utf8(r.path)) row["path_bytes"] = hex_of(r.path);
  return row;
}

}  // namespace

void write_json_report(const std::string& path, const BatchSummary& summary,
                       const std::vector<FileResult>& rows, const Policy& policy, bool dry_run,
                       const std::string& stopped_because) {
  nlohmann::json doc;
  doc["lighten_version"] = std::string(version());
  doc["run_id"] = summary.run_id;
  doc["dry_run"] = dry_run;
  doc["seconds"] = summary.seconds;
  doc["journal"] = summary.journal_path;
  nlohmann::json pol = nlohmann::json::object();
  for (const auto& [name, value] : describe_policy(policy)) pol[name] = value;
  doc["policy"] = pol;
  doc["total"] = totals_json(summary.total);
  doc["total"]["io_errors"] = summary.io_errors;
  doc["total"]["from_journal"] = summary.from_journal;
  doc["total"]["not_started"] = summary.not_started;
  doc["stopped_because"] = stopped_because;
  nlohmann::json kinds = nlohmann::json::object();
  for (const auto& [kind, totals] : summary.by_kind)
    kinds[std::string(kind_name(kind))] = totals_json(totals);
  doc["by_kind"] = kinds;

  // Written piece by piece: a run of a million files would otherwise hold its rows three times
  // (the results, the document, its text). The layout is nlohmann's dump(2) of the whole document,
  // its keys in order, with the rows' array where "files" sorts.
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  const auto indented = [&](const nlohmann::json& value, std::string_view indent) {
    std::string text = value.dump(2, ' ', false, kReplace);
    for (size_t at = 0; (at = text.find('\n', at)) != std::string::npos; at += indent.size() + 1)
      text.insert(at + 1, indent);
    return text;
  };
  doc["files"] = nullptr;  // its place among the keys
  // Paths and messages need not be UTF-8 (file names in Latin-1, MP4 box types like "\xA9xyz").
  write_stream_atomically(
      path,
      [&](std::ostream& out) {
        out << "{";
        bool first = true;
        for (const auto& [key, value] : doc.items()) {
          out << (first ? "\n  " : ",\n  ") << nlohmann::json(key).dump() << ": ";
          first = false;
          if (key != "files") {
            out << indented(value, "  ");
            continue;
          }
          if (rows.empty()) {
            out << "[]";
            continue;
          }
          out << "[";
          for (size_t i = 0; i < rows.size(); ++i)
            out << (i ? ",\n    " : "\n    ") << indented(file_row(rows[i]), "    ");
          out << "\n  ]";
        }
        out << "\n}\n";
      },
      "choose a writable --report path");
}

}  // namespace lighten
