#include "formats/office_binary/compound_document.h"

#include <algorithm>

#include "core/cfb_names.h"
#include "core/worst_quality.h"
#include "formats/office_binary/picture_effects.h"

namespace lighten::office_binary {
namespace {

// Signature streams of the Office 97-2003 formats (XAdES, and the older binary signature).
bool is_signature(const std::string& path) {
  const std::string top = path.substr(0, path.find('/'));
  return top == "_xmlsignatures" || top == "_signatures" ||
         top ==
             "\x05"
             "DigitalSignature";
}

}  // namespace

cfb::CompoundFile open_document(ByteView input) {
  cfb::CompoundFile file = cfb::CompoundFile::parse(input);
  for (const cfb::DirectoryEntry& e : file.entries())
    if (is_signature(e.path))
      throw FormatError(Reason::kSigned, 0,
                        "the document is digitally signed (" + e.path +
                            "); changing any stream would break the signature");
  return file;
}

Bytes required_stream(const cfb::CompoundFile& file, std::string_view path, std::string_view kind) {
  std::optional<Bytes> stream = file.read_stream(path);
  if (!stream)
    throw FormatError(
        Reason::kUnsupportedVariant, 0,
        "no '" + std::string(path) + "' stream at the root of this " + std::string(kind) + " file");
  return std::move(*stream);
}

Policy picture_policy(const Policy& policy, ByteView drawings) {
  Policy pictures = policy;
  if (pictures.mode != Mode::kLossless && officeart::shows_pictures_through_effects(drawings))
    pictures.mode = Mode::kLossless;
  return pictures;
}

officeart::PictureRewriter PictureOptimizer::rewriter() {
  return [this](ByteView image, const std::string& name) -> std::optional<Bytes> {
    if (context_.out_of_time())
      throw FormatError(Reason::kLimitExceeded, 0, "the time budget ran out");
    Outcome item = context_.optimize_embedded_under(image, name, pictures_);
    for (auto& w : item.warnings) outcome_.warnings.push_back(name + ": " + w);
    if (!item.replaced() || item.bytes.size() >= image.size()) return std::nullopt;
    ++optimised_[sniff(image)];
    return std::move(item.bytes);
  };
}

std::string PictureOptimizer::detail() const {
  std::string detail;
  for (const auto& [kind, n] : optimised_)
    detail += (detail.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(kind_name(kind));
  if (!detail.empty()) detail += " optimised";
  if (pictures_.mode != context_.policy().mode)
    detail += (detail.empty() ? "" : "; ") +
              std::string(
                  "pictures optimised losslessly (the document shows pictures through a "
                  "colour key, a black-and-white threshold or raised contrast)");
  return detail;
}

std::string compare_storage(const cfb::CompoundFile& before, const cfb::CompoundFile& after,
                            const std::vector<std::string>& changed) {
  const auto& a = before.entries();
  const auto& b = after.entries();
  if (a.size() != b.size()) return "the storage tree has a different number of entries";
  if (before.trailing() != after.trailing()) return "the bytes after the last sector changed";
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].path != b[i].path || a[i].type != b[i].type)
      return "storage entry " + std::to_string(i) + " (" + a[i].path + ") changed";
    if (a[i].type != cfb::EntryType::kStream) continue;
    const std::string folded = cfb_folded_name(a[i].path);
    if (std::any_of(changed.begin(), changed.end(),
                    [&](const std::string& c) { return cfb_folded_name(c) == folded; }))
      continue;
    if (before.read_stream(a[i].path) != after.read_stream(b[i].path))
      return "stream " + a[i].path + " changed";
  }
  return {};
}

Verdict verify_pictures(const std::vector<officeart::PicturePair>& pictures, Context& context,
                        ByteView drawings) {
  Verdict verdict;
  verdict.quality.pixels_identical = true;
  const Policy policy = picture_policy(context.policy(), drawings);
  for (const auto& p : pictures) {
    const Verdict item = context.verify_embedded_under(p.before, p.after, policy);
    if (!item.ok) return {false, p.name + ": " + item.problem, {}};
    fold_worst(verdict.quality, item.quality);
  }
  verdict.ok = true;
  return verdict;
}

std::string count_blips(const std::vector<ByteView>& blip_records) {
  std::map<std::string, int> counts;
  for (ByteView record : blip_records) {
    const ByteView image = officeart::raster_blip_image(record);
    ++counts[image.empty() ? "other" : std::string(kind_name(sniff(image)))];
  }
  std::string out;
  for (const auto& [name, n] : counts)
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + name;
  return out.empty() ? "none" : out;
}

}  // namespace lighten::office_binary
