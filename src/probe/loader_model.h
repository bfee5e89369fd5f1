// A model of a PyTorch-style data loader on measured (or synthetic) per-file timings: W workers
// each open, read and decode whole batches, batches are handed out round-robin with a prefetch
// of two per worker and consumed in order by one consumer that spends `step_ms` on each. Pure:
// simulated time only, so it is unit-testable and cheap to re-run for what-if questions.
#pragma once

#include <cstdint>
#include <span>

#include "lighten/probe.h"

namespace lighten::probe {

struct SampleTiming {
  double open_ms = 0;    // open on this storage, without any emulated delay
  double read_ms = 0;    // whole-file read on this storage, without the emulated link
  double decode_ms = 0;  // one core
  uint64_t bytes = 0;
};

struct LoaderConfig {
  uint32_t workers = 1;
  uint32_t batch = 1;
  double step_ms = 0;           // consumer time per batch
  uint32_t prefetch = 2;        // batches in flight per worker (PyTorch's prefetch_factor)
  double link_bytes_per_s = 0;  // shared emulated link; 0 = none
  double link_burst_bytes = 0;  // what the link lets through at once
  double open_delay_ms = 0;     // emulated latency per open
  double cores = 1;             // decoders beyond this many slow each other down
  uint64_t batches = 0;         // batches to simulate; samples are taken cyclically
};

struct LoaderRun {
  LoaderFigures figures;
  double seconds = 0;  // simulated time until the last batch is consumed
  uint64_t samples = 0;
  uint64_t bytes = 0;
};

LoaderRun simulate_loader(std::span<const SampleTiming> samples, const LoaderConfig& config);

}  // namespace lighten::probe
