// The shared token bucket: rates, bursts, and one budget for many threads.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "probe/token_bucket.h"

namespace lighten::probe {
namespace {

// Time moves only when a test says so; sleeps are recorded, not slept.
class ManualClock final : public Clock {
 public:
  double now() override {
    std::lock_guard lock(mutex_);
    return now_;
  }
  void sleep_for(double seconds) override {
    std::lock_guard lock(mutex_);
    slept_ += seconds;
  }
  void advance(double seconds) {
    std::lock_guard lock(mutex_);
    now_ += seconds;
  }
  double slept() {
    std::lock_guard lock(mutex_);
    return slept_;
  }

 private:
  std::mutex mutex_;
  double now_ = 100;
  double slept_ = 0;
};

TEST(TokenBucket, BurstPassesAtOnceThenTheRateHolds) {
  ManualClock clock;
  TokenBucket bucket(1000, 100, clock);  // 1000 bytes/s, 100 bytes of burst
  EXPECT_DOUBLE_EQ(bucket.acquire(100), 0.0);
  EXPECT_NEAR(bucket.acquire(100), 0.1, 1e-12);  // the next 100 bytes wait 0.1 s
  EXPECT_NEAR(bucket.acquire(50), 0.15, 1e-12);  // queued behind the first debt
}

TEST(TokenBucket, RefillsAtTheRateUpToTheBurstOnly) {
  ManualClock clock;
  TokenBucket bucket(1000, 100, clock);
  EXPECT_DOUBLE_EQ(bucket.acquire(100), 0.0);
  clock.advance(0.05);  // 50 bytes back
  EXPECT_NEAR(bucket.acquire(50), 0.0, 1e-9);
  clock.advance(10);  // an idle link saves at most the burst
  EXPECT_DOUBLE_EQ(bucket.acquire(100), 0.0);
  EXPECT_NEAR(bucket.acquire(1000), 1.0, 1e-12);
}

// One reader alone cannot spend what built up while it waited for an open or decoded: drained,
// the next bytes wait for the link; a debt is not forgiven.
TEST(TokenBucket, DrainSpendsWhatAnIdleLinkSaved) {
  ManualClock clock;
  TokenBucket bucket(1000, 100, clock);
  clock.advance(10);
  bucket.drain();
  EXPECT_NEAR(bucket.acquire(100), 0.1, 1e-12);
  bucket.drain();
  EXPECT_NEAR(bucket.acquire(100), 0.2, 1e-12);  // still behind the first 100
}

TEST(TokenBucket, RequestsLargerThanTheBurstArePaidBackAtTheRate) {
  ManualClock clock;
  TokenBucket bucket(1e6, 1000, clock);
  EXPECT_NEAR(bucket.acquire(2e6 + 1000), 2.0, 1e-9);
}

TEST(TokenBucket, ThreadsShareOneBudget) {
  ManualClock clock;
  TokenBucket bucket(1e6, 0, clock);  // 1 MB/s, no burst
  constexpr int kThreads = 8, kChunks = 100;
  std::vector<std::thread> threads;
  std::atomic<int> chunks{0};
  std::vector<double> last_wait(kThreads);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kChunks; ++i) {
        last_wait[size_t(t)] = bucket.acquire(1000);
        ++chunks;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(chunks.load(), kThreads * kChunks);
  // 800 kB through 1 MB/s: whoever was served last waits 0.8 s, whatever the interleaving.
  double latest = 0;
  for (double w : last_wait) latest = std::max(latest, w);
  EXPECT_NEAR(latest, 0.8, 1e-9);
}

TEST(TokenBucket, RealClockHoldsTheRateAcrossThreads) {
  SteadyClock clock;
  TokenBucket bucket(4e6, 64 << 10, clock);  // 4 MB/s
  const double start = clock.now();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 8; ++i) bucket.acquire(32 << 10);  // 256 KiB per thread
    });
  for (auto& th : threads) th.join();
  const double seconds = clock.now() - start;
  // 1 MiB minus the 64 KiB burst at 4 MB/s: 0.246 s; allow for a busy machine above.
  EXPECT_GT(seconds, 0.22);
  EXPECT_LT(seconds, 1.0);
}

TEST(BucketLedger, IsTheSameArithmeticOnSimulatedTime) {
  BucketLedger ledger(1.0, 10);  // 1 unit per ms in the loader model's units
  EXPECT_DOUBLE_EQ(ledger.reserve(0, 10), 0);
  EXPECT_DOUBLE_EQ(ledger.reserve(0, 5), 5);
  EXPECT_DOUBLE_EQ(ledger.reserve(20, 10), 0);  // refilled to the burst by t = 20
}

}  // namespace
}  // namespace lighten::probe
