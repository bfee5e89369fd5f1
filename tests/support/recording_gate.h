// A MemoryGate for tests: tells which items it was asked about and what memory holds, and checks
// that each is handed back as counted.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "lighten/lighten.h"

namespace lighten::testing {

class RecordingGate final : public MemoryGate {
 public:
  uint64_t admit(std::span<const uint8_t> item, const Policy&) override {
    items.push_back(sniff(item));
    held += item.size();
    return item.size();
  }
  uint64_t admit_bytes(uint64_t bytes) override {
    held += bytes;
    largest_hold = std::max(largest_hold, bytes);
    return bytes;
  }
  void release(uint64_t admitted) noexcept override { held -= admitted; }
  std::vector<Kind> items;
  uint64_t held = 0;
  uint64_t largest_hold = 0;  // the most admit_bytes was asked for at once
};

}  // namespace lighten::testing
