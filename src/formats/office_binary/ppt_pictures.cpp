#include "formats/office_binary/ppt_pictures.h"

#include <algorithm>

namespace lighten::ppt {
namespace {

using officeart::FbseEntry;
using officeart::RecordHeader;

constexpr uint32_t kEncryptedToken = 0xF3D1C4DF;

// An FBSE refers to the Pictures stream when it has a size and no BLIP of its own.
bool refers_to_pictures(const FbseEntry& e) { return e.blip_size != 0 && e.embedded_offset == 0; }

// The index of the picture record an FBSE points at; throws when there is none of its size.
size_t referenced_record(const FbseEntry& e, const std::vector<PictureRecord>& records) {
  const auto it =
      std::lower_bound(records.begin(), records.end(), e.delay_offset,
                       [](const PictureRecord& r, uint32_t offset) { return r.offset < offset; });
  if (it == records.end() || it->offset != e.delay_offset || it->size != e.blip_size)
    throw FormatError(Reason::kUnsupportedVariant, e.record_offset,
                      "a BLIP store entry points at byte " + std::to_string(e.delay_offset) +
                          " of the Pictures stream, where no picture of " +
                          std::to_string(e.blip_size) + " bytes starts");
  return size_t(it - records.begin());
}

}  // namespace

bool current_user_says_encrypted(ByteView current_user) {
  // CurrentUserAtom: an 8-byte record header, size (4 bytes), then headerToken.
  return current_user.size() >= 16 && officeart::get_u32le(current_user, 12) == kEncryptedToken;
}

std::vector<FbseEntry> find_blip_store(ByteView document) {
  size_t pos = 0;
  while (pos < document.size()) {
    const RecordHeader h = officeart::read_header(document, pos, document.size());
    if (h.type == kCryptSession)
      throw FormatError(Reason::kEncrypted, pos, "the presentation is encrypted");
    pos += h.total_size();
  }
  return officeart::find_fbse_records(
      document, 0, document.size(),
      {kDocumentContainer, kDrawingGroupContainer, officeart::kDggContainer});
}

std::vector<PictureRecord> list_picture_records(ByteView pictures) {
  std::vector<PictureRecord> records;
  size_t pos = 0;
  while (pos < pictures.size()) {
    const RecordHeader h = officeart::read_header(pictures, pos, pictures.size());
    records.push_back({pos, h.total_size()});
    pos += h.total_size();
  }
  return records;
}

std::optional<PicturesRewrite> rewrite_pictures(ByteView document, ByteView pictures,
                                                const officeart::PictureRewriter& rewriter) {
  const std::vector<FbseEntry> store = find_blip_store(document);
  const std::vector<PictureRecord> records = list_picture_records(pictures);
  std::vector<std::pair<const FbseEntry*, size_t>> references;  // FBSE, record index
  for (const FbseEntry& e : store)
    if (refers_to_pictures(e)) references.emplace_back(&e, referenced_record(e, records));

  PicturesRewrite out;
  out.pictures.reserve(pictures.size());
  std::vector<size_t> new_offset(records.size());
  std::vector<size_t> new_size(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const ByteView record = pictures.subspan(records[i].offset, records[i].size);
    const std::optional<Bytes> blip = officeart::rewrite_raster_blip(
        record, rewriter, "Pictures/" + std::to_string(records[i].offset));
    new_offset[i] = out.pictures.size();
    if (blip) {
      out.pictures.insert(out.pictures.end(), blip->begin(), blip->end());
      ++out.changed;
    } else {
      out.pictures.insert(out.pictures.end(), record.begin(), record.end());
    }
    new_size[i] = out.pictures.size() - new_offset[i];
  }
  if (out.changed == 0) return std::nullopt;
  out.document.assign(document.begin(), document.end());
  for (const auto& [entry, index] : references) {
    officeart::put_u32le(out.document, entry->record_offset + FbseEntry::kSizeField,
                         uint32_t(new_size[index]));
    officeart::put_u32le(out.document, entry->record_offset + FbseEntry::kDelayField,
                         uint32_t(new_offset[index]));
  }
  return out;
}

std::string compare_pictures(ByteView document_in, ByteView pictures_in, ByteView document_out,
                             ByteView pictures_out, std::vector<officeart::PicturePair>& changed) {
  if (document_in.size() != document_out.size())
    return "the PowerPoint Document stream changed length";
  try {
    const std::vector<PictureRecord> a = list_picture_records(pictures_in);
    const std::vector<PictureRecord> b = list_picture_records(pictures_out);
    if (a.size() != b.size()) return "the Pictures stream holds a different number of records";
    for (size_t i = 0; i < a.size(); ++i) {
      const ByteView x = pictures_in.subspan(a[i].offset, a[i].size);
      const ByteView y = pictures_out.subspan(b[i].offset, b[i].size);
      if (std::equal(x.begin(), x.end(), y.begin(), y.end())) continue;
      const ByteView image_x = officeart::raster_blip_image(x);
      const ByteView image_y = officeart::raster_blip_image(y);
      if (image_x.empty() || image_y.empty())
        return "picture record " + std::to_string(i) + " changed but is no JPEG or PNG BLIP";
      const size_t prefix = x.size() - image_x.size();
      if (y.size() - image_y.size() != prefix || !std::equal(x.begin(), x.begin() + 4, y.begin()) ||
          !std::equal(x.begin() + 8, x.begin() + prefix, y.begin() + 8))
        return "picture record " + std::to_string(i) + " changed its type, UID or tag";
      changed.push_back({Bytes(image_x.begin(), image_x.end()),
                         Bytes(image_y.begin(), image_y.end()),
                         "Pictures/" + std::to_string(a[i].offset)});
    }
    // The output's document stream must be the input's with each referencing FBSE pointing at
    // the same picture record, now at its new place.
    Bytes expected(document_in.begin(), document_in.end());
    for (const FbseEntry& e : find_blip_store(document_in)) {
      if (!refers_to_pictures(e)) continue;
      const size_t index = referenced_record(e, a);
      officeart::put_u32le(expected, e.record_offset + FbseEntry::kSizeField,
                           uint32_t(b[index].size));
      officeart::put_u32le(expected, e.record_offset + FbseEntry::kDelayField,
                           uint32_t(b[index].offset));
    }
    if (!std::equal(expected.begin(), expected.end(), document_out.begin(), document_out.end()))
      return "the PowerPoint Document stream differs beyond the BLIP store's offsets";
  } catch (const FormatError& e) {
    return std::string("the streams do not parse: ") + e.what();
  }
  return {};
}

}  // namespace lighten::ppt
