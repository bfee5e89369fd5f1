#include "formats/video/avi_file.h"

#include <algorithm>
#include <array>

namespace lighten::video {
namespace {

// Motion-JPEG fourccs: every frame is a baseline JPEG (AVRn and AVDJ are Avid's, dmb1 Matrox's).
constexpr std::array kMjpegCodes = {fourcc("MJPG"), fourcc("mjpg"), fourcc("AVRn"),
                                    fourcc("AVDJ"), fourcc("dmb1"), fourcc("IJPG"),
                                    fourcc("JPGL"), fourcc("SLMJ"), fourcc("CJPG")};

bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

uint32_t field32(ByteView in, const RiffChunk& c, size_t at) {
  if (c.data_size() < at + 4) return 0;
  return load_le32(in.data() + c.data_offset() + at);
}

AviStream read_strl(ByteView in, const AviFile& avi, size_t list) {
  AviStream s;
  const auto& chunks = avi.tree.chunks;
  for (size_t i = list + 1; i < chunks[list].end; i = chunks[i].end) {
    const RiffChunk& c = chunks[i];
    if (c.id == fourcc("strh")) {
      if (c.size < 36)
        throw FormatError(Reason::kCorrupt, c.offset, "stream header shorter than 36 bytes");
      s.type = field32(in, c, 0);
      s.handler = field32(in, c, 4);
      s.length = field32(in, c, 32);
    } else if (c.id == fourcc("strf") && s.type == fourcc("vids") && c.size >= 20) {
      s.width = field32(in, c, 4);
      s.height = field32(in, c, 8);
      s.compression = field32(in, c, 16);
    }
  }
  if (s.type == 0) throw FormatError(Reason::kCorrupt, chunks[list].offset, "strl without strh");
  if (s.type == fourcc("vids")) {
    const auto mj = [](uint32_t code) {
      return std::find(kMjpegCodes.begin(), kMjpegCodes.end(), code) != kMjpegCodes.end();
    };
    // biCompression decides what the decoder sees; the handler is often empty or generic.
    s.mjpeg = mj(s.compression);
  }
  return s;
}

}  // namespace

std::string AviStream::codec() const {
  return fourcc_text(type == fourcc("vids") && compression != 0 ? compression : handler);
}

int AviFile::stream_of(const RiffChunk& c) const {
  const uint8_t a = uint8_t(c.id), b = uint8_t(c.id >> 8);
  if (c.is_list || !is_digit(a) || !is_digit(b)) return -1;
  const int n = (a - '0') * 10 + (b - '0');
  return n < int(streams.size()) ? n : -1;
}

uint32_t AviFile::frame_height(const RiffChunk& c) const {
  const int n = stream_of(c);
  return n < 0 ? 0 : streams[size_t(n)].height;
}

bool AviFile::is_mjpeg_frame(const RiffChunk& c) const {
  const int n = stream_of(c);
  if (n < 0 || !streams[n].mjpeg) return false;
  const uint32_t kind = c.id >> 16;
  return kind == (fourcc("00dc") >> 16) || kind == (fourcc("00db") >> 16);
}

AviFile parse_avi(ByteView in) {
  AviFile avi;
  avi.tree = parse_riff(in);
  const auto& chunks = avi.tree.chunks;
  if (chunks[0].list_type != fourcc("AVI "))
    throw FormatError(Reason::kCorrupt, 0, "RIFF form is not AVI");
  long hdrl = -1;
  for (size_t i = 0; i < chunks.size(); i = chunks[i].end) {
    if (i > 0 && chunks[i].list_type != fourcc("AVIX"))
      throw FormatError(Reason::kUnsupportedVariant, chunks[i].offset,
                        "RIFF " + fourcc_text(chunks[i].list_type) + " after the AVI list");
    if (i > 0) avi.open_dml = true;
    for (size_t j = i + 1; j < chunks[i].end; j = chunks[j].end) {
      if (!chunks[j].is_list) continue;
      if (i == 0 && hdrl < 0 && chunks[j].list_type == fourcc("hdrl")) hdrl = long(j);
      if (i == 0 && avi.movi < 0 && chunks[j].list_type == fourcc("movi")) avi.movi = long(j);
    }
  }
  if (hdrl < 0) throw FormatError(Reason::kCorrupt, 0, "AVI without a hdrl header list");
  if (avi.movi < 0) throw FormatError(Reason::kCorrupt, 0, "AVI without a movi list");
  for (size_t i = size_t(hdrl) + 1; i < chunks[hdrl].end; i = chunks[i].end) {
    if (chunks[i].is_list && chunks[i].list_type == fourcc("strl")) {
      if (avi.streams.size() == 100)
        throw FormatError(Reason::kUnsupportedVariant, chunks[i].offset, "over 100 streams");
      avi.streams.push_back(read_strl(in, avi, i));
    }
    if (chunks[i].is_list && chunks[i].list_type == fourcc("odml")) avi.open_dml = true;
  }
  return avi;
}

IndexKind index_kind(ByteView in, const RiffChunk& c) {
  if (c.is_list) return IndexKind::kNone;
  if (c.id == fourcc("idx1")) return IndexKind::kIdx1;
  const bool ix = uint8_t(c.id) == 'i' && uint8_t(c.id >> 8) == 'x';
  if (!ix && c.id != fourcc("indx")) return IndexKind::kNone;
  if (c.size < 24)
    throw FormatError(Reason::kCorrupt, c.offset, "OpenDML index shorter than its header");
  const uint8_t* p = in.data() + c.data_offset();
  const uint16_t longs = uint16_t(p[0] | p[1] << 8);
  const uint8_t sub_type = p[2], type = p[3];
  if (longs == 0 && load_le32(p + 4) == 0) return IndexKind::kNone;  // a zeroed placeholder
  if (type == 0 && longs == 4 && sub_type == 0) return IndexKind::kSuper;
  if (type == 1 && longs == 2 && sub_type == 0) return IndexKind::kStandard;
  throw FormatError(Reason::kUnsupportedVariant, c.offset,
                    "OpenDML index of type " + std::to_string(type) + "/" +
                        std::to_string(sub_type) + " (field or data index) is not supported");
}

}  // namespace lighten::video
