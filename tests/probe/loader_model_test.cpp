// The loader model on synthetic timings: each case has a bound one can work out by hand.
#include <gtest/gtest.h>

#include <vector>

#include "probe/loader_model.h"
#include "probe/recommend.h"

namespace lighten::probe {
namespace {

std::vector<SampleTiming> uniform(size_t n, SampleTiming t) { return std::vector(n, t); }

LoaderConfig config(uint32_t workers, uint32_t batch, double cores = 8) {
  LoaderConfig c;
  c.workers = workers;
  c.batch = batch;
  c.cores = cores;
  c.batches = 200;
  return c;
}

TEST(LoaderModel, DecodeBoundScalesWithWorkers) {
  const auto samples =
      uniform(100, {.open_ms = 0.01, .read_ms = 0.09, .decode_ms = 49.9, .bytes = 100'000});
  for (uint32_t w : {1u, 2u, 4u}) {
    const LoaderRun run = simulate_loader(samples, config(w, 4));
    EXPECT_NEAR(run.figures.samples_per_s, w * 20.0, w * 20.0 * 0.02) << w << " workers";
    EXPECT_EQ(run.figures.bound, "decode");
    EXPECT_GT(run.figures.decode_share, 0.95);
    EXPECT_NEAR(run.figures.batch_ms.p50, 4 * 50.0, 1e-6);  // four samples of 50 ms each
  }
}

TEST(LoaderModel, DecodersBeyondTheCoresSlowEachOtherDown) {
  const auto samples = uniform(10, {.decode_ms = 10});
  const LoaderRun run = simulate_loader(samples, config(4, 1, /*cores=*/2));
  EXPECT_NEAR(run.figures.samples_per_s, 200.0, 4.0);  // two cores' worth, not four
}

TEST(LoaderModel, IoBoundByTheSharedLinkWhateverTheWorkers) {
  const auto samples =
      uniform(50, {.open_ms = 0.05, .read_ms = 0.5, .decode_ms = 5, .bytes = 1'000'000});
  for (uint32_t w : {1u, 4u, 8u}) {
    LoaderConfig c = config(w, 8);
    c.link_bytes_per_s = 10e6;  // 10 MB/s: ten 1 MB samples per second at most
    const LoaderRun run = simulate_loader(samples, c);
    EXPECT_LT(run.figures.samples_per_s, 10.0 * 1.001) << w;
    EXPECT_GT(run.figures.samples_per_s, 10.0 * (w == 1 ? 0.9 : 0.98)) << w;
    EXPECT_EQ(run.figures.bound, "read");
    EXPECT_GT(run.figures.link_busy, w == 1 ? 0.9 : 0.98);
    EXPECT_GT(run.figures.consumer_wait, 0.9);
  }
}

TEST(LoaderModel, ConsumerBoundWhenTheStepIsSlowest) {
  const auto samples =
      uniform(64, {.open_ms = 0.02, .read_ms = 0.2, .decode_ms = 5, .bytes = 200'000});
  LoaderConfig c = config(4, 8);
  c.step_ms = 100;  // the loader makes a batch of 8 in 40 ms per worker; the step takes 100
  const LoaderRun run = simulate_loader(samples, c);
  EXPECT_NEAR(run.figures.samples_per_s, 80.0, 1.0);
  EXPECT_LT(run.figures.consumer_wait, 0.01);
  EXPECT_EQ(run.figures.bound, "consumer");
  EXPECT_GT(run.figures.idle_share, 0.8);  // workers wait on the prefetch limit
}

TEST(LoaderModel, OpenLatencyBound) {
  const auto samples =
      uniform(20, {.open_ms = 0.01, .read_ms = 0.1, .decode_ms = 1, .bytes = 10'000});
  LoaderConfig c = config(2, 4);
  c.open_delay_ms = 20;
  const LoaderRun run = simulate_loader(samples, c);
  EXPECT_EQ(run.figures.bound, "open");
  EXPECT_NEAR(run.figures.samples_per_s, 2 * 1000.0 / 21.11, 1.0);
}

TEST(LoaderModel, MixedSamplesAreTakenCyclically) {
  // One slow sample in four: a batch of four always holds exactly one.
  std::vector<SampleTiming> samples{
      {.decode_ms = 40}, {.decode_ms = 0}, {.decode_ms = 0}, {.decode_ms = 0}};
  const LoaderRun run = simulate_loader(samples, config(1, 4));
  EXPECT_NEAR(run.figures.batch_ms.p95, 40, 1e-9);
  EXPECT_NEAR(run.figures.samples_per_s, 100.0, 0.01);
}

// The cores the loader's workers get: measured (workers over the slowdown of decoding side by
// side), but never more than the process may use, which a sample of fewer files than workers
// did not show (258 samples a second modelled on 2 cores that decode 89).
TEST(LoaderModel, WorkersGetNoMoreCoresThanTheProcessMayUse) {
  TreeProbe tree;
  tree.parallel_decode_slowdown = 1.0;
  ProbeOptions o;
  o.workers = 8;
  EXPECT_DOUBLE_EQ(effective_cores(tree, o, 2), 2.0);
  EXPECT_DOUBLE_EQ(effective_cores(tree, o, 16), 8.0);
  tree.parallel_decode_slowdown = 4.0;
  EXPECT_DOUBLE_EQ(effective_cores(tree, o, 16), 2.0);
}

TEST(LoaderModel, NothingToModel) {
  EXPECT_EQ(simulate_loader({}, config(2, 4)).figures.samples_per_s, 0);
  LoaderConfig none = config(2, 4);
  none.batches = 0;
  const auto samples = uniform(3, {.decode_ms = 1});
  EXPECT_EQ(simulate_loader(samples, none).samples, 0u);
}

}  // namespace
}  // namespace lighten::probe
