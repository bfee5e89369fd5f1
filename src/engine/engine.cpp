#include <algorithm>
#include <chrono>
#include <new>
#include <optional>
#include <string>

#include "core/content_key.h"
#include "core/worst_quality.h"
#include "engine/engine_context.h"
#include "engine/registry.h"
#include "lighten/lighten.h"

namespace lighten {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

Outcome keep(Outcome o, Reason reason, std::string message) {
  o.action = Action::kKept;
  o.reason = reason;
  o.message = std::move(message);
  o.bytes.clear();
  o.bytes.shrink_to_fit();
  o.large_output.reset();
  o.bytes_out = o.bytes_in;
  return o;
}

// Where damage lies helps whoever looks at the file; for other reasons, and at byte 0 (which
// most parsers give when the whole file is meant), the offset says nothing.
std::string with_offset(const FormatError& e) {
  const bool damage = e.reason() == Reason::kCorrupt || e.reason() == Reason::kTruncated;
  if (!damage || e.offset() == 0) return e.what();
  return std::string(e.what()) + " (at byte " + std::to_string(e.offset()) + ")";
}

// Notes kept per input for the whole top-level file, under the budget's mutex.
template <typename Value>
void remember(SharedBudget& budget, std::map<ContentKey, Value>& notes, ByteView input,
              const Value& value) {
  const auto key = content_key(input);
  std::lock_guard lock(budget.fingerprints_mutex);
  notes[key] = value;
}

template <typename Value>
std::optional<Value> recall(SharedBudget& budget, const std::map<ContentKey, Value>& notes,
                            ByteView input) {
  const auto key = content_key(input);
  std::lock_guard lock(budget.fingerprints_mutex);
  auto it = notes.find(key);
  if (it == notes.end()) return std::nullopt;
  return it->second;
}

// An embedded item's memory, counted by the caller's gate while the item is worked on. Only
// items of a kind lighten optimises are told: the others are left as they are at once.
MemoryHold admit_item(MemoryGate* gate, ByteView item, const Policy& policy) {
  if (gate == nullptr) return {};
  return MemoryHold(gate, gate->admit(item, policy));
}

}  // namespace

void EngineContext::note_fingerprint(ByteView input, const DecodedFingerprint& what) {
  remember(*budget_, budget_->fingerprints, input, what);
}

std::optional<DecodedFingerprint> EngineContext::fingerprint(ByteView input) const {
  return recall(*budget_, budget_->fingerprints, input);
}

void EngineContext::note_scored(ByteView input, const ScoredFingerprint& what) {
  remember(*budget_, budget_->scored, input, what);
}

std::optional<ScoredFingerprint> EngineContext::scored(ByteView input) const {
  return recall(*budget_, budget_->scored, input);
}

MemoryHold EngineContext::hold_memory(uint64_t bytes) {
  MemoryGate* gate = budget_->gate;
  if (gate == nullptr || bytes == 0) return {};
  // What the file's allowance still covers is taken from it; only the rest is admitted.
  uint64_t left = budget_->allowance_left.load();
  uint64_t covered = 0;
  do {
    covered = std::min(left, bytes);
  } while (!budget_->allowance_left.compare_exchange_weak(left, left - covered));
  const uint64_t beyond = bytes - covered;
  return MemoryHold(gate, beyond > 0 ? gate->admit_bytes(beyond) : 0, &budget_->allowance_left,
                    covered);
}

bool EngineContext::out_of_time() const { return Clock::now() > budget_->deadline; }

Outcome EngineContext::optimize_embedded_under(ByteView bytes, std::string_view name,
                                               const Policy& policy) {
  return embedded(bytes, name, policy, true);
}

Outcome EngineContext::optimize_embedded_again(ByteView bytes, std::string_view name,
                                               const Policy& policy) {
  return embedded(bytes, name, policy, false);
}

