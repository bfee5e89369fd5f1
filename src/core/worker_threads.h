// Work spread over threads the system may refuse: a container's task limit or an address-space
// limit makes std::thread throw, and a thread left joinable when that exception unwinds ends
// the process. Whatever the system gives does the work.
#pragma once

#include <functional>

namespace lighten {

// Runs work(i) on up to `wanted` threads, i = 0.. the number started, and joins them; where the
// system refuses every thread, runs work(0) on the calling thread. Each call of `work` must take
// from a shared queue, so that fewer threads still finish everything. Returns how many ran it
// (at least 1 when wanted > 0).
unsigned run_on_threads(unsigned wanted, const std::function<void(unsigned)>& work);

}  // namespace lighten
