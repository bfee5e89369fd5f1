// Which shard a file belongs to: a function of its relative path only, so that every machine
// of a job array agrees without talking to the others, whatever else the tree holds.
#pragma once

#include <cstdint>
#include <string_view>

#include "lighten/batch.h"

namespace lighten::batch {

uint32_t shard_of(std::string_view relative_path, uint32_t count);
inline bool in_shard(std::string_view relative_path, const Shard& shard) {
  return shard.count <= 1 || shard_of(relative_path, shard.count) == shard.index;
}

}  // namespace lighten::batch
