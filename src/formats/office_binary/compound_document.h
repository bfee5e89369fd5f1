// What the PowerPoint, Excel and Word 97-2003 optimisers share: reading the compound file,
// refusing signed files, handing pictures to the engine, and the verifier's checks of the
// storage tree, the untouched streams and the changed pictures.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/context.h"
#include "formats/cfb/compound_file.h"
#include "formats/office_binary/officeart_records.h"

namespace lighten::office_binary {

// Parses the compound file and refuses one whose streams are covered by a digital signature.
cfb::CompoundFile open_document(ByteView input);

// The stream at `path`; throws FormatError(kUnsupportedVariant) when the file has none.
Bytes required_stream(const cfb::CompoundFile& file, std::string_view path, std::string_view kind);

// The policy a document's pictures are optimised and verified under: the context's, made
// lossless in the perceptual modes when `drawings` (the stream holding the shapes' properties)
// shows pictures through a colour key, a black-and-white threshold or raised contrast, under
// which changes within the floor would show.
Policy picture_policy(const Policy& policy, ByteView drawings);

// Hands each picture to the engine, counting what it replaced by kind and keeping its warnings.
class PictureOptimizer {
 public:
  PictureOptimizer(Context& context, Outcome& outcome, ByteView drawings)
      : context_(context),
        outcome_(outcome),
        pictures_(picture_policy(context.policy(), drawings)) {}
  officeart::PictureRewriter rewriter();
  // "3 jpeg, 1 png optimised", and why pictures stayed lossless where effects made them
  std::string detail() const;

 private:
  Context& context_;
  Outcome& outcome_;
  Policy pictures_;
  std::map<Kind, int> optimised_;
};

// Same storage tree (paths and types, in directory order) and the same bytes in every stream
// but those in `changed`. Returns the first difference in words, or an empty string.
std::string compare_storage(const cfb::CompoundFile& before, const cfb::CompoundFile& after,
                            const std::vector<std::string>& changed);

// Each changed picture checked by the verifier of its kind, under picture_policy.
Verdict verify_pictures(const std::vector<officeart::PicturePair>& pictures, Context& context,
                        ByteView drawings);

// The file's pictures by kind ("2 jpeg, 1 png, 1 other") for `lighten info`.
std::string count_blips(const std::vector<ByteView>& blip_records);

}  // namespace lighten::office_binary
