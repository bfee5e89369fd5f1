#include "formats/hwp/hwp_format.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>

#include "codecs/deflate.h"
#include "core/content_key.h"
#include "core/worst_quality.h"
#include "formats/cfb/compound_file.h"
#include "formats/hwp/hwp_document.h"
#include "formats/hwp/hwp_records.h"

namespace lighten {
namespace {

using hwp::StreamPlan;
using hwp::StreamRole;

// Deflate bombs are refused: everything inflated from one document shares one budget.
class ExpansionBudget {
 public:
  ExpansionBudget(size_t input_size, const Limits& limits)
      : limit_(std::min<uint64_t>(
            limits.max_expanded_bytes,
            std::max<uint64_t>(64u << 20, uint64_t(limits.max_expansion_ratio * input_size)))) {}
  size_t remaining() const { return size_t(limit_ - used_); }
  void spend(size_t n) { used_ = std::min<uint64_t>(limit_, used_ + n); }

 private:
  uint64_t limit_;
  uint64_t used_ = 0;
};

// Inflates a deflated stream within the budget; a stream that must inflate and does not makes
// the document corrupt.
std::optional<hwp::Inflated> inflate_planned(const StreamPlan& plan, ByteView raw,
                                             ExpansionBudget& budget) {
  std::optional<hwp::Inflated> inflated;
  try {
    inflated = hwp::inflate_stream(raw, budget.remaining());
  } catch (const FormatError&) {
    throw FormatError(Reason::kLimitExceeded, 0,
                      plan.path + " inflates past the expansion budget (a deflate bomb?)");
  }
  if (!inflated && plan.must_inflate)
    throw FormatError(Reason::kCorrupt, 0, plan.path + " is marked deflated but does not inflate");
  if (inflated) budget.spend(inflated->content.size());
  return inflated;
}

// Already-compressed media gain little from another deflate pass below the highest efforts.
bool worth_redeflating(Kind kind, int effort) {
  const bool media = kind == Kind::kJpeg || kind == Kind::kPng || kind == Kind::kGif ||
                     kind == Kind::kWebp || kind == Kind::kMp4 || kind == Kind::kHeif;
  return !media || effort >= 9;
}

struct Tally {
  std::map<Kind, int> optimised;
  int redeflated = 0;
  std::vector<std::string> warnings;
  // What the engine gave for items already handed to it, by their 128-bit hash and size (as the
  // engine keys its own notes): Hangul often stores one picture many times, and each copy should
  // come out the same without optimising it again. Only results are kept, counted while the
  // document is worked on; a copy of every picture would hold the document's whole expansion.
  std::map<ContentKey, std::optional<Bytes>> seen;
  std::vector<MemoryHold> seen_holds;
};

// The engine's output for an embedded image (under `pictures`), or nullopt to keep it.
std::optional<Bytes> optimise_image(const Bytes& content, Kind kind, const std::string& path,
                                    Context& context, const Policy& pictures, Tally& tally) {
  const ContentKey key = content_key(content);
  if (const auto it = tally.seen.find(key); it != tally.seen.end()) return it->second;
  Outcome item = context.optimize_embedded_under(content, path, pictures);
  for (std::string& w : item.warnings) tally.warnings.push_back(path + ": " + w);
  std::optional<Bytes> result;
  if (item.replaced() && sniff(item.bytes) == kind) {
    result = std::move(item.bytes);
    tally.seen_holds.push_back(context.hold_memory(result->size()));
  }
  tally.seen.emplace(key, result);
  return result;
}

// One stream's new bytes, or nullopt to keep it as it is.
std::optional<Bytes> optimise_stream(const StreamPlan& plan, ByteView raw, Context& context,
                                     const Policy& pictures, ExpansionBudget& budget,
                                     Tally& tally) {
  const int effort = context.policy().effort;
  if (plan.role == StreamRole::kFileHeader || plan.role == StreamRole::kOther) return std::nullopt;
  if (plan.role == StreamRole::kRecords && !plan.deflated) {
    hwp::check_records(raw);  // a damaged record stream is a damaged document
    return std::nullopt;
  }
  Bytes content;
  hwp::Trailer trailer = hwp::Trailer::kNone;
  MemoryHold hold;  // an inflated stream and its deflated copy or optimised picture
  if (plan.deflated) {
    std::optional<hwp::Inflated> inflated = inflate_planned(plan, raw, budget);
    if (!inflated) return std::nullopt;  // not deflated after all: carried as it is
    if (!hwp::writable(inflated->trailer)) {
      if (plan.must_inflate && inflated->trailer == hwp::Trailer::kDamaged)
        throw FormatError(Reason::kCorrupt, 0, hwp::damaged_trailer_text(plan.path));
      if (plan.must_inflate)
        throw FormatError(Reason::kUnsupportedVariant, 0,
                          plan.path + " ends in bytes of unknown meaning after its deflate data");
      return std::nullopt;
    }
    content = std::move(inflated->content);
    trailer = inflated->trailer;
    hold = context.hold_memory(2 * uint64_t(content.size()));
  } else {
    content.assign(raw.begin(), raw.end());
  }
  if (plan.role == StreamRole::kRecords) hwp::check_records(content);

  const Kind kind = sniff(content);
  bool changed = false;
  if (plan.may_hold_image && kind != Kind::kUnknown) {
    if (std::optional<Bytes> image =
            optimise_image(content, kind, plan.path, context, pictures, tally)) {
      content = std::move(*image);
      changed = true;
    }
  }
  // A picture counts as optimised only once its stream is written.
  if (!plan.deflated) {
    if (!changed) return std::nullopt;
    ++tally.optimised[kind];
    return content;
  }
  if (!changed && !worth_redeflating(kind, effort)) return std::nullopt;
  Bytes packed =
      hwp::deflate_stream(content, trailer, effort, [&context] { return context.out_of_time(); });
  if (packed.size() >= raw.size()) return std::nullopt;
  ++(changed ? tally.optimised[kind] : tally.redeflated);
  return packed;
}

std::string describe_tally(const Tally& tally, bool lossless_for_effects) {
  std::string detail;
  for (const auto& [k, n] : tally.optimised)
    detail += (detail.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(kind_name(k));
  if (!detail.empty()) detail += " optimised";
  if (tally.redeflated)
    detail +=
        (detail.empty() ? "" : "; ") + std::to_string(tally.redeflated) + " streams re-deflated";
  if (detail.empty()) detail = "compound file re-laid out";
  if (lossless_for_effects)
    detail +=
        "; pictures optimised losslessly (the document shows pictures in black and white, "
        "as a dither pattern or with raised contrast, or in a fill lighten cannot read)";
  return detail;
}

// The parsed input as both the optimiser and the verifier need it.
struct Document {
  cfb::CompoundFile file;
  hwp::FileHeader header;
  std::vector<StreamPlan> plans;
  Policy pictures;  // what its pictures are optimised and verified under
};

// Black and white, an 8x8 dither pattern (which flips dots as the threshold does) or raised
// contrast: changes within the floor would show.
bool shows_through_effects(const hwp::PictureLook& look) {
  return look.contrast > 0 || look.effect == hwp::PictureLook::kBlackAndWhite ||
         look.effect == hwp::PictureLook::kPattern;
}
// A fill whose look could not be read is taken to show its picture so.
bool shows_through_effects(const hwp::FillLook& fill) {
  return fill.unread || shows_through_effects(fill.look);
}

// Whether a picture shape or a drawing shape's image fill in the body shows its picture in black
// and white or with raised contrast, as ZIP documents' HWPX BLACK_WHITE and <hp:img contrast>.
// Sections that do not inflate are left to the stream loop to judge. The scan has a budget of its
// own (a copy): the stream loop inflates the sections again, and a document that fitted the budget
// before must still fit it.
bool shows_pictures_through_effects(const Document& d, ExpansionBudget budget) {
  for (const StreamPlan& plan : d.plans) {
    if (plan.role != StreamRole::kRecords || !plan.path.starts_with("BodyText/")) continue;
    const Bytes raw = *d.file.read_stream(plan.path);
    Bytes section;
    if (plan.deflated) {
      std::optional<hwp::Inflated> inflated = inflate_planned(plan, raw, budget);
      if (!inflated) continue;
      section = std::move(inflated->content);
    } else {
      section = raw;
    }
    for (const hwp::PictureLook& look : hwp::picture_looks(section))
      if (shows_through_effects(look)) return true;
    for (const hwp::FillLook& fill : hwp::shape_fill_looks(section))
      if (shows_through_effects(fill)) return true;
  }
  return false;
}

// The same for the image fills of DocInfo's border and background definitions and its picture
// bullets.
bool fills_show_pictures_through_effects(ByteView doc_info) {
  for (const hwp::FillLook& fill : hwp::border_fill_looks(doc_info))
    if (shows_through_effects(fill)) return true;
  for (const hwp::FillLook& bullet : hwp::bullet_looks(doc_info))
    if (shows_through_effects(bullet)) return true;
  return false;
}

Document open_document(ByteView input, const Policy& policy, ExpansionBudget& budget) {
  Document d{cfb::CompoundFile::parse(input), {}, {}, policy};
  d.header = hwp::read_file_header(d.file);
  hwp::refuse_protected(d.header, d.file);
  const Bytes doc_info = hwp::doc_info_records(d.file, d.header, budget.remaining());
  d.plans = hwp::plan_streams(d.file, d.header, hwp::bin_data_items(doc_info));
  if (policy.mode != Mode::kLossless &&
      (fills_show_pictures_through_effects(doc_info) || shows_pictures_through_effects(d, budget)))
    d.pictures.mode = Mode::kLossless;
  return d;
}

}  // namespace

Outcome optimize_hwp(ByteView input, Context& context) {
  ExpansionBudget budget(input.size(), context.policy().limits);
  Document doc = open_document(input, context.policy(), budget);
  Tally tally;
  for (const StreamPlan& plan : doc.plans) {
    if (context.out_of_time())
      throw FormatError(Reason::kLimitExceeded, 0, "the time budget ran out");
    const Bytes raw = *doc.file.read_stream(plan.path);
    std::optional<Bytes> replacement =
        optimise_stream(plan, raw, context, doc.pictures, budget, tally);
    if (replacement) doc.file.replace_stream(plan.path, std::move(*replacement));
  }
  Outcome outcome;
  outcome.kind = Kind::kHwp;
  outcome.bytes_in = input.size();
  outcome.warnings = std::move(tally.warnings);
  Bytes out = doc.file.serialize();
  if (tally.optimised.empty() && tally.redeflated == 0 && out.size() >= input.size()) {
    outcome.reason = Reason::kNoGain;
    outcome.message = "no stream could be made smaller";
    return outcome;
  }
  outcome.action = Action::kReplaced;
  outcome.reason = Reason::kOptimized;
  outcome.detail = describe_tally(tally, doc.pictures.mode != context.policy().mode);
  outcome.bytes_out = out.size();
  outcome.bytes = std::move(out);
  return outcome;
}

Verdict verify_hwp(ByteView input, ByteView output, Context& context) {
  // The input and the output each get the budget the optimiser had.
  ExpansionBudget budget(input.size(), context.policy().limits);
  ExpansionBudget output_budget(input.size(), context.policy().limits);
  const Document a = open_document(input, context.policy(), budget);
  const cfb::CompoundFile b = cfb::CompoundFile::parse(output);
  if (a.file.major_version() != b.major_version())
    return {false, "the compound file version changed", {}};
  if (a.file.entries().size() != b.entries().size())
    return {false, "the number of directory entries changed", {}};
  if (a.file.trailing() != b.trailing())
    return {false, "the bytes after the last sector changed", {}};
  for (size_t i = 0; i < b.entries().size(); ++i) {
    const cfb::DirectoryEntry& x = a.file.entries()[i];
    const cfb::DirectoryEntry& y = b.entries()[i];
    if (x.path != y.path || x.type != y.type || a.file.entry_record(i) != b.entry_record(i))
      return {false, "directory entry " + std::to_string(i) + " (" + x.path + ") changed", {}};
  }
  QualityFigures quality;  // the worst picture's
  quality.pixels_identical = true;
  for (const StreamPlan& plan : a.plans) {
    const Bytes before = *a.file.read_stream(plan.path);
    const std::optional<Bytes> after = b.read_stream(plan.path);
    if (!after) return {false, plan.path + " is missing", {}};
    if (before == *after) continue;
    const bool opaque = plan.role == StreamRole::kFileHeader || plan.role == StreamRole::kOther;
    if (opaque) return {false, plan.path + " must stay byte-identical", {}};
    Bytes x = before, y = *after;
    MemoryHold hold;  // both streams inflated
    if (plan.deflated) {
      // zlib inflates what libdeflate or zopfli wrote.
      const std::optional<hwp::Inflated> ix = hwp::inflate_stream(before, budget.remaining());
      if (!ix || !hwp::writable(ix->trailer))
        return {false, plan.path + " could not be rewritten yet changed", {}};
      budget.spend(ix->content.size());
      hold = context.hold_memory(2 * uint64_t(ix->content.size()));
      const std::optional<hwp::Inflated> iy =
          hwp::inflate_stream(*after, output_budget.remaining());
      if (!iy) return {false, plan.path + " no longer inflates", {}};
      output_budget.spend(iy->content.size());
      if (ix->trailer != iy->trailer) return {false, plan.path + " lost or gained its trailer", {}};
      x = std::move(ix->content);
      y = std::move(iy->content);
    }
    if (x == y) continue;
    if (!plan.may_hold_image) return {false, "the content of " + plan.path + " changed", {}};
    const Verdict item = context.verify_embedded_under(x, y, a.pictures);
    if (!item.ok) return {false, plan.path + ": " + item.problem, {}};
    fold_worst(quality, item.quality);
  }
  Verdict v;
  v.ok = true;
  v.quality = quality;
  return v;
}

void describe_hwp(ByteView input, FileInfo& info) {
  const cfb::CompoundFile file = cfb::CompoundFile::parse(input);
  const hwp::FileHeader header = hwp::read_file_header(file);
  info.properties.emplace_back("version", header.version_text());
  info.properties.emplace_back("compressed", header.compressed() ? "yes" : "no");
  info.properties.emplace_back("streams", std::to_string(file.stream_paths().size()));
  try {
    hwp::refuse_protected(header, file);
  } catch (const FormatError& e) {
    info.properties.emplace_back("protection", e.what());
    return;
  }
  const Bytes doc_info = hwp::doc_info_records(file, header, 64u << 20);
  std::map<std::string, int> kinds;
  for (const hwp::BinDataItem& item : hwp::bin_data_items(doc_info))
    ++kinds[item.type == hwp::BinDataType::kLink      ? "link"
            : item.type == hwp::BinDataType::kStorage ? "OLE storage"
                                                      : item.extension];
  std::string list;
  for (const auto& [ext, n] : kinds)
    list += (list.empty() ? "" : ", ") + std::to_string(n) + " " + ext;
  info.properties.emplace_back("BinData items", list.empty() ? "none" : list);
}

}  // namespace lighten
