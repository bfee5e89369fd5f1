#include "core/worker_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

namespace lighten {
namespace {

TEST(RunOnThreads, EachIndexRunsOnceOnItsOwnThread) {
  std::mutex m;
  std::multiset<unsigned> indices;
  std::set<std::thread::id> threads;
  EXPECT_EQ(run_on_threads(4,
                           [&](unsigned i) {
                             std::lock_guard lock(m);
                             indices.insert(i);
                             threads.insert(std::this_thread::get_id());
                           }),
            4u);
  EXPECT_EQ(indices, (std::multiset<unsigned>{0, 1, 2, 3}));
  EXPECT_EQ(threads.size(), 4u);
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
}

TEST(RunOnThreads, NoneWantedRunsNothing) {
  std::atomic<int> calls{0};
  EXPECT_EQ(run_on_threads(0, [&](unsigned) { ++calls; }), 0u);
  EXPECT_EQ(calls.load(), 0);
}

}  // namespace
}  // namespace lighten
