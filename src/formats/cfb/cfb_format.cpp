#include "formats/cfb/cfb_format.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/cfb_names.h"
#include "core/errors.h"

namespace lighten {
namespace {

bool has(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// "Contents, SummaryInformation, ..." (control characters some names start with left out).
std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i == 6) return text + ", ...";
    if (i > 0) text += ", ";
    for (char c : names[i])
      if (static_cast<unsigned char>(c) >= 0x20) text += c;
  }
  return text;
}

}  // namespace

Outcome optimize_cfb(ByteView input, Context& context) {
  (void)context;
  check_cfb_header(input);
  const std::vector<std::string> names = cfb_root_names(input);
  if (names.empty())
    throw FormatError(Reason::kUnsupportedKind, 0,
                      "a compound file whose directory names nothing lighten can read");
  // Office's password protection wraps the OOXML package in a compound file.
  if (has(names, "EncryptedPackage") && has(names, "EncryptionInfo"))
    throw FormatError(Reason::kEncrypted, 0,
                      "a password-protected Office document (an encrypted OOXML package)");
  throw FormatError(Reason::kUnsupportedKind, 0,
                    "a compound file of no kind lighten optimises (not HWP, PPT, XLS or DOC; it "
                    "holds " +
                        listed(names) + ")");
}

Verdict verify_cfb(ByteView input, ByteView output, Context& context) {
  (void)context;
  if (std::equal(input.begin(), input.end(), output.begin(), output.end())) return {true, {}, {}};
  return {false, "compound files of other kinds are never changed", {}};
}

void describe_cfb(ByteView input, FileInfo& info) {
  check_cfb_header(input);
  const std::vector<std::string> names = cfb_root_names(input);
  info.properties.emplace_back("below the root", names.empty() ? "unreadable" : listed(names));
}

}  // namespace lighten
