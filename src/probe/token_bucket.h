// One shared token bucket: every read of a probe run draws its bytes from it, so W readers
// together never exceed the emulated link rate, as on a real NAS or object-store link.
#pragma once

#include <cstdint>
#include <mutex>

namespace lighten::probe {

// Time source; tests inject a manual one so rates are checked without sleeping.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual double now() = 0;  // seconds, monotonic
  virtual void sleep_for(double seconds) = 0;
};

class SteadyClock final : public Clock {
 public:
  double now() override;
  void sleep_for(double seconds) override;
};

// The bucket's arithmetic without locks or clocks, so the loader model can reuse it on
// simulated time. Reservations may overdraw: a request larger than the burst is granted and
// paid back at `rate`, so callers are served first come, first served.
class BucketLedger {
 public:
  BucketLedger(double rate, double burst) : rate_(rate), burst_(burst), tokens_(burst) {}
  // Takes `amount` at time `now`; returns how long the caller must wait before using it.
  double reserve(double now, double amount);
  // Spends what has built up by `now`: the next bytes wait for the link.
  void drain(double now);
  double rate() const { return rate_; }
  double burst() const { return burst_; }

 private:
  double rate_;
  double burst_;
  double tokens_;
  double last_ = 0;
  bool started_ = false;
};

// Thread-safe bucket on a clock. acquire() blocks (through the clock) until the bytes may pass.
class TokenBucket {
 public:
  // rate in units per second (> 0); burst in units (the most that passes without waiting).
  TokenBucket(double rate, double burst, Clock& clock) : ledger_(rate, burst), clock_(clock) {}
  // Returns the seconds this caller waited.
  double acquire(double amount);
  // Spends what has built up while the link was idle (see BucketLedger::drain).
  void drain();
  double rate() const { return ledger_.rate(); }

 private:
  std::mutex mutex_;
  BucketLedger ledger_;
  Clock& clock_;
};

}  // namespace lighten::probe
