// RFC 4180 fields for the report's CSV files.
#pragma once

#include <string>
#include <string_view>

namespace lighten::csv {

// Quotes a field when it holds a comma, quote or line break; quotes inside are doubled.
inline std::string field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace lighten::csv
