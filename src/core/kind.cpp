#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "core/bytes.h"
#include "core/cfb_names.h"
#include "core/zip_names.h"
#include "lighten/kind.h"

namespace lighten {
namespace {

struct KindName {
  Kind kind;
  std::string_view name;
};

constexpr std::array kKindNames{
    KindName{Kind::kUnknown, "unknown"}, KindName{Kind::kJpeg, "jpeg"},
    KindName{Kind::kPng, "png"},         KindName{Kind::kGif, "gif"},
    KindName{Kind::kWebp, "webp"},       KindName{Kind::kTiff, "tiff"},
    KindName{Kind::kPdf, "pdf"},         KindName{Kind::kZip, "zip"},
    KindName{Kind::kDocx, "docx"},       KindName{Kind::kXlsx, "xlsx"},
    KindName{Kind::kPptx, "pptx"},       KindName{Kind::kHwpx, "hwpx"},
    KindName{Kind::kOdt, "odt"},         KindName{Kind::kOds, "ods"},
    KindName{Kind::kOdp, "odp"},         KindName{Kind::kEpub, "epub"},
    KindName{Kind::kJar, "jar"},         KindName{Kind::kCfb, "cfb"},
    KindName{Kind::kHwp, "hwp"},         KindName{Kind::kPpt, "ppt"},
    KindName{Kind::kXls, "xls"},         KindName{Kind::kDoc, "doc"},
    KindName{Kind::kAvi, "avi"},         KindName{Kind::kRiff, "riff"},
    KindName{Kind::kMp4, "mp4"},         KindName{Kind::kMov, "mov"},
    KindName{Kind::kHeif, "heif"},
};

// Searches for the UTF-16LE spelling of an ASCII name, as CFB directory entries store them.
bool contains_utf16(ByteView bytes, std::string_view ascii) {
  if (ascii.empty() || bytes.size() < ascii.size() * 2) return false;
  const size_t last = bytes.size() - ascii.size() * 2;
  for (size_t i = 0; i <= last; ++i) {
    size_t k = 0;
    while (k < ascii.size() && bytes[i + 2 * k] == static_cast<uint8_t>(ascii[k]) &&
           bytes[i + 2 * k + 1] == 0)
      ++k;
    if (k == ascii.size()) return true;
  }
  return false;
}

Kind sniff_cfb(ByteView bytes) {
  const std::vector<std::string> names = cfb_root_names(bytes);
  if (!names.empty()) {
    // Regardless of ASCII case, as readers look the streams up ("WORKBOOK" opens in LibreOffice).
    auto has = [&](std::string_view n) {
      const std::string folded = cfb_folded_name(n);
      return std::any_of(names.begin(), names.end(),
                         [&](const std::string& name) { return cfb_folded_name(name) == folded; });
    };
    if (has("FileHeader") && (has("BodyText") || has("ViewText"))) return Kind::kHwp;
    if (has("PowerPoint Document")) return Kind::kPpt;
    if (has("WordDocument")) return Kind::kDoc;
    if (has("Workbook") || has("Book")) return Kind::kXls;
    return Kind::kCfb;
  }
  // A directory we cannot walk: look for the names in the first sectors.
  ByteView head = bytes.first(std::min<size_t>(bytes.size(), 4u << 20));
  if (contains_utf16(head, "FileHeader") && contains_utf16(head, "BodyText")) return Kind::kHwp;
  if (contains_utf16(head, "PowerPoint Document")) return Kind::kPpt;
  if (contains_utf16(head, "WordDocument")) return Kind::kDoc;
  if (contains_utf16(head, "Workbook") || contains_utf16(head, "Book")) return Kind::kXls;
  return Kind::kCfb;
}

Kind sniff_iso_bmff(ByteView bytes) {
  std::string_view brand(reinterpret_cast<const char*>(bytes.data() + 8), 4);
  if (brand == "qt  ") return Kind::kMov;
  for (std::string_view still : {"heic", "heix", "mif1", "msf1", "avif", "avis", "hevc"})
    if (brand == still) return Kind::kHeif;
  return Kind::kMp4;
}

Kind sniff_zip(ByteView bytes) {
  const ZipNames names = list_zip_names(bytes);
  if (!names.mimetype.empty()) {
    const std::string_view m = names.mimetype;
    if (m == "application/hwp+zip") return Kind::kHwpx;
    if (m == "application/epub+zip") return Kind::kEpub;
    if (m.starts_with("application/vnd.oasis.opendocument.text")) return Kind::kOdt;
    if (m.starts_with("application/vnd.oasis.opendocument.spreadsheet")) return Kind::kOds;
    if (m.starts_with("application/vnd.oasis.opendocument.presentation")) return Kind::kOdp;
  }
  auto has_prefix = [&](std::string_view prefix) {
    return std::any_of(names.names.begin(), names.names.end(),
                       [&](const std::string& n) { return n.starts_with(prefix); });
  };
  if (has_prefix("[Content_Types].xml")) {
    if (has_prefix("word/")) return Kind::kDocx;
    if (has_prefix("xl/")) return Kind::kXlsx;
    if (has_prefix("ppt/")) return Kind::kPptx;
  }
  // Some HWPX writers store paths with backslashes and deflate the mimetype entry: such a package
  // is known by its OWPML parts, Contents/header.xml or Contents/sectionN.xml (a plain archive
  // with a "Contents/sections.txt" is no document).
  const auto owpml_part = [](std::string_view name) {
    if (!name.starts_with("Contents/") && !name.starts_with("Contents\\")) return false;
    name.remove_prefix(9);
    if (name == "header.xml") return true;
    if (!name.starts_with("section") || !name.ends_with(".xml")) return false;
    const std::string_view number = name.substr(7, name.size() - 11);
    return !number.empty() &&
           std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (std::any_of(names.names.begin(), names.names.end(), owpml_part)) return Kind::kHwpx;
  if (has_prefix("META-INF/MANIFEST.MF")) return Kind::kJar;
  return Kind::kZip;
}

}  // namespace

std::string_view kind_name(Kind kind) {
  for (const auto& k : kKindNames)
    if (k.kind == kind) return k.name;
  return "unknown";
}

Kind kind_from_name(std::string_view name) {
  for (const auto& k : kKindNames)
    if (k.name == name) return k.kind;
  return Kind::kUnknown;
}

Kind sniff(std::span<const uint8_t> bytes) {
  // A JPEG's SOI and the 0xFF of its first marker; an SOI alone is a JPEG cut short.
  if (bytes.size() >= 2 && bytes[0] == 0xFF && bytes[1] == 0xD8 &&
      (bytes.size() == 2 || bytes[2] == 0xFF))
    return Kind::kJpeg;
  if (starts_with(bytes, "\x89PNG\r\n\x1a\n")) return Kind::kPng;
  if (starts_with(bytes, "GIF87a") || starts_with(bytes, "GIF89a")) return Kind::kGif;
  if (starts_with(bytes, "II*\0") || starts_with(bytes, "MM\0*")) return Kind::kTiff;
  if (starts_with(bytes, "RIFF") && bytes.size() >= 12) {
    if (starts_with(bytes, "WEBP", 8)) return Kind::kWebp;
    if (starts_with(bytes, "AVI ", 8)) return Kind::kAvi;
    return Kind::kRiff;
  }
  if (bytes.size() >= 12 && starts_with(bytes, "ftyp", 4)) return sniff_iso_bmff(bytes);
  if (starts_with(bytes, "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1")) return sniff_cfb(bytes);
  if (starts_with(bytes, "PK\x03\x04") || starts_with(bytes, "PK\x05\x06")) return sniff_zip(bytes);
  // PDF: the header may follow up to 1024 bytes of junk, as readers accept. Past the first byte
  // it must be a header ("%PDF-1.4") with an object after it, so that a text that mentions one
  // ("the %PDF-1.4 header") is no damaged PDF.
  const size_t pdf_window = std::min<size_t>(bytes.size(), 1024);
  const std::string_view head(reinterpret_cast<const char*>(bytes.data()), pdf_window);
  const size_t header = head.find("%PDF-");
  if (header == 0) return Kind::kPdf;
  if (header != std::string_view::npos) {
    const std::string_view rest = head.substr(header + 5);
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (rest.size() >= 3 && digit(rest[0]) && rest[1] == '.' && digit(rest[2]) &&
        rest.find(" obj") != std::string_view::npos)
      return Kind::kPdf;
  }
  return Kind::kUnknown;
}

Kind kind_claimed_by_name(std::string_view file_name) {
  const size_t slash = file_name.find_last_of('/');
  const std::string_view base = file_name.substr(slash == std::string_view::npos ? 0 : slash + 1);
  const size_t dot = base.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || base.size() - dot > 6) return Kind::kUnknown;
  std::string ext(base.substr(dot + 1));
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  static constexpr struct {
    const char* extension;
    Kind kind;
  } kClaims[] = {
      {"jpg", Kind::kJpeg},  {"jpeg", Kind::kJpeg}, {"jpe", Kind::kJpeg},  {"jfif", Kind::kJpeg},
      {"png", Kind::kPng},   {"pdf", Kind::kPdf},   {"docx", Kind::kDocx}, {"docm", Kind::kDocx},
      {"dotx", Kind::kDocx}, {"dotm", Kind::kDocx}, {"xlsx", Kind::kXlsx}, {"xlsm", Kind::kXlsx},
      {"xltx", Kind::kXlsx}, {"xltm", Kind::kXlsx}, {"pptx", Kind::kPptx}, {"pptm", Kind::kPptx},
      {"potx", Kind::kPptx}, {"potm", Kind::kPptx}, {"ppsx", Kind::kPptx}, {"ppsm", Kind::kPptx},
      {"hwpx", Kind::kHwpx}, {"hwp", Kind::kHwp},   {"odt", Kind::kOdt},   {"ott", Kind::kOdt},
      {"ods", Kind::kOds},   {"ots", Kind::kOds},   {"odp", Kind::kOdp},   {"otp", Kind::kOdp},
      {"epub", Kind::kEpub}, {"zip", Kind::kZip},   {"jar", Kind::kJar},   {"doc", Kind::kDoc},
      {"dot", Kind::kDoc},   {"xls", Kind::kXls},   {"xlt", Kind::kXls},   {"ppt", Kind::kPpt},
      {"pps", Kind::kPpt},   {"pot", Kind::kPpt},   {"avi", Kind::kAvi},   {"mp4", Kind::kMp4},
      {"m4v", Kind::kMp4},   {"m4a", Kind::kMp4},   {"3gp", Kind::kMp4},   {"3g2", Kind::kMp4},
      {"mov", Kind::kMov},   {"qt", Kind::kMov},    {"gif", Kind::kGif},   {"webp", Kind::kWebp},
      {"tif", Kind::kTiff},  {"tiff", Kind::kTiff}, {"heic", Kind::kHeif}, {"heif", Kind::kHeif},
      {"avif", Kind::kHeif}};
  for (const auto& c : kClaims)
    if (ext == c.extension) return c.kind;
  return Kind::kUnknown;
}

bool kind_matches_claim(Kind content, Kind claimed) {
  const auto family = [](Kind k) {
    if (k == Kind::kMov) return Kind::kMp4;
    if (k == Kind::kJar) return Kind::kZip;
    return k;
  };
  if (claimed == Kind::kUnknown || family(content) == family(claimed)) return true;
  const auto zip_based = [](Kind k) {
    return k == Kind::kZip || k == Kind::kJar || k == Kind::kDocx || k == Kind::kXlsx ||
           k == Kind::kPptx || k == Kind::kHwpx || k == Kind::kOdt || k == Kind::kOds ||
           k == Kind::kOdp || k == Kind::kEpub;
  };
  const bool ooxml = claimed == Kind::kDocx || claimed == Kind::kXlsx || claimed == Kind::kPptx;
  const bool cfb_based = claimed == Kind::kDoc || claimed == Kind::kXls || claimed == Kind::kPpt ||
                         claimed == Kind::kHwp;
  // A document its sniffing cannot place more closely (a damaged package read as a plain ZIP, an
  // encrypted OOXML file, which is a compound file) is the claimed kind's to judge.
  if (content == Kind::kZip) return zip_based(claimed);
  if (content == Kind::kCfb) return cfb_based || ooxml;
  return false;
}

std::string misnaming(std::string_view file_name, Kind content) {
  const Kind claimed = kind_claimed_by_name(file_name);
  if (content == Kind::kUnknown || kind_matches_claim(content, claimed)) return {};
  std::string why = "its name says ";
  why.append(kind_name(claimed)).append(" but its content is ").append(kind_name(content));
  return why;
}

}  // namespace lighten
