// The Context the engine hands to optimisers: budgets shared by a whole top-level file.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "core/content_key.h"
#include "core/context.h"

namespace lighten {

class MemoryGate;

// What every level of one top-level file shares.
struct SharedBudget {
  std::chrono::steady_clock::time_point deadline;
  std::atomic<uint64_t> expanded_bytes{0};  // bytes handed to embedded optimisers so far
  // Decoded fingerprints noted by optimisers, keyed by a 128-bit hash of the input's bytes and
  // its length (items of one container may be optimised on several threads).
  std::mutex fingerprints_mutex;
  std::map<ContentKey, DecodedFingerprint> fingerprints;
  std::map<ContentKey, ScoredFingerprint> scored;
  MemoryGate* gate = nullptr;  // told of every embedded item, when the caller gave one
  // What of the gate's allowance for the top-level file no hold uses now.
  std::atomic<uint64_t> allowance_left{0};
};

class EngineContext final : public Context {
 public:
  EngineContext(const Policy& policy, unsigned depth, std::shared_ptr<SharedBudget> budget)
      : policy_(policy), depth_(depth), budget_(std::move(budget)) {}

  const Policy& policy() const override { return policy_; }
  unsigned depth() const override { return depth_; }
  bool out_of_time() const override;
  Outcome optimize_embedded_under(ByteView bytes, std::string_view name,
                                  const Policy& policy) override;
  Outcome optimize_embedded_again(ByteView bytes, std::string_view name,
                                  const Policy& policy) override;
  Verdict verify_embedded_under(ByteView original, ByteView output, const Policy& policy) override;
  void note_fingerprint(ByteView input, const DecodedFingerprint& what) override;
  std::optional<DecodedFingerprint> fingerprint(ByteView input) const override;
  void note_scored(ByteView input, const ScoredFingerprint& what) override;
  std::optional<ScoredFingerprint> scored(ByteView input) const override;
  MemoryHold hold_memory(uint64_t bytes) override;

  // Sniffs, dispatches, enforces the minimum gain and verifies; never throws.
  Outcome run(ByteView bytes);

 private:
  // An embedded item's run; `charge`: its bytes count against the expansion budget.
  Outcome embedded(ByteView bytes, std::string_view name, const Policy& policy, bool charge);

  const Policy& policy_;
  unsigned depth_;
  std::shared_ptr<SharedBudget> budget_;
};

}  // namespace lighten
