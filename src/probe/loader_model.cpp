#include "probe/loader_model.h"

#include <algorithm>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

#include "probe/stats.h"
#include "probe/token_bucket.h"

namespace lighten::probe {
namespace {

constexpr double kUnknown = -1;
// Below this share of waiting the consumer (the GPU step) is what limits the run.
constexpr double kConsumerBoundWait = 0.10;

struct Worker {
  uint64_t batch = 0;  // current batch, when busy
  bool busy = false;
  uint32_t sample = 0;  // index inside the batch
  int stage = 0;        // 0 open, 1 read, 2 decode
  double t = 0;
  uint64_t next_batch = 0;
};

}  // namespace

LoaderRun simulate_loader(std::span<const SampleTiming> samples, const LoaderConfig& config) {
  LoaderRun run;
  const uint32_t workers = std::max<uint32_t>(config.workers, 1);
  const uint32_t batch = std::max<uint32_t>(config.batch, 1);
  const uint64_t batches = config.batches;
  if (samples.empty() || batches == 0) return run;
  const uint64_t in_flight = uint64_t(std::max<uint32_t>(config.prefetch, 1)) * workers;
  // Decoders share the cores; more decoding workers than cores slow each other down.
  const double contention = std::max(1.0, double(workers) / std::max(config.cores, 0.01));
  std::optional<BucketLedger> link;
  if (config.link_bytes_per_s > 0)
    link.emplace(config.link_bytes_per_s / 1000.0, config.link_burst_bytes);  // per ms

  std::vector<double> start(batches, kUnknown), ready(batches, kUnknown),
      consume_start(batches, kUnknown);
  std::vector<Worker> pool(workers);
  for (uint32_t w = 0; w < workers; ++w) pool[w].next_batch = w;
  double open_ms = 0, read_ms = 0, decode_ms = 0, consumer_wait = 0, consumer_end = 0;
  uint64_t consumed = 0;

  auto dispatch_time = [&](uint64_t k) {
    return k < in_flight ? 0.0 : consume_start[k - in_flight];
  };
  // The runnable workers by the time of their next action (ties: the lowest index). An idle
  // worker whose next batch waits for a slot (the consumer to take batch k - in_flight) is out
  // of the queue until that batch is consumed.
  using Event = std::pair<double, uint32_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> runnable;
  auto schedule_idle = [&](uint32_t index) {
    const Worker& w = pool[index];
    if (w.next_batch >= batches) return;
    const double d = dispatch_time(w.next_batch);
    if (d != kUnknown) runnable.emplace(std::max(w.t, d), index);
  };
  for (uint32_t w = 0; w < workers; ++w) schedule_idle(w);
  while (consumed < batches) {
    // The runnable worker with the earliest next action moves one stage, so link requests are
    // served in time order.
    if (runnable.empty()) break;  // cannot happen: an earlier batch is always in progress
    const auto [next_t, index] = runnable.top();
    runnable.pop();
    Worker& w = pool[index];
    if (!w.busy) {
      w.busy = true;
      w.batch = w.next_batch;
      w.next_batch += workers;
      w.sample = 0;
      w.stage = 0;
      w.t = next_t;
      start[w.batch] = w.t;
    }
    const SampleTiming& s = samples[(w.batch * batch + w.sample) % samples.size()];
    if (w.stage == 0) {
      const double ms = s.open_ms + config.open_delay_ms;
      w.t += ms, open_ms += ms, w.stage = 1;
      runnable.emplace(w.t, index);
      continue;
    }
    if (w.stage == 1) {
      double ms = s.read_ms;
      if (link) ms += link->reserve(w.t + s.read_ms, double(s.bytes));
      w.t += ms, read_ms += ms, w.stage = 2;
      run.bytes += s.bytes;
      runnable.emplace(w.t, index);
      continue;
    }
    const double ms = s.decode_ms * contention;
    w.t += ms, decode_ms += ms, w.stage = 0;
    if (++w.sample < batch) {
      runnable.emplace(w.t, index);
      continue;
    }
    w.busy = false;
    ready[w.batch] = w.t;
    while (consumed < batches && ready[consumed] != kUnknown) {
      const double begin = std::max(ready[consumed], consumer_end);
      consumer_wait += begin - consumer_end;
      consume_start[consumed] = begin;
      consumer_end = begin + config.step_ms;
      // The worker whose next batch waited for this slot may start it now.
      const uint64_t freed = consumed + in_flight;
      const uint32_t waiting = uint32_t(freed % workers);
      if (freed < batches && waiting != index && !pool[waiting].busy &&
          pool[waiting].next_batch == freed)
        schedule_idle(waiting);
      ++consumed;
    }
    schedule_idle(index);
  }

  LoaderFigures& f = run.figures;
  std::vector<double> prep(batches);
  for (uint64_t k = 0; k < batches; ++k) prep[k] = ready[k] - start[k];
  f.batch_ms = summarize(prep);
  run.samples = batches * batch;
  run.seconds = consumer_end / 1000.0;
  if (consumer_end <= 0) return run;
  f.samples_per_s = double(run.samples) / run.seconds;
  f.mb_per_s = double(run.bytes) / 1e6 / run.seconds;
  f.consumer_wait = consumer_wait / consumer_end;
  if (link) f.link_busy = std::min(1.0, double(run.bytes) / config.link_bytes_per_s / run.seconds);
  const double worker_time = consumer_end * workers;
  f.open_share = open_ms / worker_time;
  f.read_share = read_ms / worker_time;
  f.decode_share = decode_ms / worker_time;
  f.idle_share = std::max(0.0, 1.0 - f.open_share - f.read_share - f.decode_share);
  if (f.consumer_wait < kConsumerBoundWait) {
    f.bound = "consumer";
  } else if (f.decode_share >= f.read_share && f.decode_share >= f.open_share) {
    f.bound = "decode";
  } else {
    f.bound = f.read_share >= f.open_share ? "read" : "open";
  }
  return run;
}

}  // namespace lighten::probe