Outcome EngineContext::embedded(ByteView bytes, std::string_view name, const Policy& policy,
                                bool charge) {
  Outcome o;
  o.bytes_in = o.bytes_out = bytes.size();
  o.kind = sniff(bytes);
  if (depth_ + 1 > policy_.limits.max_depth)
    return keep(std::move(o), Reason::kLimitExceeded,
                std::string(name) + ": nested deeper than --max-depth " +
                    std::to_string(policy_.limits.max_depth));
  const uint64_t charged = charge ? bytes.size() : 0;
  const uint64_t total = budget_->expanded_bytes.fetch_add(charged) + charged;
  if (total > policy_.limits.max_expanded_bytes)
    return keep(std::move(o), Reason::kLimitExceeded,
                std::string(name) + ": the container expands past its size budget");
  MemoryHold admission;
  if (find_format(o.kind) != nullptr) admission = admit_item(budget_->gate, bytes, policy);
  EngineContext child(policy, depth_ + 1, budget_);
  return child.run(bytes);
}

Verdict EngineContext::verify_embedded_under(ByteView original, ByteView output,
                                             const Policy& policy) {
  const Kind kind = sniff(original);
  if (sniff(output) != kind) return {false, "the item changed kind", {}};
  const FormatEntry* format = find_format(kind);
  if (format == nullptr) return {false, "no verifier for " + std::string(kind_name(kind)), {}};
  const MemoryHold admission = admit_item(budget_->gate, original, policy);
  EngineContext child(policy, depth_ + 1, budget_);
  try {
    return format->verify(original, output, child);
  } catch (const FormatError& e) {
    // Out of time is the budget's verdict on the whole file, not a fault of this item: the
    // container's caller says so (limit-exceeded), where a failed check would ask for a report.
    if (e.reason() == Reason::kLimitExceeded) throw;
    return {false, std::string("verification could not decode the item: ") + e.what(), {}};
  } catch (const std::bad_alloc&) {
    throw;  // out of memory, as out of time
  } catch (const std::exception& e) {
    return {false, std::string("verification could not decode the item: ") + e.what(), {}};
  }
}

