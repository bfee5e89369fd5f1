#include "formats/office_binary/xls_workbook.h"

#include <algorithm>
#include <functional>

#include "formats/office_binary/picture_effects.h"

namespace lighten::xls {
namespace {

uint16_t get_u16le(ByteView b, size_t at) { return uint16_t(b[at] | b[at + 1] << 8); }

// Where the stream's trailing zero bytes (padding) begin.
size_t padding_start(ByteView b) {
  size_t end = b.size();
  while (end > 0 && b[end - 1] == 0) --end;
  return end;
}

// Calls `visit(field_offset)` for each absolute stream position in the payload of `r`.
void for_each_position(const Record& r, const std::function<void(size_t)>& visit) {
  const size_t payload = r.offset + 4;
  if (r.type == kBoundSheet && r.length >= 4) {
    visit(payload);  // lbPlyPos
  } else if (r.type == kIndex && r.length >= 16) {
    visit(payload + 12);                                                    // ibXF
    for (size_t at = 16; at + 4 <= r.length; at += 4) visit(payload + at);  // rgibRw
  } else if (r.type == kExtSst && r.length >= 2) {
    for (size_t at = 2; at + 8 <= r.length; at += 8) visit(payload + at);  // ISSTInf.ib
  }
}

// The index of the record holding stream position `position`, or records.size() for none.
size_t record_at(const std::vector<Record>& records, size_t position) {
  const auto it = std::upper_bound(records.begin(), records.end(), position,
                                   [](size_t p, const Record& r) { return p < r.offset; });
  if (it == records.begin()) return records.size();
  const Record& r = *(it - 1);
  return position < r.end() ? size_t(it - 1 - records.begin()) : records.size();
}

Bytes chain_payload(ByteView workbook, const std::vector<Record>& records, const Chain& chain) {
  Bytes payload;
  for (size_t i = chain.first; i < chain.last; ++i)
    payload.insert(payload.end(), workbook.begin() + records[i].offset + 4,
                   workbook.begin() + records[i].end());
  return payload;
}

}  // namespace

std::vector<Record> read_workbook(ByteView workbook) {
  std::vector<Record> records;
  const size_t padding = padding_start(workbook);
  size_t pos = 0;
  while (pos < padding) {
    if (workbook.size() - pos < 4)
      throw FormatError(Reason::kTruncated, pos, "a Workbook record header is cut short");
    Record r{pos, get_u16le(workbook, pos), get_u16le(workbook, pos + 2)};
    if (r.end() > workbook.size())
      throw FormatError(Reason::kTruncated, pos,
                        "a Workbook record of type " + std::to_string(r.type) +
                            " runs past the end of the stream");
    records.push_back(r);
    pos = r.end();
  }
  if (records.empty() || records[0].type != kBof || records[0].length < 4)
    throw FormatError(Reason::kCorrupt, 0, "the Workbook stream does not start with a BOF record");
  if (get_u16le(workbook, 4) != kBiff8)
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "only BIFF8 workbooks (Excel 97-2003) are rewritten");
  for (const Record& r : records) {
    if (r.type == kEof) break;  // FilePass can only be in the globals substream
    if (r.type == kFilePass)
      throw FormatError(Reason::kEncrypted, r.offset, "the workbook is encrypted (FilePass)");
  }
  return records;
}

Bytes drawings_without_pictures(ByteView workbook) {
  const std::vector<Record> records = read_workbook(workbook);
  Bytes joined;
  bool in_drawing = false;
  for (const Record& r : records) {
    in_drawing = r.type == kDrawing || (in_drawing && r.type == kContinue);
    if (in_drawing)
      joined.insert(joined.end(), workbook.begin() + r.offset + 4, workbook.begin() + r.end());
  }
  // The drawing group's own property tables hold the defaults of every shape.
  if (const std::optional<Chain> chain = find_drawing_group(records)) {
    const Bytes group = chain_payload(workbook, records, *chain);
    for (size_t at = 0; at < group.size();) {
      const officeart::RecordHeader top = officeart::read_header(group, at, group.size());
      const size_t end = at + top.total_size();
      if (top.type == officeart::kDggContainer && top.is_container()) {
        for (size_t child = at + officeart::kHeaderSize; child < end;) {
          const officeart::RecordHeader h = officeart::read_header(group, child, end);
          if (h.type == officeart::kFopt || h.type == officeart::kSecondaryFopt ||
              h.type == officeart::kTertiaryFopt)
            joined.insert(joined.end(), group.begin() + child,
                          group.begin() + child + h.total_size());
          child += h.total_size();
        }
      }
      at = end;
    }
  }
  return joined;
}

std::optional<Chain> find_drawing_group(const std::vector<Record>& records) {
  std::optional<Chain> chain;
  for (size_t i = 0; i < records.size() && records[i].type != kEof; ++i) {
    if (records[i].type != kDrawingGroup) continue;
    if (chain)
      throw FormatError(Reason::kUnsupportedVariant, records[i].offset,
                        "the workbook has more than one drawing group");
    size_t last = i + 1;
    while (last < records.size() &&
           (records[last].type == kDrawingGroup || records[last].type == kContinue))
      ++last;
    chain = Chain{i, last};
    i = last - 1;
  }
  return chain;
}

