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
    holds.push_back(bytes);
    return bytes;
  }
  uint64_t allowance(std::span<const uint8_t>, const Policy&) override { return allowance_bytes; }
  void release(uint64_t admitted) noexcept override { held -= admitted; }
  // How many of the holds asked for exactly `bytes`.
  size_t holds_of(uint64_t bytes) const {
    return size_t(std::count(holds.begin(), holds.end(), bytes));
  }
  std::vector<Kind> items;
  uint64_t held = 0;
  uint64_t largest_hold = 0;     // the most admit_bytes was asked for at once
  std::vector<uint64_t> holds;   // what admit_bytes was asked for, in order
  uint64_t allowance_bytes = 0;  // what the gate says it counted for the file already
};

}  // namespace lighten::testing
