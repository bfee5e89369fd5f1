#include "formats/pdf/pdf_image_facts.h"

#include <xxhash.h>

#include <exception>
#include <utility>
#include <vector>

#include "codecs/deflate.h"
#include "core/bytes.h"
#include "core/errors.h"
#include "formats/pdf/pdf_document.h"
#include "quality/colour_profile.h"

namespace lighten::pdf {
namespace {

// Distinct output intent profiles read at most: a document has one, perhaps one per standard it
// claims, and PDF 2.0 pages may add their own; past this many, every device space counts as
// redefined.
constexpr size_t kMaxIntents = 8;
// The most bytes of output intent profiles read from one document; past that every device space
// counts as redefined (a document past it only by copies of one profile, which a run merges, is
// read whole by the next run: bounded work comes first there).
constexpr size_t kMaxProfileBytesRead = 64 << 20;

constexpr const char* kDefaults[][2] = {{"/DefaultGray", "/DeviceGray"},
                                        {"/DefaultRGB", "/DeviceRGB"},
                                        {"/DefaultCMYK", "/DeviceCMYK"}};

// Every object reachable from the trailer, each once, its direct parts walked for the facts.
class Walk {
 public:
  Walk(ImageFacts& facts, std::vector<QPDFObjectHandle>& intent_arrays,
       std::vector<QPDFObjectHandle>& soft_mask_groups)
      : facts_(facts), intent_arrays_(intent_arrays), soft_mask_groups_(soft_mask_groups) {}

  void run(QPDFObjectHandle trailer) {
    visit(trailer, 0);
    while (!pending_.empty()) {
      QPDFObjectHandle next = pending_.back();
      pending_.pop_back();
      visit(next, 0);
    }
  }

 private:
  void visit(QPDFObjectHandle h, int depth) {
    if (depth > kMaxDirectDepth) return;  // never for what qpdf reads
    if (h.isStream()) return visit(h.getDict(), depth + 1);
    if (h.isArray()) {
      for (int i = 0; i < h.getArrayNItems(); ++i) follow(h.getArrayItem(i), depth + 1);
      return;
    }
    if (!h.isDictionary()) return;
    for (const std::string& key : h.getKeys()) {
      QPDFObjectHandle v = h.getKey(key);
      if ((key == "/SMask" || key == "/Mask") && v.isStream()) facts_.masks.insert(v.getObjGen());
      // A graphics state's soft mask: a dictionary whose group /G draws the mask.
      if (key == "/SMask" && v.isDictionary() && v.getKey("/S").isNameAndEquals("/Luminosity") &&
          v.getKey("/G").isStream())
        soft_mask_groups_.push_back(v.getKey("/G"));
      // The catalogue's, and from PDF 2.0 a page's.
      if (key == "/OutputIntents" && v.isArray()) intent_arrays_.push_back(v);
      // A resources dictionary's colour spaces (an image's own /ColorSpace is a name or array).
      if (key == "/ColorSpace" && v.isDictionary())
        for (const auto& [name, device] : kDefaults)
          if (v.hasKey(name)) facts_.redefined_device_spaces.insert(device);
      follow(v, depth + 1);
    }
  }

  // A direct part is walked now; an indirect object once, later.
  void follow(QPDFObjectHandle h, int depth) {
    if (!h.isIndirect()) return visit(h, depth);
    if (seen_.insert(h.getObjGen()).second) pending_.push_back(h);
  }

