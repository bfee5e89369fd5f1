// libFuzzer target seeded with compound files (HWP, PPT, XLS, DOC). Exercises the CFB reader
// (header, DIFAT, FAT and mini FAT chains, the directory tree) and its writer: whatever parses
// must write back into a file that parses again to the same tree and streams. Then the whole
// API, so the compound-file optimisers see the same inputs.
#include "formats/cfb/compound_file.h"
#include "fuzz/through_api.h"

namespace {

void round_trip(lighten::ByteView input) {
  using lighten::cfb::CompoundFile;
  std::optional<CompoundFile> parsed;
  try {
    parsed = CompoundFile::parse(input);
  } catch (const lighten::FormatError&) {
    return;
  }
  // Our own output must parse (an exception escaping here is a bug the fuzzer reports).
  const CompoundFile again = CompoundFile::parse(parsed->serialize());
  const auto& a = parsed->entries();
  const auto& b = again.entries();
  if (a.size() != b.size()) __builtin_trap();
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].path != b[i].path || a[i].type != b[i].type) __builtin_trap();
    if (parsed->entry_record(i) != again.entry_record(i)) __builtin_trap();
  }
  for (const std::string& path : parsed->stream_paths())
    if (parsed->read_stream(path) != again.read_stream(path)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  round_trip({data, size});
  return lighten::fuzz::optimize_through_api(data, size);
}