std::optional<WorkbookRewrite> rewrite_pictures(ByteView workbook,
                                                const officeart::PictureRewriter& rewriter) {
  const std::vector<Record> records = read_workbook(workbook);
  const std::optional<Chain> chain = find_drawing_group(records);
  if (!chain) return std::nullopt;
  WorkbookRewrite out;
  const Bytes payload = chain_payload(workbook, records, *chain);
  const std::optional<Bytes> drawing_group =
      officeart::rewrite_embedded_blips(payload, rewriter, out.changed);
  if (!drawing_group) return std::nullopt;

  const size_t chain_start = records[chain->first].offset;
  const size_t chain_end = records[chain->last - 1].end();
  out.workbook.assign(workbook.begin(), workbook.begin() + chain_start);
  // Each chunk keeps the record type of the record at its place (Excel writes repeated
  // MsoDrawingGroup records, the specification Continue); extra chunks are Continue.
  for (size_t at = 0, k = 0; at < drawing_group->size(); at += kMaxPayload, ++k) {
    const size_t n = std::min(kMaxPayload, drawing_group->size() - at);
    const size_t index = chain->first + k;
    officeart::append_u16le(out.workbook, index < chain->last ? records[index].type : kContinue);
    officeart::append_u16le(out.workbook, uint16_t(n));
    out.workbook.insert(out.workbook.end(), drawing_group->begin() + at,
                        drawing_group->begin() + at + n);
  }
  const size_t new_chain_end = out.workbook.size();
  out.workbook.insert(out.workbook.end(), workbook.begin() + chain_end, workbook.end());

  const size_t records_end = records.back().end();
  for (const Record& r : records) {
    if (r.offset >= chain_start && r.offset < chain_end) continue;
    const size_t moved = r.offset >= chain_end ? r.offset - chain_end + new_chain_end : r.offset;
    for_each_position(r, [&](size_t field) {
      const uint32_t position = officeart::get_u32le(workbook, field);
      if (position >= records_end)
        throw FormatError(Reason::kCorrupt, field,
                          "a stream position (" + std::to_string(position) +
                              ") points past the Workbook's records");
      if (position >= chain_start && position < chain_end)
        throw FormatError(Reason::kCorrupt, field,
                          "a stream position points into the drawing group");
      const size_t fixed = position >= chain_end ? position - chain_end + new_chain_end : position;
      officeart::put_u32le(out.workbook, moved + (field - r.offset), uint32_t(fixed));
    });
  }
  return out;
}

std::string compare_workbooks(ByteView in, ByteView out,
                              std::vector<officeart::PicturePair>& changed) {
  try {
    const std::vector<Record> a = read_workbook(in);
    const std::vector<Record> b = read_workbook(out);
    const std::optional<Chain> ca = find_drawing_group(a);
    const std::optional<Chain> cb = find_drawing_group(b);
    if (!ca || !cb) return "the drawing group appeared or disappeared";
    if (ca->first != cb->first || a.size() - ca->last != b.size() - cb->last)
      return "records outside the drawing group were added or removed";
    for (size_t i = cb->first; i < cb->last; ++i)
      if (b[i].length > kMaxPayload) return "a drawing-group record exceeds 8224 bytes";
    if (b[cb->first].type != kDrawingGroup) return "the drawing group lost its first record";
    // Index of b's record matching a's record i (outside the chains).
    const auto counterpart = [&](size_t i) { return i < ca->first ? i : i - ca->last + cb->last; };
    for (size_t i = 0; i < a.size(); ++i) {
      if (i >= ca->first && i < ca->last) continue;
      const Record& x = a[i];
      const Record& y = b[counterpart(i)];
      if (x.type != y.type || x.length != y.length)
        return "record " + std::to_string(i) + " changed type or length";
      Bytes expected(in.begin() + x.offset, in.begin() + x.end());
      std::string problem;
      for_each_position(x, [&](size_t field) {
        const size_t position = officeart::get_u32le(in, field);
        const size_t j = record_at(a, position);
        if (j == a.size() || (j >= ca->first && j < ca->last)) {
          problem = "a stream position of the input points nowhere";
          return;
        }
        const size_t target = b[counterpart(j)].offset + (position - a[j].offset);
        officeart::put_u32le(expected, field - x.offset, uint32_t(target));
      });
      if (!problem.empty()) return problem;
      if (!std::equal(expected.begin(), expected.end(), out.begin() + y.offset,
                      out.begin() + y.end()))
        return "record " + std::to_string(i) + " (type " + std::to_string(x.type) +
               ") differs beyond its stream positions";
    }
    const size_t tail_a = a.back().end(), tail_b = b.back().end();
    if (!std::equal(in.begin() + tail_a, in.end(), out.begin() + tail_b, out.end()))
      return "the padding after the last record changed";
    const Bytes pa = chain_payload(in, a, *ca);
    const Bytes pb = chain_payload(out, b, *cb);
    const std::string problem = officeart::compare_embedded_blips(pa, pb, changed);
    if (!problem.empty()) return problem;
  } catch (const FormatError& e) {
    return std::string("the Workbook streams do not parse: ") + e.what();
  }
  return {};
}

}  // namespace lighten::xls
