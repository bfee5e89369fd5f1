#include "formats/zip/zip_format.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "codecs/deflate.h"
#include "core/worst_quality.h"
#include "formats/zip/zip_archive.h"

namespace lighten {
namespace {

// The entry whose local header comes first: readers of EPUB and ODF (and sniff()) look for
// `mimetype` there, whatever the central directory's order.
bool is_first_mimetype(const ZipArchive& a, size_t i) {
  if (a.entries[i].name != "mimetype") return false;
  for (const ZipEntry& e : a.entries)
    if (e.local_offset < a.entries[i].local_offset) return false;
  return true;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// A part's name as the checks below spell it: lower case, with the backslashes some HWPX
// writers put between folders (META-INF\signatures.xml) as slashes, as Hancom reads them.
std::string part_path(const std::string& name) {
  std::string path = lower(name);
  std::replace(path.begin(), path.end(), '\\', '/');
  return path;
}

// Parts that sign or hash the others (`name` in lower case): OOXML and OPC package signatures
// (XPS, VSIX), ODF and JAR signatures, NuGet's package signature, and an MSIX/APPX package's
// signature and block map (every part's size and block hashes, checked on install even unsigned).
bool signs_other_parts(const std::string& name) {
  return name.starts_with("_xmlsignatures/") ||
         name.starts_with("package/services/digital-signature/") ||
         (name.starts_with("meta-inf/") &&
          (name.find("signature") != std::string::npos || name.ends_with(".sf"))) ||
         name == ".signature.p7s" || name == "appxsignature.p7x" || name == "appxblockmap.xml";
}

// PKWARE's extra field holding an entry's own X.509 signature.
constexpr uint16_t kZipExtraEntrySignature = 0x0015;

// All the manifests and relationship parts read to look for protection together, at most:
// a package of thousands of them must not make the look take long.
constexpr uint64_t kMaxProtectionText = 64u << 20;

// Documents whose bytes are covered by a signature or that are encrypted are not ours to change.
// OPC lets a package's signature origin lie at any part name: its relationship part, wherever
// it is, names each signature with the signature relationship type.
void refuse_protected(const ZipArchive& archive) {
  uint64_t text_left = kMaxProtectionText;
  const auto contains = [](ByteView text, std::string_view what) {
    return std::search(text.begin(), text.end(), what.begin(), what.end()) != text.end();
  };
  const auto part_contains = [&](const ZipEntry& e, std::string_view what) {
    if (e.uncompressed_size > text_left)
      throw FormatError(Reason::kLimitExceeded, e.local_offset,
                        "the package's manifests and relationship parts expand beyond " +
                            std::to_string(kMaxProtectionText >> 20) + " MiB");
    text_left -= e.uncompressed_size;
    if (e.method == kZipMethodStored) return contains(e.data, what);
    return contains(inflate_exact(e.data, e.uncompressed_size, DeflateWrapper::kRaw), what);
  };
  for (const ZipEntry& e : archive.entries) {
    if (e.encrypted())
      throw FormatError(Reason::kEncrypted, e.local_offset, "entry " + e.name + " is encrypted");
    const std::string name = part_path(e.name);
    if (signs_other_parts(name))
      throw FormatError(
          Reason::kSigned, e.local_offset,
          "signed or hashed package (" + e.name + "); changing any byte would break it");
    if (has_extra_field(e.central_extra, kZipExtraEntrySignature) ||
        has_extra_field(e.local_extra, kZipExtraEntrySignature))
      throw FormatError(Reason::kSigned, e.local_offset,
                        "entry " + e.name + " carries its own signature (extra field 0x0015)");
    if (name == "meta-inf/encryption.xml")
      throw FormatError(Reason::kEncrypted, e.local_offset,
                        "the document declares encrypted parts (META-INF/encryption.xml)");
    if (e.method != kZipMethodStored && e.method != kZipMethodDeflate) continue;
    const bool relationships =
        name.ends_with(".rels") &&
        (name.starts_with("_rels/") || name.find("/_rels/") != std::string::npos);
    if (name == "meta-inf/manifest.xml" && part_contains(e, "encryption-data"))
      throw FormatError(Reason::kEncrypted, e.local_offset,
                        "the document is password-protected (manifest lists encryption data)");
    if (relationships && part_contains(e, "relationships/digital-signature/signature"))
      throw FormatError(Reason::kSigned, e.local_offset,
                        "signed package (" + e.name +
                            " names a digital signature); changing any byte would break it");
  }
}

// A package names each part once: OPC compares names without case, and a reader given two parts
// of one name (Word refuses the file; others take the first or the last) shows what no rule
// decides. Plain archives may repeat a name (an appended update), and are left to their tools.
void refuse_repeated_parts(const ZipArchive& archive, Kind kind) {
  if (kind == Kind::kZip || kind == Kind::kJar) return;
  std::set<std::string> seen;
  for (const ZipEntry& e : archive.entries)
    if (!seen.insert(part_path(e.name)).second)
      throw FormatError(Reason::kCorrupt, e.local_offset,
                        "two parts are named " + e.name + " (names differ at most in case)");
}

// Zip bombs are refused from the directory's own figures, before anything is inflated. ZIP64
// sizes reach 2^64: the sum saturates rather than wrap to a small number.
void check_budget(const ZipArchive& archive, ByteView input, const Policy& policy) {
  uint64_t total = 0;
  for (const ZipEntry& e : archive.entries)
    total = e.uncompressed_size > UINT64_MAX - total ? UINT64_MAX : total + e.uncompressed_size;
  if (total > policy.limits.max_expanded_bytes)
    throw FormatError(
        Reason::kLimitExceeded, 0,
        "entries expand to " + std::to_string(total) + " bytes, over the expansion budget");
  if (double(total) > policy.limits.max_expansion_ratio * double(input.size()) &&
      total > (64u << 20))
    throw FormatError(Reason::kLimitExceeded, 0,
                      "entries expand " +
                          std::to_string(total / std::max<size_t>(input.size(), 1)) +
                          " times the archive's size (a zip bomb?)");
}

Bytes entry_content(const ZipEntry& e) {
  size_t used = e.data.size();
  Bytes content = e.method == kZipMethodDeflate
                      ? inflate_exact(e.data, e.uncompressed_size, DeflateWrapper::kRaw, &used)
                      : Bytes(e.data.begin(), e.data.end());
  // Bytes inside the entry after its stream ends are no reader's, and re-deflating would drop
  // them: left alone, as bytes between entries are.
  if (used != e.data.size())
    throw FormatError(Reason::kUnsupportedVariant, e.local_offset,
                      std::to_string(e.data.size() - used) + " bytes follow the end of " + e.name +
                          "'s deflate stream inside the entry (hidden data)");
  if (e.method == kZipMethodStored && content.size() != e.uncompressed_size)
    throw FormatError(Reason::kCorrupt, e.local_offset,
                      "stored entry " + e.name + " has the wrong size");
  if (crc32_of(content) != e.crc32)
    throw FormatError(Reason::kCorrupt, e.local_offset,
                      "CRC of " + e.name + " does not match its data");
  return content;
}

// What a leading mimetype entry says, read as its readers read it (a deflated one inflated).
std::string mimetype_text(const ZipEntry& e) {
  constexpr uint64_t kLongest = 256;  // media types are short; a longer entry is not shown
  if (e.method != kZipMethodStored && e.method != kZipMethodDeflate)
    return "compressed with method " + std::to_string(e.method);
  if (e.uncompressed_size > kLongest) return std::to_string(e.uncompressed_size) + " bytes";
  try {
    const Bytes content = entry_content(e);
    return std::string(content.begin(), content.end());
  } catch (const FormatError& error) {
    return std::string("unreadable: ") + error.what();
  }
}

// Counts what working on a part holds beside the archive: `copies` times the size it inflates
// to (capped by what its bytes can inflate to, since the header may lie). A stored part is
// copied out of the archive too.
MemoryHold hold_for_part(Context& context, const ZipEntry& e, uint64_t copies) {
  const uint64_t size = e.method == kZipMethodDeflate
                            ? std::min(e.uncompressed_size, most_inflated(e.data.size()))
                            : e.data.size();
  return context.hold_memory(copies * size);
}

// Already-compressed media gain nothing from another deflate pass below the highest efforts.
bool worth_redeflating(Kind kind, int effort) {
  const bool compressed_media = kind == Kind::kJpeg || kind == Kind::kPng || kind == Kind::kGif ||
                                kind == Kind::kWebp || kind == Kind::kMp4 || kind == Kind::kMov ||
                                kind == Kind::kHeif;
  return !compressed_media || effort >= 9;
}

// Whether an attribute value reads as a number above zero: XML allows spaces around it and a
// leading '+'; a digit other than zero must come before anything but digits or a point.
bool positive_number(std::string_view value) {
  size_t i = value.find_first_not_of(" \t\r\n");
  if (i == std::string_view::npos) return false;
  if (value[i] == '+') ++i;
  for (; i < value.size() && (std::isdigit(uint8_t(value[i])) || value[i] == '.'); ++i)
    if (value[i] >= '1' && value[i] <= '9') return true;
  return false;
}

// Whether attribute `name` has a value `test` accepts among an element's attributes (the text
// after its name, up to its '>'; or any text), in either quote, with spaces around '=' as XML
// allows.
template <typename Test>
bool attribute_value(std::string_view attributes, std::string_view name, Test test) {
  constexpr std::string_view kSpace = " \t\r\n";
  for (size_t at = attributes.find(name); at != std::string_view::npos;
       at = attributes.find(name, at + 1)) {
    if (at == 0 || kSpace.find(attributes[at - 1]) == std::string_view::npos) continue;
    size_t i = attributes.find_first_not_of(kSpace, at + name.size());
    if (i == std::string_view::npos || attributes[i] != '=') continue;
    i = attributes.find_first_not_of(kSpace, i + 1);
    if (i == std::string_view::npos || (attributes[i] != '"' && attributes[i] != '\'')) continue;
    const size_t close = attributes.find(attributes[i], i + 1);
    if (close == std::string_view::npos) return false;
    if (test(attributes.substr(i + 1, close - i - 1))) return true;
  }
  return false;
}

bool attribute_above_zero(std::string_view attributes, std::string_view name) {
  return attribute_value(attributes, name, positive_number);
}

// Whether an element whose local name is `local` (any namespace prefix, or none) has attribute
// `attribute` above zero. Each element's attributes run to its '>' or the next '<', so every
// byte is looked at a bounded number of times, whatever the text holds.
bool element_attribute_above_zero(std::string_view text, std::string_view local,
                                  std::string_view attribute) {
  const auto name_char = [](char c) {
    return std::isalnum(uint8_t(c)) || c == '_' || c == '-' || c == '.' || c == ':';
  };
  for (size_t at = text.find('<'); at != std::string_view::npos; at = text.find('<', at + 1)) {
    size_t name_end = at + 1;
    while (name_end < text.size() && name_char(text[name_end])) ++name_end;
    const std::string_view name = text.substr(at + 1, name_end - at - 1);
    const size_t colon = name.rfind(':');
    if (name.substr(colon == std::string_view::npos ? 0 : colon + 1) != local) continue;
    const size_t end = std::min(text.find_first_of("<>", name_end), text.size());
    if (attribute_above_zero(text.substr(name_end, end - name_end), attribute)) return true;
  }
  return false;
}

// Whether a picture is shown with raised contrast: OOXML's <a:lum contrast="N">, HWPX's
// <hc:img contrast="N"> (Hancom writes hc:, older drafts hp:, bullets' pictures hh:), ODF's
// draw:contrast="N%" (fonts' PANOSE contrast is no picture's).
bool raises_contrast(std::string_view text) {
  return element_attribute_above_zero(text, "lum", "contrast") ||
         element_attribute_above_zero(text, "img", "contrast") ||
         attribute_above_zero(text, "draw:contrast");
}

// Whether a VML picture (<v:imagedata>, Word's older drawings and Excel's header pictures) is
// shown black-and-white, through a colour key, or with its gain or black level changed. VML
// attribute names are case-insensitive and Office writes them in lower case.
bool vml_picture_effect(std::string_view text) {
  size_t close = 0;  // as in above_zero: each byte is looked at a bounded number of times
  for (size_t at = text.find("<v:imagedata"); at != std::string_view::npos;
       at = text.find("<v:imagedata", at + 1)) {
    if (close != std::string_view::npos && close <= at) close = text.find('>', at);
    if (close == std::string_view::npos) return false;
    const size_t end = std::min(close, text.find('<', at + 1));
    const std::string element = lower(std::string(text.substr(at, end - at)));
    for (std::string_view attribute :
         {" bilevel=\"t", " bilevel=\"true", " chromakey=", " gain=", " blacklevel="})
      if (element.find(attribute) != std::string::npos) return true;
  }
  return false;
}

// Whether the document shows pictures through an effect under which changes the metric scores
// within the floor become visible: a colour key (OOXML <a:clrChange>, as a PDF's /Mask ranges),
// a black-and-white threshold (OOXML <a:biLevel>, HWPX BLACK_WHITE, ODF draw:color-mode="mono"),
// HWPX's 8x8 pattern (a dither, which flips dots as the threshold does) or a raised contrast. Which
// pictures an effect applies to would take following every relationship and reference, so one such
// effect anywhere keeps every picture of the package lossless. Worksheets and shared strings hold
// no picture effects and can be large: not read.
bool shows_pictures_through_effects(const ZipArchive& archive, Context& context) {
  for (const ZipEntry& e : archive.entries) {
    const std::string& name = e.name;
    const std::string path = part_path(name);
    if (!(path.ends_with(".xml") || path.ends_with(".vml")) ||
        name.rfind("xl/worksheets/", 0) == 0 || name == "xl/sharedStrings.xml" ||
        (e.method != kZipMethodStored && e.method != kZipMethodDeflate))
      continue;
    const MemoryHold hold = hold_for_part(context, e, 1);
    const Bytes content = entry_content(e);
    const std::string_view text(reinterpret_cast<const char*>(content.data()), content.size());
    for (std::string_view marker : {"clrChange", "biLevel", "BLACK_WHITE", "PATTERN_8_8"})
      if (text.find(marker) != std::string_view::npos) return true;
    if (attribute_value(text, "draw:color-mode", [](std::string_view v) { return v == "mono"; }))
      return true;
    if (raises_contrast(text) || vml_picture_effect(text)) return true;
  }
  return false;
}

}  // namespace

Outcome optimize_zip(ByteView input, Context& context) {
  const Policy& policy = context.policy();
  const Kind kind = sniff(input);
  if ((kind == Kind::kZip || kind == Kind::kJar) && policy.plain_zip == PlainZipPolicy::kLeave)
    throw FormatError(Reason::kSkipped, 0,
                      "plain ZIP and JAR archives are left alone unless --plain-zip optimize "
                      "(some readers check archive hashes)");
  const ZipArchive archive = read_zip(input);
  // From the directory's figures first: the protection checks inflate parts.
  check_budget(archive, input, policy);
  refuse_repeated_parts(archive, kind);
  refuse_protected(archive);

  // Document formats let any part but the leading mimetype be deflated; plain archives keep
  // stored entries stored (some are stored on purpose, e.g. to be mapped into memory).
  const bool may_deflate_stored = kind != Kind::kZip && kind != Kind::kJar;
  ZipArchive out = archive;
  std::vector<Bytes> storage(archive.entries.size());
  std::map<Kind, int> optimised;
  size_t redeflated = 0;
  Outcome outcome;
  Policy pictures = policy;
  const bool effects =
      policy.mode != Mode::kLossless && shows_pictures_through_effects(archive, context);
  if (effects) pictures.mode = Mode::kLossless;
  for (size_t i = 0; i < out.entries.size(); ++i) {
    ZipEntry& e = out.entries[i];
    if (context.out_of_time())
      throw FormatError(Reason::kLimitExceeded, e.local_offset, "the time budget ran out");
    if (e.method != kZipMethodStored && e.method != kZipMethodDeflate) continue;
    // The part, its deflated copy and the optimised item's bytes (the item's own work is
    // counted by the engine).
    const MemoryHold hold = hold_for_part(context, e, 2);
    Bytes content = entry_content(e);  // checks the CRC: a damaged part is a damaged document
    if (is_first_mimetype(archive, i)) continue;  // must stay first, stored and byte-identical
    const Kind item_kind = sniff(content);
    bool changed = false;
    std::vector<std::string> warnings;  // the item's, told only where its entry is rewritten
    if (item_kind != Kind::kUnknown) {
      Outcome item = context.optimize_embedded_under(content, e.name, pictures);
      if (item.replaced()) {
        content = std::move(item.bytes);
        changed = true;
        warnings = std::move(item.warnings);
      }
    }
    Bytes packed;  // the content deflated, when worth trying
    if (e.method == kZipMethodDeflate || may_deflate_stored) {
      if (changed || worth_redeflating(item_kind, policy.effort))
        packed = deflate_bytes(content, policy.effort, DeflateWrapper::kRaw,
                               [&context] { return context.out_of_time(); });
    }
    if (e.method == kZipMethodDeflate && packed.empty()) continue;  // unchanged media
    // A stored entry is deflated only when that pays; a deflated one stays deflated.
    const bool deflate_it =
        e.method == kZipMethodDeflate || (!packed.empty() && packed.size() + 8 < content.size());
    Bytes& chosen = deflate_it ? packed : content;
    // A smaller picture may deflate worse than the one it replaces (its EXIF thumbnail's
    // compressible bytes optimised away, say): the entry as it was is then kept.
    if (chosen.size() >= e.data.size()) continue;
    if (changed)
      ++optimised[item_kind];
    else
      ++redeflated;
    for (const std::string& w : warnings) outcome.warnings.push_back(e.name + ": " + w);
    e.uncompressed_size = content.size();
    e.crc32 = crc32_of(content);
    if (deflate_it && e.method == kZipMethodStored) {
      e.method = kZipMethodDeflate;
      e.version_needed = std::max<uint16_t>(e.version_needed, 20);
      e.local_version_needed = std::max<uint16_t>(e.local_version_needed, 20);
    }
    storage[i] = std::move(chosen);
    e.data = storage[i];
    e.compressed_size = storage[i].size();
  }
  outcome.kind = kind;
  outcome.bytes_in = input.size();
  if (optimised.empty() && redeflated == 0) {
    outcome.action = Action::kKept;
    outcome.reason = Reason::kNoGain;
    outcome.message = "no entry could be made smaller";
    return outcome;
  }
  outcome.bytes = write_zip(out);
  outcome.action = Action::kReplaced;
  std::string detail;
  for (const auto& [k, n] : optimised)
    detail += (detail.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(kind_name(k));
  if (!detail.empty()) detail += " optimised";
  if (redeflated)
    detail += (detail.empty() ? "" : "; ") + std::to_string(redeflated) + " parts re-deflated";
  if (effects)
    detail += (detail.empty() ? "" : "; ") +
              std::string(
                  "pictures optimised losslessly (the document shows pictures through a "
                  "colour key, a black-and-white threshold, a dither pattern or raised "
                  "contrast)");
  outcome.detail = detail;
  return outcome;
}

Verdict verify_zip(ByteView input, ByteView output, Context& context) {
  const ZipArchive a = read_zip(input);
  const ZipArchive b = read_zip(output);
  if (a.entries.size() != b.entries.size()) return {false, "entry count changed", {}};
  if (a.comment != b.comment || a.trailing != b.trailing)
    return {false, "archive comment or trailing bytes changed", {}};
  // The local headers keep their order (which a leading mimetype and sniffing depend on).
  if (local_order(a) != local_order(b))
    return {false, "the order of the entries' local headers changed", {}};
  if (sniff(input) != sniff(output)) return {false, "the archive no longer reads as its kind", {}};
  QualityFigures quality;  // the worst picture's
  quality.pixels_identical = true;
  // Pictures shown through effects were optimised losslessly: so they are checked.
  Policy pictures = context.policy();
  if (pictures.mode != Mode::kLossless && shows_pictures_through_effects(a, context))
    pictures.mode = Mode::kLossless;
  for (size_t i = 0; i < a.entries.size(); ++i) {
    const ZipEntry& x = a.entries[i];
    const ZipEntry& y = b.entries[i];
    const auto without_descriptor = [](uint16_t f) { return f & ~kZipFlagDataDescriptor; };
    if (x.name != y.name)
      return {false, "entry " + std::to_string(i) + " was renamed or moved", {}};
    // Document formats allow a stored part to become deflated; nothing else may change.
    const bool method_ok =
        x.method == y.method ||
        (x.method == kZipMethodStored && y.method == kZipMethodDeflate && !is_first_mimetype(a, i));
    if (!method_ok || without_descriptor(x.flags) != without_descriptor(y.flags) ||
        x.mod_time != y.mod_time || x.mod_date != y.mod_date ||
        x.local_mod_time != y.local_mod_time || x.local_mod_date != y.local_mod_date ||
        x.external_attrs != y.external_attrs || x.internal_attrs != y.internal_attrs ||
        x.central_extra != y.central_extra || x.local_extra != y.local_extra ||
        x.comment != y.comment || x.version_made_by != y.version_made_by)
      return {false, "the header of " + x.name + " changed", {}};
    const bool raw_only =
        is_first_mimetype(a, i) || (x.method != kZipMethodStored && x.method != kZipMethodDeflate);
    if (x.method == kZipMethodStored && y.method == kZipMethodDeflate &&
        (sniff(input) == Kind::kZip || sniff(input) == Kind::kJar))
      return {false, "a stored entry of a plain archive was deflated", {}};
    if (raw_only) {
      if (!std::equal(x.data.begin(), x.data.end(), y.data.begin(), y.data.end()))
        return {false, x.name + " must stay byte-identical", {}};
      continue;
    }
    const MemoryHold hold = hold_for_part(context, x, 2);
    const Bytes before = entry_content(x);
    const Bytes after = entry_content(y);  // zlib inflates what libdeflate or zopfli wrote
    if (before == after) continue;
    const Verdict item = context.verify_embedded_under(before, after, pictures);
    if (!item.ok) return {false, x.name + ": " + item.problem, {}};
    fold_worst(quality, item.quality);
  }
  Verdict v;
  v.ok = true;
  v.quality = quality;
  return v;
}

void describe_zip(ByteView input, FileInfo& info) {
  const ZipArchive archive = read_zip(input);
  uint64_t expanded = 0;
  std::map<std::string, int> methods;
  for (const ZipEntry& e : archive.entries) {
    expanded += e.uncompressed_size;
    ++methods[e.method == kZipMethodStored    ? "stored"
              : e.method == kZipMethodDeflate ? "deflated"
                                              : "method " + std::to_string(e.method)];
  }
  info.properties.emplace_back("entries", std::to_string(archive.entries.size()));
  std::string m;
  for (const auto& [name, n] : methods)
    m += (m.empty() ? "" : ", ") + std::to_string(n) + " " + name;
  info.properties.emplace_back("compression", m);
  info.properties.emplace_back("expanded size", std::to_string(expanded) + " bytes");
  for (size_t i = 0; i < archive.entries.size(); ++i)
    if (is_first_mimetype(archive, i))
      info.properties.emplace_back("mimetype", mimetype_text(archive.entries[i]));
  try {
    refuse_protected(archive);
  } catch (const FormatError& e) {
    info.properties.emplace_back("protection", e.what());
  }
}

}  // namespace lighten
