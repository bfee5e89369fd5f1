// Runs the files of a batch on a pool of threads under a memory budget.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>

namespace lighten::batch {

struct SchedulerStats {
  uint64_t peak_in_flight = 0;  // largest sum of estimates and reservations at once
  size_t peak_running = 0;      // most tasks running at once
  size_t started = 0;           // tasks started (all of them unless `stop` said so)
  size_t workers = 0;           // threads that ran them (fewer than asked if the system refused)
};

class Scheduler {
 public:
  // `jobs` workers (0 = one per core this process may use); `budget` bytes of estimates in
  // flight (0 = default_memory_budget()).
  Scheduler(unsigned jobs, uint64_t budget);

  // Runs work(i) for i in [0, count), starting tasks in index order. A task starts only while
  // the estimates in flight plus its own stay within the budget; a task larger than the whole
  // budget runs alone. estimate(i) is called once per task, in index order, outside the
  // scheduler's lock (it may read the file). Once `stop` (when given) returns true, no further
  // task starts. Returns when all started are done. None may throw.
  SchedulerStats run(size_t count, const std::function<uint64_t(size_t)>& estimate,
                     const std::function<void(size_t)>& work,
                     const std::function<bool()>& stop = {});

  // From inside work(): counts `bytes` more in flight until release(), first waiting until they
  // fit beside the estimates and reservations in flight. While a reservation waits no task
  // starts. Waiters are served in turn; the first goes ahead over the budget once every task
  // running is waiting too (or it runs alone), since waiting longer could never end.
  void reserve(uint64_t bytes);
  void release(uint64_t bytes);

  unsigned jobs() const { return jobs_; }
  uint64_t budget() const { return budget_; }

 private:
  unsigned jobs_;
  uint64_t budget_;
  // What the workers of a run share, under `mutex`.
  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t in_flight_ = 0;
  size_t running_ = 0;
  size_t waiting_ = 0;                          // tasks waiting in reserve()
  uint64_t next_ticket_ = 0, now_serving_ = 0;  // reserve()'s turns
  SchedulerStats stats_;
};

// Half of the memory this process may use (physical, or its control group's limit if lower), at
// most 8 GiB: the default budget.
uint64_t default_memory_budget();

}  // namespace lighten::batch
