#include "batch/scheduler.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace lighten::batch {
namespace {
constexpr uint64_t kMaxDefaultBudget = 8ull << 30;
}  // namespace

uint64_t default_memory_budget() {
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 1ull << 30;
  return std::min(uint64_t(pages) * uint64_t(page_size) / 2, kMaxDefaultBudget);
}

Scheduler::Scheduler(unsigned jobs, uint64_t budget)
    : jobs_(jobs ? jobs : std::max(1u, std::thread::hardware_concurrency())),
      budget_(budget ? budget : default_memory_budget()) {}

SchedulerStats Scheduler::run(size_t count, const std::function<uint64_t(size_t)>& estimate,
                              const std::function<void(size_t)>& work,
                              const std::function<bool()>& stop) {
  std::mutex mutex;
  std::condition_variable changed;
  size_t next = 0;
  uint64_t in_flight = 0;
  size_t running = 0;
  SchedulerStats stats;

  // Each task's estimate, made once when the task reaches the head of the queue: it may read
  // the file's header, so it is made outside the lock while the other workers wait for it.
  std::vector<uint64_t> needs(count, 0);
  std::vector<bool> known(count, false);
  bool estimating = false;

  auto worker = [&]() {
    std::unique_lock lock(mutex);
    for (;;) {
      // Strict index order: a big file waits at the head until memory frees up, rather than
      // being overtaken forever by small ones.
      // Stopping is polled: the flag is set from a signal handler, which cannot notify.
      auto stopping = [&] { return stop && stop(); };
      const auto ready = [&]() {
        if (next >= count || stopping()) return true;
        if (!known[next]) return !estimating;
        const uint64_t need = needs[next];
        return running == 0 || (need <= budget_ && in_flight + need <= budget_);
      };
      while (!ready()) changed.wait_for(lock, std::chrono::milliseconds(100));
      if (next >= count || stopping()) return;
      if (!known[next]) {
        const size_t head = next;
        estimating = true;
        lock.unlock();
        const uint64_t need = estimate(head);
        lock.lock();
        needs[head] = need;
        known[head] = true;
        estimating = false;
        changed.notify_all();
        continue;
      }
      size_t index = next++;
      ++stats.started;
      uint64_t need = needs[index];
      in_flight += need;
      ++running;
      stats.peak_in_flight = std::max(stats.peak_in_flight, in_flight);
      stats.peak_running = std::max(stats.peak_running, running);
      lock.unlock();
      changed.notify_all();  // the next task may fit too
      work(index);
      lock.lock();
      in_flight -= need;
      --running;
      changed.notify_all();
    }
  };

  unsigned threads = unsigned(std::min<size_t>(jobs_, std::max<size_t>(count, 1)));
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return stats;
}

}  // namespace lighten::batch
