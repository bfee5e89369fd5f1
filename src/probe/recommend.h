// Plain sentences with numbers that say what would help, from the measurements and what-if
// runs of the loader model.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "lighten/probe.h"
#include "probe/loader_model.h"

namespace lighten::probe {

// The loader model's settings for a probe run over `samples`, with `cores` for decoding.
LoaderConfig loader_config(const ProbeOptions& options, double cores,
                           std::span<const SampleTiming> samples);
// Cores the tree's workers really got while decoding together (all of them for one worker).
double effective_cores(const TreeProbe& tree, const ProbeOptions& options, unsigned cores);

std::vector<std::string> recommend(const ProbeReport& report,
                                   std::span<const SampleTiming> original,
                                   std::span<const SampleTiming> optimised);

}  // namespace lighten::probe
