#include "core/worker_threads.h"

#include <exception>
#include <thread>
#include <vector>

namespace lighten {

unsigned run_on_threads(unsigned wanted, const std::function<void(unsigned)>& work) {
  if (wanted == 0) return 0;
  std::vector<std::thread> pool;
  try {
    pool.reserve(wanted);
    for (unsigned i = 0; i < wanted; ++i) pool.emplace_back(work, i);
  } catch (const std::exception&) {  // std::system_error, or std::bad_alloc for a thread's state
  }
  if (pool.empty()) work(0);
  for (std::thread& t : pool) t.join();
  return pool.empty() ? 1 : unsigned(pool.size());
}

}  // namespace lighten
