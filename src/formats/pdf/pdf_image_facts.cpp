#include "formats/pdf/pdf_image_facts.h"

#include <qpdf/Buffer.hh>

#include <exception>
#include <memory>

#include "core/bytes.h"
#include "quality/colour_profile.h"

namespace lighten::pdf {
namespace {

// Direct objects nest; deeper than this is not a document anyone made.
constexpr int kMaxDepth = 256;

constexpr const char* kDefaults[][2] = {{"/DefaultGray", "/DeviceGray"},
                                        {"/DefaultRGB", "/DeviceRGB"},
                                        {"/DefaultCMYK", "/DeviceCMYK"}};

void collect(QPDFObjectHandle h, ImageFacts& facts, int depth) {
  if (depth > kMaxDepth) return;
  if (h.isStream()) return collect(h.getDict(), facts, depth + 1);
  if (h.isArray()) {
    for (int i = 0; i < h.getArrayNItems(); ++i) {
      QPDFObjectHandle v = h.getArrayItem(i);
      if (!v.isIndirect()) collect(v, facts, depth + 1);
    }
    return;
  }
  if (!h.isDictionary()) return;
  for (const std::string& key : h.getKeys()) {
    QPDFObjectHandle v = h.getKey(key);
    if ((key == "/SMask" || key == "/Mask") && v.isStream()) facts.masks.insert(v.getObjGen());
    // A resources dictionary's colour spaces (an image's own /ColorSpace is a name or array).
    if (key == "/ColorSpace" && v.isDictionary())
      for (const auto& [name, device] : kDefaults)
        if (v.hasKey(name)) facts.redefined_device_spaces.insert(device);
    if (!v.isIndirect()) collect(v, facts, depth + 1);
  }
}

// The device space an output intent's profile stands in for, unless it reads as sRGB (then
// whether a viewer follows the intent makes no difference to what the metric scores).
void collect_output_intent(QPDFObjectHandle intent, ImageFacts& facts) {
  if (!intent.isDictionary()) return;
  QPDFObjectHandle profile = intent.getKey("/DestOutputProfile");
  if (!profile.isStream()) return;
  Bytes icc;
  try {
    const std::shared_ptr<Buffer> data = profile.getStreamData(qpdf_dl_generalized);
    if (data) icc.assign(data->getBuffer(), data->getBuffer() + data->getSize());
  } catch (const std::exception&) {
  }
  if (icc.size() < 20) return;  // no profile a viewer could follow
  const std::string space(icc.begin() + 16, icc.begin() + 20);
  if (space == "CMYK") facts.redefined_device_spaces.insert("/DeviceCMYK");
  if (space == "RGB " && !ProfileColour::shows_as_srgb(icc, 3))
    facts.redefined_device_spaces.insert("/DeviceRGB");
  if (space == "GRAY" && !ProfileColour::shows_as_srgb(icc, 1))
    facts.redefined_device_spaces.insert("/DeviceGray");
}

}  // namespace

bool ImageFacts::in_redefined_space(QPDFObjectHandle image) const {
  QPDFObjectHandle space = image.getDict().getKey("/ColorSpace");
  return space.isName() && redefined_device_spaces.count(space.getName()) > 0;
}

ImageFacts image_facts(QPDF& pdf) {
  ImageFacts facts;
  for (QPDFObjectHandle obj : pdf.getAllObjects()) collect(obj, facts, 0);
  QPDFObjectHandle intents = pdf.getRoot().getKey("/OutputIntents");
  if (intents.isArray())
    for (int i = 0; i < intents.getArrayNItems(); ++i)
      collect_output_intent(intents.getArrayItem(i), facts);
  return facts;
}

}  // namespace lighten::pdf
