// What a file is, decided from its bytes (never from its name).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace lighten {

enum class Kind : uint16_t {
  kUnknown = 0,
  kJpeg,
  kPng,
  kGif,
  kWebp,
  kTiff,
  kPdf,
  kZip,   // a plain ZIP archive
  kDocx,  // OOXML word processing (docx, docm, dotx, dotm)
  kXlsx,  // OOXML spreadsheet (xlsx, xlsm, xltx, xltm)
  kPptx,  // OOXML presentation (pptx, pptm, potx, ppsx, ...)
  kHwpx,
  kOdt,
  kOds,
  kOdp,
  kEpub,
  kJar,
  kCfb,  // an OLE compound file of no more specific kind
  kHwp,  // HWP 5.0 (CFB)
  kPpt,  // PowerPoint 97-2003 (CFB)
  kXls,  // Excel 97-2003 (CFB)
  kDoc,  // Word 97-2003 (CFB)
  kAvi,
  kRiff,  // RIFF of another form (WAV, ...)
  kMp4,
  kMov,
  kHeif,  // ISO-BMFF still images (HEIC, AVIF)
};

// Stable lower-case name ("jpeg", "pptx", ...) used in reports and journals.
std::string_view kind_name(Kind kind);
// Inverse of kind_name; kUnknown for a name it does not know.
Kind kind_from_name(std::string_view name);
// Decides the kind from content alone. Looks at most at a bounded part of the bytes.
Kind sniff(std::span<const uint8_t> bytes);
// The kind a file name's extension claims (case aside: "IMG_1.JPG" is a JPEG), or kUnknown for an
// extension that names none of lighten's kinds (or none at all).
Kind kind_claimed_by_name(std::string_view file_name);
// Whether content of kind `content` is what a name claiming `claimed` promises: the same kind,
// or one a reader of the claimed kind takes too (MP4 and MOV share one structure and readers, as
// a plain ZIP and a JAR do), or a container sniffing placed no more closely (a ZIP for a ZIP-based
// document, a compound file for a legacy Office, HWP or encrypted OOXML one).
bool kind_matches_claim(Kind content, Kind claimed);
// Why a file of kind `content` is misnamed ("its name says png but its content is jpeg"), or ""
// where its name claims nothing, or what the content is (unknown content is no one's to judge).
std::string misnaming(std::string_view file_name, Kind content);

}  // namespace lighten
