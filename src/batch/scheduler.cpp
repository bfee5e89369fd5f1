#include "batch/scheduler.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/machine_limits.h"
#include "core/worker_threads.h"

namespace lighten::batch {
namespace {
constexpr uint64_t kMaxDefaultBudget = 8ull << 30;
}  // namespace

uint64_t default_memory_budget() {
  const std::optional<uint64_t> memory = usable_memory();
  if (!memory) return 1ull << 30;
  return std::clamp<uint64_t>(*memory / 2, 1, kMaxDefaultBudget);
}

Scheduler::Scheduler(unsigned jobs, uint64_t budget)
    : jobs_(jobs ? jobs : usable_cores()), budget_(budget ? budget : default_memory_budget()) {}

SchedulerStats Scheduler::run(size_t count, const std::function<uint64_t(size_t)>& estimate,
                              const std::function<void(size_t)>& work,
                              const std::function<bool()>& stop) {
  size_t next = 0;
  {
    std::lock_guard lock(mutex_);
    in_flight_ = 0;
    running_ = waiting_ = 0;
    next_ticket_ = now_serving_ = 0;
    stats_ = {};
  }

  // Each task's estimate, made once when the task reaches the head of the queue: it may read
  // the file's header, so it is made outside the lock while the other workers wait for it.
  std::vector<uint64_t> needs(count, 0);
  std::vector<bool> known(count, false);
  bool estimating = false;

  auto worker = [&]() {
    std::unique_lock lock(mutex_);
    for (;;) {
      // Strict index order: a big file waits at the head until memory frees up, rather than
      // being overtaken forever by small ones.
      // Stopping is polled: the flag is set from a signal handler, which cannot notify.
      auto stopping = [&] { return stop && stop(); };
      const auto ready = [&]() {
        if (next >= count || stopping()) return true;
        if (!known[next]) return !estimating;
        if (waiting_ != 0) return false;  // the memory is promised to a running task first
        const uint64_t need = needs[next];
        return running_ == 0 || (need <= budget_ && in_flight_ + need <= budget_);
      };
      while (!ready()) changed_.wait_for(lock, std::chrono::milliseconds(100));
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
        changed_.notify_all();
        continue;
      }
      size_t index = next++;
      ++stats_.started;
      uint64_t need = needs[index];
      in_flight_ += need;
      ++running_;
      stats_.peak_in_flight = std::max(stats_.peak_in_flight, in_flight_);
      stats_.peak_running = std::max(stats_.peak_running, running_);
      lock.unlock();
      changed_.notify_all();  // the next task may fit too
      work(index);
      lock.lock();
      in_flight_ -= need;
      --running_;
      changed_.notify_all();
    }
  };

  const unsigned threads = unsigned(std::min<size_t>(jobs_, std::max<size_t>(count, 1)));
  // The system may refuse threads (a container's task limit): the ones it gave do the work.
  const unsigned workers = run_on_threads(threads, [&](unsigned) { worker(); });
  std::lock_guard lock(mutex_);
  stats_.workers = workers;
  return stats_;
}

void Scheduler::reserve(uint64_t bytes) {
  std::unique_lock lock(mutex_);
  const uint64_t ticket = next_ticket_++;
  ++waiting_;
  changed_.notify_all();  // the first waiter may go ahead once every task waits
  const auto ready = [&] {
    if (ticket != now_serving_) return false;
    return waiting_ >= running_ || (bytes <= budget_ && in_flight_ + bytes <= budget_);
  };
  while (!ready()) changed_.wait_for(lock, std::chrono::milliseconds(100));
  --waiting_;
  ++now_serving_;
  in_flight_ += bytes;
  stats_.peak_in_flight = std::max(stats_.peak_in_flight, in_flight_);
  lock.unlock();
  changed_.notify_all();  // the next waiter may fit too
}

void Scheduler::release(uint64_t bytes) {
  {
    std::lock_guard lock(mutex_);
    in_flight_ -= std::min(bytes, in_flight_);
  }
  changed_.notify_all();
}

}  // namespace lighten::batch
