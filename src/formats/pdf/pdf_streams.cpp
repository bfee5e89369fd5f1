#include "formats/pdf/pdf_streams.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string_view>

#include "codecs/deflate.h"
#include "formats/jpeg/markers.h"
#include "formats/jpeg/metadata.h"
#include "formats/pdf/pdf_document.h"
#include "formats/pdf/pdf_flate_jpeg.h"
#include "formats/pdf/pdf_predictors.h"
#include "quality/calibrated_space.h"
#include "quality/colour_profile.h"

namespace lighten::pdf {
namespace {

// Unfiltered streams shorter than this cannot pay for the "/Filter /FlateDecode" they would need.
constexpr size_t kMinStreamToCompress = 64;
constexpr size_t kFilterKeyCost = 24;
// "/DecodeParms << /Predictor 15 /Colors 3 /BitsPerComponent 8 /Columns 1000 >>" in the dict.
constexpr size_t kDecodeParmsCost = 72;

// Whitespace after a zlib stream's end is common and harmless; anything else is left alone.
bool only_whitespace(ByteView rest) {
  for (uint8_t c : rest)
    if (c != ' ' && c != '\r' && c != '\n' && c != '\t' && c != '\f' && c != 0) return false;
  return true;
}

// The filter and its parameters stay exactly as they were: only the encoded bytes change.
void replace(QPDFObjectHandle stream, const Bytes& data) {
  QPDFObjectHandle dict = stream.getDict();
  stream.replaceStreamData(std::string(data.begin(), data.end()), dict.getKey("/Filter"),
                           dict.getKey("/DecodeParms"));
}

}  // namespace

void StreamOptimizer::run(QPDFObjectHandle stream) {
  if (context_.out_of_time())
    throw FormatError(Reason::kLimitExceeded, 0, "the time budget ran out");
  if (is_untouchable(stream)) return;
  // Outside PDF/A, XMP is compressed like any other stream (readers of PDF inflate it).
  if (pdfa_ && is_metadata(stream)) return;
  const std::string filter = sole_filter(stream);
  if (filter == "/DCTDecode" && is_image(stream)) {
    jpeg(stream);
  } else if (filter == "/FlateDecode") {
    flate(stream);
  } else if (filter.empty() && !stream.getDict().hasKey("/DecodeParms") && facts_.flate_allowed) {
    unfiltered(stream);
  }
}

std::string StreamOptimizer::name_of(QPDFObjectHandle stream) const {
  const auto it = names_.find(stream.getObjGen());
  return it != names_.end() ? it->second : "image " + stream.getObjGen().unparse(' ') + " R";
}

void StreamOptimizer::charge(size_t bytes) {
  tally_.expanded += bytes;
  if (tally_.expanded > context_.policy().limits.max_expanded_bytes)
    throw FormatError(Reason::kLimitExceeded, 0,
                      "streams expand past the expansion budget (" +
                          std::to_string(context_.policy().limits.max_expanded_bytes) + " bytes)");
}

size_t StreamOptimizer::budget_left() const {
  const uint64_t max = context_.policy().limits.max_expanded_bytes;
  return tally_.expanded >= max ? 0 : size_t(max - tally_.expanded);
}

namespace {

// The /ColorTransform in the stream's DecodeParms, if any. It overrides the colour transform the
// JPEG's own markers imply, so the channels a viewer decodes may not be the ones libjpeg shows.
std::optional<QPDFObjectHandle> color_transform(QPDFObjectHandle stream) {
  QPDFObjectHandle parms = stream.getDict().getKey("/DecodeParms");
  if (parms.isArray() && parms.getArrayNItems() > 0) parms = parms.getArrayItem(0);
  if (!parms.isDictionary() || !parms.hasKey("/ColorTransform")) return std::nullopt;
  return parms.getKey("/ColorTransform");
}

// Whether the image dictionary's /Width and /Height are the JPEG frame's: viewers read the
// samples in the dictionary's rows, so a dictionary that says otherwise shows a picture the
// metric never sees.
bool sized_as_its_frame(QPDFObjectHandle stream, const jpeg::FrameInfo& frame) {
  QPDFObjectHandle dict = stream.getDict();
  QPDFObjectHandle width = dict.getKey("/Width"), height = dict.getKey("/Height");
  return width.isInteger() && height.isInteger() && width.getIntValue() == frame.width &&
         height.getIntValue() == frame.height;
}

// Whether libjpeg reads three planes as RGB by their component identifiers alone ('R', 'G',
// 'B', with no JFIF or Adobe segment before the first scan to say otherwise). A PDF viewer goes
// by /ColorTransform there, which is 1 unless the dictionary says 0, and shows them as YCbCr.
bool rgb_by_identifiers_alone(const jpeg::Layout& layout) {
  const auto& c = layout.frame.components;
  if (c.size() != 3 || c[0].id != 'R' || c[1].id != 'G' || c[2].id != 'B') return false;
  for (const jpeg::Segment& segment : layout.segments) {
    if (segment.marker == 0xDA) break;
    if (jpeg::libjpeg_reads_jfif(segment) || jpeg::adobe_transform(segment)) return false;
  }
  return true;
}

// The data colour space an ICC-based colour space's profile declares ("RGB ", "GRAY", "CMYK",
// "Lab ", ...: bytes 16-19 of its header); empty when unreadable.
std::string icc_data_space(QPDFObjectHandle profile) {
  if (!profile.isStream()) return {};
  const std::optional<Bytes> data = decoded_within(profile, kMaxProfileBytes, "an ICC profile");
  return data ? icc_header_data_space(*data).value_or("") : "";
}

// Whether a viewer shows a JPEG image of `components` components as the perceptual search scores
// it, so that the floor holds for what it shows. The search scores gray as gray, three planes as
// sRGB and four as CMYK samples that hold 255 - ink (rgb_from_cmyk). So: gray in DeviceGray,
// CalGray or a gray ICC profile; RGB in DeviceRGB, CalRGB or an RGB ICC profile, with no /Decode
// but the identity (Lab, a Separation or DeviceN, an Indexed image's palette indices, inverted
// samples: the metric would score other pictures than the page shows, and a YCbCr re-encoding
// would mix planes that are no colours); CMYK in DeviceCMYK or a CMYK ICC profile with /Decode
// [1 0 1 0 1 0 1 0], as Adobe's applications write for their inverted samples (in a PDF the
// /Decode array, not the JPEG's Adobe marker, sets the polarity).
bool shown_as_scored(QPDFObjectHandle stream, size_t components) {
  QPDFObjectHandle dict = stream.getDict();
  QPDFObjectHandle space = dict.getKey("/ColorSpace");
  std::string family;
  if (space.isName()) family = space.getName();
  if (space.isArray() && space.getArrayNItems() >= 1 && space.getArrayItem(0).isName())
    family = space.getArrayItem(0).getName();
  const char* device = components == 1   ? "/DeviceGray"
                       : components == 3 ? "/DeviceRGB"
                                         : "/DeviceCMYK";
  const char* calibrated = components == 1 ? "/CalGray" : components == 3 ? "/CalRGB" : "";
  const char* profile = components == 1 ? "GRAY" : components == 3 ? "RGB " : "CMYK";
  bool ours = family == device || (*calibrated && space.isArray() && family == calibrated);
  if (family == "/ICCBased" && space.getArrayNItems() == 2) {
    QPDFObjectHandle icc = space.getArrayItem(1);
    QPDFObjectHandle n = icc.isStream() ? icc.getDict().getKey("/N") : QPDFObjectHandle();
    ours = n.isInteger() && n.getIntValue() == long(components) && icc_data_space(icc) == profile;
  }
  if (!ours || (components != 1 && components != 3 && components != 4)) return false;
  QPDFObjectHandle decode = dict.getKey("/Decode");
  if (components != 4 && !decode.isArray()) return true;
  if (!decode.isArray() || decode.getArrayNItems() != int(2 * components)) return false;
  for (int i = 0; i < int(2 * components); ++i) {
    double value = 0;
    const double want = (i % 2 == 0) == (components == 4) ? 1.0 : 0.0;
    if (!decode.getArrayItem(i).getValueAsNumber(value) || value != want) return false;
  }
  return true;
}

// `count` numbers from `array`, or false when it holds anything else.
bool numbers(QPDFObjectHandle array, size_t count, double* out) {
  if (!array.isArray() || array.getArrayNItems() != int(count)) return false;
  for (size_t i = 0; i < count; ++i)
    if (!array.getArrayItem(int(i)).getValueAsNumber(out[i])) return false;
  return true;
}

// The parameters of a [/CalGray <<...>>] or [/CalRGB <<...>>] space (defaults where a key is
// absent); nullopt for other spaces and for a /WhitePoint that is not three numbers.
std::optional<CalibratedSpace> calibrated_parameters(QPDFObjectHandle space) {
  if (!space.isArray() || space.getArrayNItems() != 2 || !space.getArrayItem(1).isDictionary())
    return std::nullopt;
  const std::string family = space.getArrayItem(0).unparse();
  if (family != "/CalGray" && family != "/CalRGB") return std::nullopt;
  QPDFObjectHandle dict = space.getArrayItem(1);
  CalibratedSpace c;
  c.channels = family == "/CalGray" ? 1 : 3;
  if (!numbers(dict.getKey("/WhitePoint"), 3, c.white_point.data())) return std::nullopt;
  QPDFObjectHandle gamma = dict.getKey("/Gamma");
  if (c.channels == 1 && !gamma.isNull() && !gamma.getValueAsNumber(c.gamma[0]))
    return std::nullopt;
  if (c.channels == 3 && !gamma.isNull() && !numbers(gamma, 3, c.gamma.data())) return std::nullopt;
  QPDFObjectHandle matrix = dict.getKey("/Matrix");
  if (c.channels == 3 && !matrix.isNull() && !numbers(matrix, 9, c.matrix.data()))
    return std::nullopt;
  return c;
}

// The ICC profile a viewer shows the image through: an /ICCBased space's own, or a calibrated
// space's parameters made into one; empty for the device spaces (read as the metric reads samples
// without a profile: gray and RGB as sRGB, CMYK rendered by rgb_from_cmyk). nullopt for a
// calibrated space that makes no profile (calibrated_profile: against the standard's rules, or
// beyond what a profile holds): what a viewer shows of it is not known.
std::optional<Bytes> viewer_profile(QPDFObjectHandle stream) {
  QPDFObjectHandle space = stream.getDict().getKey("/ColorSpace");
  if (!space.isArray() || space.getArrayNItems() < 1) return Bytes{};
  const std::string family = space.getArrayItem(0).unparse();
  if (family == "/CalGray" || family == "/CalRGB") {
    const std::optional<CalibratedSpace> calibrated = calibrated_parameters(space);
    Bytes profile = calibrated ? calibrated_profile(*calibrated) : Bytes{};
    if (profile.empty()) return std::nullopt;
    return profile;
  }
  if (family != "/ICCBased" || space.getArrayNItems() != 2 || !space.getArrayItem(1).isStream())
    return Bytes{};
  return decoded_within(space.getArrayItem(1), kMaxProfileBytes, "an ICC profile")
      .value_or(Bytes{});
}

}  // namespace

Policy jpeg_image_policy(QPDFObjectHandle stream, ByteView jpeg, const Policy& document,
                         const ImageFacts& facts) {
  Policy policy = document;
  std::optional<jpeg::Layout> layout;
  try {
    layout = jpeg::parse_layout(jpeg);
  } catch (const FormatError&) {
    // Markers that do not parse: lossless below, and the JPEG optimiser says why.
  }
  const size_t components = layout ? layout->frame.components.size() : 0;
  // A mask's samples are opacity, not a picture; a colour key (/Mask [ranges]) shows or hides
  // each pixel by its exact values: either way, what changes is not what the metric scores.
  // And where libjpeg reads RGB only by the component identifiers, or the document redefines
  // the device space, viewers differ.
  if (facts.used_as_mask(stream) || stream.getDict().getKey("/Mask").isArray() ||
      facts.in_redefined_space(stream) || !layout || rgb_by_identifiers_alone(*layout) ||
      !sized_as_its_frame(stream, layout->frame))
    policy.mode = Mode::kLossless;
  std::optional<QPDFObjectHandle> transform = color_transform(stream);
  if (transform) {
    // Its planes may not be chroma at all: the sampling stays. And unless the dictionary asks
    // a three-component image for the YCbCr transform that the perceptual search scores in, the
    // viewer shows other colours than the ones scored (and planes the tables treat as chroma):
    // lossless only.
    policy.jpeg_subsampling = SubsamplingPolicy::kKeep;
    const bool ycc = transform->isInteger() && transform->getIntValue() == 1;
    if (components == 3 && !ycc) policy.mode = Mode::kLossless;
  }
  // Four components with a /ColorTransform may be YCCK where libjpeg reads CMYK, or the
  // reverse; every image must be shown as it is scored. A viewer shows the samples through the
  // image's colour space, not the JPEG's ICC segments.
  // Progressive DCT came with PDF 1.3: in an older file every image keeps its scans.
  if (!facts.progressive_allowed) policy.jpeg_scans = ScanMode::kKeep;
  std::optional<Bytes> profile = viewer_profile(stream);
  if ((components == 4 && transform) || !shown_as_scored(stream, components) || !profile)
    policy.mode = Mode::kLossless;
  policy.jpeg_shown_through =
      std::make_shared<const Bytes>(profile ? std::move(*profile) : Bytes{});
  return policy;
}

void StreamOptimizer::jpeg(QPDFObjectHandle stream) {
  const Bytes raw = raw_data(stream);
  if (sniff(raw) != Kind::kJpeg) return;
  charge(raw.size());
  const std::string name = name_of(stream);
  const Policy policy = jpeg_image_policy(stream, raw, context_.policy(), facts_);
  Outcome item = context_.optimize_embedded_under(raw, name, policy);
  for (auto& w : item.warnings) outcome_.warnings.push_back(name + ": " + w);
  if (!item.replaced() || item.bytes.size() >= raw.size()) return;
  replace(stream, item.bytes);
  ++tally_.jpegs;
}

void StreamOptimizer::flate(QPDFObjectHandle stream) {
  const Bytes raw = raw_data(stream);
  Bytes decoded;
  size_t consumed = 0;
  MemoryHold hold;
  try {
    decoded = inflate_held(raw, budget_left(), context_, hold, &consumed);
  } catch (const FormatError& e) {
    if (e.reason() == Reason::kLimitExceeded) throw;
    return;  // damaged or raw deflate: viewers cope their own way; leave the bytes as they are
  }
  if (!only_whitespace(ByteView(raw).subspan(consumed))) return;
  charge(decoded.size());
  keep_smallest(stream, raw.size(), decoded, true);
}

void StreamOptimizer::unfiltered(QPDFObjectHandle stream) {
  const Bytes raw = raw_data(stream);
  if (raw.size() < kMinStreamToCompress) return;
  charge(raw.size());
  keep_smallest(stream, raw.size(), raw, false);
}

// Candidates: the decoded bytes deflated again, an image's samples PNG-predicted, and (compact
// mode) a photograph as JPEG; each counted with the dictionary entries it needs.
void StreamOptimizer::keep_smallest(QPDFObjectHandle stream, size_t current, const Bytes& decoded,
                                    bool filtered) {
  const Policy& policy = context_.policy();
  const size_t filter_cost = filtered ? 0 : kFilterKeyCost;
  const bool image = is_image(stream);
  // The JPEG is made from the samples as the stream holds them now, predictors undone.
  std::optional<Bytes> photo;
  const OutOfTime out_of_time = [this] { return context_.out_of_time(); };
  // What the candidates hold beside the decoded bytes, as measured on a 16 MP grey image: an
  // image's rows twice more for the PNG filters, and three times more again for the JPEG
  // candidate (qpdf's samples, their copy, the metric's reference); deflated copies are small.
  const bool jpeg_candidate = image && may_become_jpeg(stream, policy, facts_);
  const MemoryHold hold = context_.hold_memory(uint64_t(decoded.size()) * (jpeg_candidate ? 6
                                                                           : image        ? 4
                                                                                          : 1));
  if (jpeg_candidate) {
    const std::shared_ptr<Buffer> samples = stream.getStreamData(qpdf_dl_generalized);
    charge(samples->getSize());
    photo = photo_as_jpeg(stream,
                          Bytes(samples->getBuffer(), samples->getBuffer() + samples->getSize()),
                          policy, out_of_time);
  }
  Bytes packed = deflate_bytes(decoded, policy.effort, DeflateWrapper::kZlib, out_of_time);
  size_t best = std::min(current, packed.size() + filter_cost);
  std::optional<pdf::ImageRows> layout = image ? predictable_image(stream) : std::nullopt;
  std::optional<Bytes> predicted;
  if (layout) predicted = png_predicted(decoded, *layout, policy.effort, out_of_time);
  if (predicted && predicted->size() + kDecodeParmsCost + filter_cost < best)
    best = predicted->size() + kDecodeParmsCost + filter_cost;
  else
    predicted.reset();

  if (photo && photo->size() + filter_cost < best) {
    stream.replaceStreamData(std::string(photo->begin(), photo->end()),
                             QPDFObjectHandle::newName("/DCTDecode"), QPDFObjectHandle::newNull());
    ++tally_.photos;
  } else if (predicted) {
    stream.replaceStreamData(std::string(predicted->begin(), predicted->end()),
                             QPDFObjectHandle::newName("/FlateDecode"), png_decode_parms(*layout));
    ++tally_.predicted;
  } else if (packed.size() + filter_cost < current) {
    if (filtered) {
      replace(stream, packed);
      ++tally_.redeflated;
    } else {
      stream.replaceStreamData(std::string(packed.begin(), packed.end()),
                               QPDFObjectHandle::newName("/FlateDecode"),
                               QPDFObjectHandle::newNull());
      ++tally_.compressed;
    }
  }
}

}  // namespace lighten::pdf
