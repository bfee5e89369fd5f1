// Reports of a batch run: the summary table for people and a JSON document with a row per file.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "lighten/batch.h"

namespace lighten {

// A per-kind table: files, optimised, bytes before/after, saved %, files left alone by reason.
void print_summary_table(std::ostream& out, const BatchSummary& summary, bool dry_run);

// Writes the summary and one row per file as JSON to `path` (atomically). Throws on I/O errors.
void write_json_report(const std::string& path, const BatchSummary& summary,
                       const std::vector<FileResult>& rows, const Policy& policy, bool dry_run);

// "1.23 MB", "512 B": decimal units, as storage is billed.
std::string format_bytes(uint64_t bytes);

}  // namespace lighten
