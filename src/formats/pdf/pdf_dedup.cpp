#include "formats/pdf/pdf_dedup.h"

#include <xxhash.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "formats/pdf/pdf_document.h"

namespace lighten::pdf {
namespace {

// Merging rounds: each can only make streams equal whose dictionaries named merged streams.
constexpr int kMaxRounds = 8;

// Candidates group by dictionary text and a digest of the bytes; equality is checked on bytes.
using StreamKey = std::tuple<std::string, size_t, uint64_t>;

StreamKey key_of(QPDFObjectHandle stream, const Bytes& raw) {
  QPDFObjectHandle dict = stream.getDict().shallowCopy();
  dict.removeKey("/Length");
  return {dict.unparse(), raw.size(), XXH3_64bits(raw.data(), raw.size())};
}

// Duplicate object -> the stream that replaces it; `merged` ones are already out of the graph.
std::map<QPDFObjGen, QPDFObjectHandle> find_duplicates(QPDF& pdf,
                                                       const std::set<QPDFObjGen>& merged) {
  std::map<StreamKey, std::vector<std::pair<QPDFObjectHandle, Bytes>>> groups;
  std::map<QPDFObjGen, QPDFObjectHandle> duplicates;
  for (QPDFObjectHandle obj : pdf.getAllObjects()) {  // in object order: the first one stays
    if (!obj.isStream() || is_untouchable(obj) || merged.count(obj.getObjGen())) continue;
    Bytes raw = raw_data(obj);
    auto& group = groups[key_of(obj, raw)];
    bool merged = false;
    for (const auto& [kept, kept_raw] : group) {
      if (kept_raw != raw) continue;
      duplicates.emplace(obj.getObjGen(), kept);
      merged = true;
      break;
    }
    if (!merged) group.emplace_back(obj, std::move(raw));
  }
  return duplicates;
}

class ReferenceRewriter {
 public:
  explicit ReferenceRewriter(const std::map<QPDFObjGen, QPDFObjectHandle>& duplicates)
      : duplicates_(duplicates) {}

  // Rewrites the references held directly by `h` (a dictionary, array or stream dictionary) and
  // by the direct objects inside it; indirect objects are visited on their own.
  void rewrite(QPDFObjectHandle h, int depth) {
    if (depth > kMaxDirectDepth)  // never for what qpdf reads
      throw FormatError(Reason::kCorrupt, 0, "objects nest too deeply to merge streams");
    if (h.isStream()) return rewrite(h.getDict(), depth + 1);
    if (h.isDictionary()) {
      for (const std::string& key : h.getKeys()) {
        QPDFObjectHandle v = h.getKey(key);
        if (auto kept = replacement(v))
          h.replaceKey(key, *kept);
        else if (!v.isIndirect())
          rewrite(v, depth + 1);
      }
    } else if (h.isArray()) {
      const int n = h.getArrayNItems();
      for (int i = 0; i < n; ++i) {
        QPDFObjectHandle v = h.getArrayItem(i);
        if (auto kept = replacement(v))
          h.setArrayItem(i, *kept);
        else if (!v.isIndirect())
          rewrite(v, depth + 1);
      }
    }
  }

 private:
  std::optional<QPDFObjectHandle> replacement(QPDFObjectHandle v) const {
    if (!v.isIndirect()) return std::nullopt;
    const auto it = duplicates_.find(v.getObjGen());
    if (it == duplicates_.end()) return std::nullopt;
    return it->second;
  }

  const std::map<QPDFObjGen, QPDFObjectHandle>& duplicates_;
};

}  // namespace

int merge_identical_streams(QPDF& pdf) {
  std::set<QPDFObjGen> merged;
  for (int round = 0; round < kMaxRounds; ++round) {
    const auto duplicates = find_duplicates(pdf, merged);
    if (duplicates.empty()) break;
    for (const auto& [dup, kept] : duplicates) merged.insert(dup);
    ReferenceRewriter rewriter(duplicates);
    rewriter.rewrite(pdf.getTrailer(), 0);
    for (QPDFObjectHandle obj : pdf.getAllObjects())
      if (!merged.count(obj.getObjGen())) rewriter.rewrite(obj, 0);
  }
  return int(merged.size());
}

}  // namespace lighten::pdf
