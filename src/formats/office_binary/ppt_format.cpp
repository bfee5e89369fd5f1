#include "formats/office_binary/ppt_format.h"

#include "formats/office_binary/compound_document.h"
#include "formats/office_binary/ppt_pictures.h"

namespace lighten {
namespace {

constexpr std::string_view kDocumentStream = "PowerPoint Document";
constexpr std::string_view kPicturesStream = "Pictures";
constexpr std::string_view kCurrentUserStream = "Current User";

void refuse_encrypted(const cfb::CompoundFile& file) {
  const std::optional<Bytes> current_user = file.read_stream(kCurrentUserStream);
  if (current_user && ppt::current_user_says_encrypted(*current_user))
    throw FormatError(Reason::kEncrypted, 0, "the presentation is encrypted");
  for (const cfb::DirectoryEntry& e : file.entries())
    if (e.path == "EncryptedSummary")
      throw FormatError(Reason::kEncrypted, 0, "the presentation is encrypted");
}

}  // namespace

Outcome optimize_ppt(ByteView input, Context& context) {
  cfb::CompoundFile file = office_binary::open_document(input);
  refuse_encrypted(file);
  const Bytes document = office_binary::required_stream(file, kDocumentStream, "PowerPoint");
  Outcome outcome;
  outcome.kind = Kind::kPpt;
  outcome.bytes_in = input.size();
  const std::optional<Bytes> pictures = file.read_stream(kPicturesStream);
  if (!pictures || pictures->empty()) {
    outcome.reason = Reason::kNoGain;
    outcome.message = "the presentation has no pictures";
    return outcome;
  }
  office_binary::PictureOptimizer optimizer(context, outcome, document);
  std::optional<ppt::PicturesRewrite> rewrite =
      ppt::rewrite_pictures(document, *pictures, optimizer.rewriter());
  if (!rewrite) {
    outcome.reason = Reason::kNoGain;
    outcome.message = "no picture could be made smaller";
    return outcome;
  }
  file.replace_stream(kDocumentStream, std::move(rewrite->document));
  file.replace_stream(kPicturesStream, std::move(rewrite->pictures));
  outcome.bytes = file.serialize();
  outcome.action = Action::kReplaced;
  outcome.detail = optimizer.detail();
  return outcome;
}

Verdict verify_ppt(ByteView input, ByteView output, Context& context) {
  const cfb::CompoundFile before = cfb::CompoundFile::parse(input);
  const cfb::CompoundFile after = cfb::CompoundFile::parse(output);
  const std::string tree = office_binary::compare_storage(
      before, after, {std::string(kDocumentStream), std::string(kPicturesStream)});
  if (!tree.empty()) return {false, tree, {}};
  const auto document_in = before.read_stream(kDocumentStream);
  const auto document_out = after.read_stream(kDocumentStream);
  const auto pictures_in = before.read_stream(kPicturesStream);
  const auto pictures_out = after.read_stream(kPicturesStream);
  if (!document_in || !document_out || !pictures_in || !pictures_out)
    return {false, "the PowerPoint Document or Pictures stream is missing", {}};
  std::vector<officeart::PicturePair> changed;
  const std::string problem =
      ppt::compare_pictures(*document_in, *pictures_in, *document_out, *pictures_out, changed);
  if (!problem.empty()) return {false, problem, {}};
  return office_binary::verify_pictures(changed, context, *document_in);
}

void describe_ppt(ByteView input, FileInfo& info) {
  const cfb::CompoundFile file = cfb::CompoundFile::parse(input);
  const std::optional<Bytes> current_user = file.read_stream(kCurrentUserStream);
  if (current_user && ppt::current_user_says_encrypted(*current_user)) {
    info.properties.emplace_back("protection", "encrypted");
    return;
  }
  const std::optional<Bytes> pictures = file.read_stream(kPicturesStream);
  std::vector<ByteView> records;
  if (pictures)
    for (const ppt::PictureRecord& r : ppt::list_picture_records(*pictures))
      records.push_back(ByteView(*pictures).subspan(r.offset, r.size));
  info.properties.emplace_back("pictures", office_binary::count_blips(records));
  info.properties.emplace_back("pictures stream",
                               std::to_string(pictures ? pictures->size() : 0) + " bytes");
}

}  // namespace lighten
