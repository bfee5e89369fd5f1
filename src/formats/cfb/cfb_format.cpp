#include "formats/cfb/cfb_format.h"

#include <algorithm>
#include <string>

#include "core/errors.h"
#include "formats/cfb/compound_file.h"

namespace lighten {
namespace {

// The names below the root, for the reason: "Contents, SummaryInformation, ...".
std::string root_names(const cfb::CompoundFile& file) {
  std::string names;
  size_t listed = 0;
  for (const cfb::DirectoryEntry& e : file.entries()) {
    if (e.type == cfb::EntryType::kRoot || e.type == cfb::EntryType::kEmpty ||
        e.path.find('/') != std::string::npos)
      continue;
    if (++listed > 6) return names + ", ...";
    if (!names.empty()) names += ", ";
    // Some names start with control characters (\x05SummaryInformation): shown without them.
    for (char c : e.path)
      if (static_cast<unsigned char>(c) >= 0x20) names += c;
  }
  return names;
}

}  // namespace

Outcome optimize_cfb(ByteView input, Context& context) {
  (void)context;
  // A damaged file (a document cut short before its directory, say) throws its reason here.
  const cfb::CompoundFile file = cfb::CompoundFile::parse(input);
  const std::string names = root_names(file);
  throw FormatError(Reason::kUnsupportedKind, 0,
                    "a compound file of no kind lighten optimises (not HWP, PPT, XLS or DOC" +
                        (names.empty() ? std::string(")") : "; it holds " + names + ")"));
}

Verdict verify_cfb(ByteView input, ByteView output, Context& context) {
  (void)context;
  if (std::equal(input.begin(), input.end(), output.begin(), output.end())) return {true, {}, {}};
  return {false, "compound files of other kinds are never changed", {}};
}

void describe_cfb(ByteView input, FileInfo& info) {
  const cfb::CompoundFile file = cfb::CompoundFile::parse(input);
  info.properties.emplace_back("streams", std::to_string(file.stream_paths().size()));
  info.properties.emplace_back("below the root", root_names(file));
}

}  // namespace lighten
