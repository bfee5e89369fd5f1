#include "probe/token_bucket.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace lighten::probe {

double SteadyClock::now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void SteadyClock::sleep_for(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

double BucketLedger::reserve(double now, double amount) {
  if (!started_) {
    started_ = true;
    last_ = now;
  }
  if (now > last_) {
    tokens_ = std::min(burst_, tokens_ + (now - last_) * rate_);
    last_ = now;
  }
  tokens_ -= amount;
  return tokens_ >= 0 ? 0.0 : -tokens_ / rate_;
}

void BucketLedger::drain(double now) {
  reserve(now, 0);
  tokens_ = std::min(tokens_, 0.0);
}

void TokenBucket::drain() {
  std::lock_guard lock(mutex_);
  ledger_.drain(clock_.now());
}

double TokenBucket::acquire(double amount) {
  double wait;
  {
    // Only the reservation is under the lock; waiting happens outside so readers overlap.
    std::lock_guard lock(mutex_);
    wait = ledger_.reserve(clock_.now(), amount);
  }
  clock_.sleep_for(wait);
  return wait;
}

}  // namespace lighten::probe