Outcome EngineContext::run(ByteView bytes) {
  const auto start = Clock::now();
  Outcome o;
  o.bytes_in = o.bytes_out = bytes.size();
  auto finish = [&](Outcome out) {
    out.timings.total_ms = ms_since(start);
    return out;
  };
  if (bytes.empty()) return finish(keep(std::move(o), Reason::kEmpty, "the file is empty"));
  o.kind = sniff(bytes);
  if (bytes.size() > policy_.limits.max_input_bytes)
    return finish(keep(std::move(o), Reason::kLimitExceeded,
                       "larger than --max-input-size " +
                           std::to_string(policy_.limits.max_input_bytes) + " bytes"));
  const FormatEntry* format = find_format(o.kind);
  if (format == nullptr)
    return finish(
        keep(std::move(o), Reason::kUnsupportedKind,
             "lighten has no optimiser for " + std::string(kind_name(o.kind)) + " files yet"));

  const Kind kind = o.kind;
  try {
    o = format->optimize(bytes, *this);
  } catch (const FormatError& e) {
    return finish(keep(std::move(o), e.reason(), with_offset(e)));
  } catch (const std::bad_alloc&) {
    return finish(keep(std::move(o), Reason::kLimitExceeded, "ran out of memory"));
  } catch (const std::exception& e) {
    return finish(
        keep(std::move(o), Reason::kInternalError, std::string("internal error: ") + e.what()));
  }
  o.kind = kind;
  o.bytes_in = bytes.size();
  o.timings.optimize_ms = ms_since(start);
  if (!o.replaced()) {
    if (o.message.empty() && o.reason == Reason::kNoGain) o.message = "no smaller encoding found";
    const Reason reason = o.reason;
    std::string message = o.message;
    return finish(keep(std::move(o), reason, std::move(message)));
  }
  o.bytes_out = o.output().size();
  if (!worth_keeping(o.bytes_in, o.bytes_out, policy_)) {
    const std::string message =
        o.bytes_out >= o.bytes_in
            ? "the best output (" + std::to_string(o.bytes_out) + " bytes) is not smaller"
            : "the best output saves " + std::to_string(o.bytes_in - o.bytes_out) +
                  " bytes, under the minimum gain";
    return finish(keep(std::move(o), Reason::kNoGain, message));
  }

  const auto verify_start = Clock::now();
  Verdict verdict;
  try {
    verdict = format->verify(bytes, o.output(), *this);
  } catch (const FormatError& e) {
    // Out of time (or past another budget) is the budget's verdict, not a fault of the output.
    if (e.reason() == Reason::kLimitExceeded)
      return finish(keep(std::move(o), Reason::kLimitExceeded,
                         std::string("verification stopped: ") + e.what()));
    verdict = {false, std::string("verification could not decode the output: ") + e.what(), {}};
  } catch (const std::bad_alloc&) {
    return finish(keep(std::move(o), Reason::kLimitExceeded, "verification ran out of memory"));
  } catch (const std::exception& e) {
    verdict = {false, std::string("verification could not decode the output: ") + e.what(), {}};
  }
  o.timings.verify_ms = ms_since(verify_start);
  if (!verdict.ok)
    return finish(
        keep(std::move(o), Reason::kVerifyFailed, "verification failed: " + verdict.problem));
  // The optimiser may know a lower figure than the verifier measures (an AVI's frames as
  // ffmpeg decodes them, beside libjpeg's view): the lower one stands.
  const std::optional<double> claimed = o.quality.ssimulacra2;
  o.quality = verdict.quality;
  if (claimed && o.quality.ssimulacra2)
    o.quality.ssimulacra2 = std::min(*claimed, *o.quality.ssimulacra2);
  // A JPEG's detail gives its score already; a document's or a video's gives it here, in the
  // words the reports read (ssimulacra2_from_detail).
  if (o.kind != Kind::kJpeg && o.quality.ssimulacra2 && !o.quality.pixels_identical)
    o.detail += (o.detail.empty() ? "" : "; ") + worst_score_text(*o.quality.ssimulacra2);
  o.reason = Reason::kOptimized;
  o.message.clear();
  return finish(std::move(o));
}

namespace {

Outcome optimize_with(std::span<const uint8_t> bytes, const Policy& policy, MemoryGate* gate) {
  auto budget = std::make_shared<SharedBudget>();
  budget->deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(policy.limits.time_budget_s));
  budget->gate = gate;
  if (gate != nullptr) budget->allowance_left = gate->allowance(bytes, policy);
  EngineContext root(policy, 0, std::move(budget));
  return root.run(bytes);
}

}  // namespace

Outcome optimize(std::span<const uint8_t> bytes, const Policy& policy) {
  return optimize_with(bytes, policy, nullptr);
}

Outcome optimize(std::span<const uint8_t> bytes, const Policy& policy, MemoryGate& gate) {
  return optimize_with(bytes, policy, &gate);
}

bool may_optimize(std::span<const uint8_t> head) {
  const Kind kind = sniff(head);
  if (find_format(kind) != nullptr) return true;
  // A head may hold only some of an archive's names (and a compound file's directory may lie
  // anywhere): what they make of it is the whole file's to say.
  return starts_with(head, "PK") || kind == Kind::kCfb;
}

FileInfo describe(std::span<const uint8_t> bytes) {
  FileInfo info;
  info.kind = sniff(bytes);
  info.properties.emplace_back(
      "size", std::to_string(bytes.size()) + (bytes.size() == 1 ? " byte" : " bytes"));
  const FormatEntry* format = find_format(info.kind);
  info.supported = format != nullptr;
  if (format == nullptr) return info;
  try {
    format->describe(bytes, info);
  } catch (const FormatError& e) {
    info.problem = std::string(reason_name(e.reason())) + ": " + with_offset(e);
    info.problem_reason = e.reason();
  } catch (const std::exception& e) {
    info.problem = e.what();
    info.problem_reason = Reason::kInternalError;
  }
  return info;
}

std::string_view version() { return LIGHTEN_VERSION; }

}  // namespace lighten
