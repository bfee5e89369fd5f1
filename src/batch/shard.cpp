#include "batch/shard.h"

#include <xxhash.h>

#include <charconv>
#include <string>

#include "lighten/options.h"

namespace lighten {

Shard parse_shard(std::string_view text) {
  auto fail = [&]() {
    return OptionError("shard: '" + std::string(text) + "' is not K/N with 1 <= K <= N (e.g. 2/8)");
  };
  auto slash = text.find('/');
  if (slash == std::string_view::npos) throw fail();
  auto number = [&](std::string_view part) {
    uint32_t value = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) throw fail();
    return value;
  };
  uint32_t k = number(text.substr(0, slash));
  uint32_t n = number(text.substr(slash + 1));
  if (n < 1 || k < 1 || k > n) throw fail();
  return Shard{k - 1, n};
}

namespace batch {

uint32_t shard_of(std::string_view relative_path, uint32_t count) {
  if (count <= 1) return 0;
  // Fixed seed: the assignment must never change between versions, or resumed shards overlap.
  return uint32_t(XXH3_64bits(relative_path.data(), relative_path.size()) % count);
}

}  // namespace batch
}  // namespace lighten
