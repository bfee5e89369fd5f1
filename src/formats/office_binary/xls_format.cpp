#include "formats/office_binary/xls_format.h"

#include "formats/office_binary/compound_document.h"
#include "formats/office_binary/xls_workbook.h"

namespace lighten {
namespace {

constexpr std::string_view kWorkbookStream = "Workbook";

// The drawing group's BLIP records (inside its FBSEs), for `lighten info`.
std::vector<ByteView> drawing_group_blips(ByteView payload) {
  std::vector<ByteView> blips;
  for (const officeart::FbseEntry& e :
       officeart::find_fbse_records(payload, 0, payload.size(), {officeart::kDggContainer}))
    if (e.embedded_offset != 0)
      blips.push_back(payload.subspan(e.embedded_offset, e.embedded_size));
  return blips;
}

}  // namespace

Outcome optimize_xls(ByteView input, Context& context) {
  cfb::CompoundFile file = office_binary::open_document(input);
  if (file.read_stream("Book") && !file.read_stream(kWorkbookStream))
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "Excel 5.0/95 workbooks (BIFF5 'Book' stream) are left alone");
  const Bytes workbook = office_binary::required_stream(file, kWorkbookStream, "Excel");
  Outcome outcome;
  outcome.kind = Kind::kXls;
  outcome.bytes_in = input.size();
  office_binary::PictureOptimizer optimizer(context, outcome,
                                            xls::drawings_without_pictures(workbook));
  std::optional<xls::WorkbookRewrite> rewrite =
      xls::rewrite_pictures(workbook, optimizer.rewriter());
  if (!rewrite) {
    outcome.reason = Reason::kNoGain;
    outcome.message = xls::find_drawing_group(xls::read_workbook(workbook))
                          ? "no picture could be made smaller"
                          : "the workbook has no pictures";
    return outcome;
  }
  file.replace_stream(kWorkbookStream, std::move(rewrite->workbook));
  outcome.bytes = file.serialize();
  outcome.action = Action::kReplaced;
  outcome.detail = optimizer.detail();
  return outcome;
}

Verdict verify_xls(ByteView input, ByteView output, Context& context) {
  const cfb::CompoundFile before = cfb::CompoundFile::parse(input);
  const cfb::CompoundFile after = cfb::CompoundFile::parse(output);
  const std::string tree =
      office_binary::compare_storage(before, after, {std::string(kWorkbookStream)});
  if (!tree.empty()) return {false, tree, {}};
  const auto workbook_in = before.read_stream(kWorkbookStream);
  const auto workbook_out = after.read_stream(kWorkbookStream);
  if (!workbook_in || !workbook_out) return {false, "the Workbook stream is missing", {}};
  std::vector<officeart::PicturePair> changed;
  const std::string problem = xls::compare_workbooks(*workbook_in, *workbook_out, changed);
  if (!problem.empty()) return {false, problem, {}};
  return office_binary::verify_pictures(changed, context,
                                        xls::drawings_without_pictures(*workbook_in));
}

void describe_xls(ByteView input, FileInfo& info) {
  const cfb::CompoundFile file = cfb::CompoundFile::parse(input);
  const std::optional<Bytes> workbook = file.read_stream(kWorkbookStream);
  if (!workbook) {
    info.properties.emplace_back("variant", "no Workbook stream (Excel 5.0/95 or older)");
    return;
  }
  std::vector<xls::Record> records;
  try {
    records = xls::read_workbook(*workbook);
  } catch (const FormatError& e) {
    if (e.reason() != Reason::kEncrypted) throw;
    info.properties.emplace_back("protection", "encrypted (FilePass)");
    return;
  }
  size_t sheets = 0;
  for (const xls::Record& r : records) sheets += r.type == xls::kBoundSheet;
  info.properties.emplace_back("sheets", std::to_string(sheets));
  const std::optional<xls::Chain> chain = xls::find_drawing_group(records);
  Bytes payload;
  if (chain)
    for (size_t i = chain->first; i < chain->last; ++i)
      payload.insert(payload.end(), workbook->begin() + records[i].offset + 4,
                     workbook->begin() + records[i].end());
  info.properties.emplace_back("pictures",
                               office_binary::count_blips(drawing_group_blips(payload)));
}

}  // namespace lighten