  ImageFacts& facts_;
  std::vector<QPDFObjectHandle>& intent_arrays_;
  std::vector<QPDFObjectHandle>& soft_mask_groups_;
  std::set<QPDFObjGen> seen_;
  std::vector<QPDFObjectHandle> pending_;
};

// An output intent's profile, unfiltered or Flate-encoded, within kMaxProfileBytes; empty when
// it is anything else (read raw: qpdf would warn, and refuse the file, of a damaged one).
Bytes intent_profile(QPDFObjectHandle profile) {
  if (!profile.isStream()) return {};
  try {
    const std::string filter = sole_filter(profile);
    if (profile.getDict().hasKey("/DecodeParms") || (!filter.empty() && filter != "/FlateDecode"))
      return {};
    const Bytes raw = raw_data(profile);
    if (filter.empty()) return raw.size() <= kMaxProfileBytes ? raw : Bytes{};
    return inflate_bounded(raw, kMaxProfileBytes, DeflateWrapper::kZlib);
  } catch (const std::exception&) {
    return {};
  }
}

// The device space an output intent's profile stands in for, unless it reads as sRGB (then
// whether a viewer follows the intent makes no difference to what the metric scores).
void collect_output_intent(const Bytes& icc, ImageFacts& facts) {
  const std::string space = icc_header_data_space(icc).value_or("");  // "": none to follow
  if (space == "CMYK") facts.redefined_device_spaces.insert("/DeviceCMYK");
  if (space == "RGB " && !ProfileColour::shows_as_srgb(icc, 3))
    facts.redefined_device_spaces.insert("/DeviceRGB");
  if (space == "GRAY" && !ProfileColour::shows_as_srgb(icc, 1))
    facts.redefined_device_spaces.insert("/DeviceGray");
}

// Every output intent of the arrays found (the catalogue's, pages').
void collect_output_intents(const std::vector<QPDFObjectHandle>& intent_arrays, ImageFacts& facts) {
  // Pages tend to share one intent, or repeat one profile: each profile object is read once,
  // and profiles are counted by their bytes, so that a second run, after identical streams were
  // merged, counts what the first did.
  std::set<QPDFObjGen> arrays_read, profiles_read;
  std::set<std::pair<uint64_t, uint64_t>> distinct;  // XXH3-128 of each profile's bytes
  size_t bytes_read = 0;
  auto all_redefined = [&] {
    for (const auto& [name, device] : kDefaults) facts.redefined_device_spaces.insert(device);
  };
  for (QPDFObjectHandle intents : intent_arrays) {
    if (intents.isIndirect() && !arrays_read.insert(intents.getObjGen()).second) continue;
    for (int i = 0; i < intents.getArrayNItems(); ++i) {
      QPDFObjectHandle intent = intents.getArrayItem(i);
      if (!intent.isDictionary()) continue;
      QPDFObjectHandle profile = intent.getKey("/DestOutputProfile");
      if (!profile.isStream() || !profiles_read.insert(profile.getObjGen()).second) continue;
      const Bytes icc = intent_profile(profile);
      bytes_read += icc.size();
      const XXH128_hash_t h = XXH3_128bits(icc.data(), icc.size());
      if (!distinct.insert({h.high64, h.low64}).second) continue;
      if (distinct.size() > kMaxIntents || bytes_read > kMaxProfileBytesRead) {
        all_redefined();
        return;
      }
      collect_output_intent(icc, facts);
    }
  }
}

// Images a luminosity soft mask's group draws (ISO 32000 11.6.5.2): their samples become
// opacity, so they keep their exact values as /SMask images do (under /S /Alpha only their shapes
// count). Drawn through the group's resources: its images, and those of its nested forms, tiling
// patterns and Type 3 glyphs, however deep. Each object and each resources dictionary is walked
// once, so shared resources cost their size, not their size per user.
void collect_soft_mask_images(const std::vector<QPDFObjectHandle>& groups, ImageFacts& facts) {
  std::set<QPDFObjGen> seen;
  auto first_time = [&](QPDFObjectHandle h) {
    return !h.isIndirect() || seen.insert(h.getObjGen()).second;
  };
  std::vector<QPDFObjectHandle> pending;  // many graphics states may name one group
  for (QPDFObjectHandle g : groups) {
    // (A form inside the group without its own draws with the group's, which are walked.)
    if (g.isStream() && !g.getDict().getKey("/Resources").isDictionary())
      facts.any_image_may_be_mask = true;
    if (first_time(g)) pending.push_back(g);
  }
  while (!pending.empty()) {
    QPDFObjectHandle drawn = pending.back();
    pending.pop_back();
    QPDFObjectHandle dict = drawn.isStream() ? drawn.getDict() : drawn;
    if (!dict.isDictionary()) continue;
    QPDFObjectHandle resources = dict.getKey("/Resources");
    if (!resources.isDictionary() || !first_time(resources)) continue;
    for (const char* category : {"/XObject", "/Pattern", "/Font"}) {
      QPDFObjectHandle named = resources.getKey(category);
      if (!named.isDictionary() || !first_time(named)) continue;
      for (const std::string& name : named.getKeys()) {
        QPDFObjectHandle item = named.getKey(name);
        if (item.isStream() && item.getDict().getKey("/Subtype").isNameAndEquals("/Image"))
          facts.masks.insert(item.getObjGen());
        else if (first_time(item))
          pending.push_back(item);
      }
    }
  }
}

}  // namespace

bool ImageFacts::in_redefined_space(QPDFObjectHandle image) const {
  QPDFObjectHandle space = image.getDict().getKey("/ColorSpace");
  if (space.isArray() && space.getArrayNItems() == 1) space = space.getArrayItem(0);
  return space.isName() && redefined_device_spaces.count(space.getName()) > 0;
}

ImageFacts image_facts(QPDF& pdf, bool written_as_15) {
  ImageFacts facts;
  std::vector<QPDFObjectHandle> intent_arrays, soft_mask_groups;
  Walk(facts, intent_arrays, soft_mask_groups).run(pdf.getTrailer());
  collect_output_intents(intent_arrays, facts);
  collect_soft_mask_images(soft_mask_groups, facts);
  const std::string version = pdf.getPDFVersion();
  facts.progressive_allowed = written_as_15 || version.size() != 3 || version >= "1.3";
  facts.flate_allowed = written_as_15 || version.size() != 3 || version >= "1.2";
  return facts;
}

}  // namespace lighten::pdf
