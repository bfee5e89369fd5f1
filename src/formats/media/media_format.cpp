#include "formats/media/media_format.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <vector>

#include "core/errors.h"
#include "formats/media/av_reencode.h"
#include "formats/media/frame_gate.h"

namespace lighten {
namespace {

using namespace media;

// Frames the search scores per candidate; the chosen one and the verifier score every frame.
constexpr uint32_t kSearchSamples = 12;
constexpr uint32_t kEveryFrame = 0;
// A frame's worst 256-pixel tile may sit this far under the floor (as for JPEG photos).
constexpr double kTileMargin = 10.0;
// The least the container's duration may move by (a muxer rounds to its time scale).
constexpr double kDurationTolerance_s = 0.002;

// The settings tried, finest first: CRF for x264/x265, qscale for MPEG-4 part 2.
std::vector<int> candidate_values(const std::string& knob) {
  if (knob == "crf") return {16, 18, 20, 22, 24, 26, 28, 30, 32};
  return {2, 3, 4, 5, 6, 8, 10};
}

VideoFrames checked_probe(ByteView input, const Policy& policy) {
  if (policy.mode == Mode::kLossless)
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "lossless mode does not re-encode lossy video (a perceptual --mode does)");
  VideoFrames probe = probe_video(input);
  if (probe.encrypted)
    throw FormatError(Reason::kEncrypted, 0, "a stream is encrypted (DRM): left as it is");
  if (!probe.marker.empty())
    throw FormatError(Reason::kAlreadyOptimized, 0,
                      "re-encoded by lighten already (" + probe.marker +
                          "): a second re-encode would lose quality again");
  if (!same_codec_encoder(probe.codec, 0))
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      probe.codec + " video is not re-encoded (H.264, HEVC and MPEG-4 part 2 are)");
  return probe;
}

struct Candidate {
  int value = 0;
  Bytes bytes;
  GateResult gate;
};

}  // namespace

Outcome optimize_media(ByteView input, Context& context) {
  const Policy& policy = context.policy();
  const VideoFrames probe = checked_probe(input, policy);
  const double floor = quality_floor(policy);
  const EncoderChoice base = *same_codec_encoder(probe.codec, 0);
  const std::vector<int> values = candidate_values(base.knob);

  // Binary search for the coarsest setting whose sampled frames all meet the floor; coarser
  // settings give smaller files, so that one is the smallest that passes. Then every frame of
  // the choice is scored, and finer settings are taken while one falls short.
  std::optional<Candidate> best;
  size_t tried = 0;
  auto attempt = [&](int index, uint32_t samples) {
    if (context.out_of_time())
      throw FormatError(Reason::kLimitExceeded, 0, "the time budget ran out during the search");
    Candidate c{values[size_t(index)], {}, {}};
    EncoderChoice choice = *same_codec_encoder(probe.codec, c.value);
    if (policy.quality_marker == QualityMarker::kWrite)
      choice.marker = fmt::format("{} {} {}, SSIMULACRA2 floor {:.1f}", choice.encoder, choice.knob,
                                  choice.value, floor);
    c.bytes = reencode_video(input, choice, &context);
    c.gate = frame_gate(input, c.bytes, floor, samples, kTileMargin, &context);
    ++tried;
    return c;
  };
  int lo = 0, hi = int(values.size()) - 1, chosen = -1;
  while (lo <= hi) {
    const int mid = (lo + hi) / 2;
    Candidate c = attempt(mid, kSearchSamples);
    if (c.gate.passes) {
      best = std::move(c);
      chosen = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  for (; best && chosen >= 0; --chosen) {
    if (best->value != values[size_t(chosen)] || best->gate.compared < size_t(probe.packets))
      best = attempt(chosen, kEveryFrame);
    if (best->gate.passes) break;
    if (chosen == 0) best.reset();
  }
  Outcome outcome;
  outcome.bytes_in = input.size();
  if (!best) {
    outcome.action = Action::kKept;
    outcome.reason = Reason::kNoGain;
    outcome.message = fmt::format(
        "no {} {} from {} to {} keeps every sampled frame at SSIMULACRA2 {:.1f} ({} tries)",
        base.encoder, base.knob, values.front(), values.back(), floor, tried);
    return outcome;
  }
  outcome.action = Action::kReplaced;
  outcome.bytes = std::move(best->bytes);
  outcome.bytes_out = outcome.bytes.size();
  outcome.quality.ssimulacra2 = best->gate.worst;
  outcome.detail = fmt::format(
      "{} re-encoded with {} {} {}: SSIMULACRA2 of all {} frames min {:.1f} (frame {}), {} "
      "tries; other streams copied",
      probe.codec, base.encoder, base.knob, best->value, best->gate.compared, best->gate.worst,
      best->gate.worst_frame, tried);
  return outcome;
}

Verdict verify_media(ByteView input, ByteView output, Context& context) {
  const Policy& policy = context.policy();
  const VideoFrames a = probe_video(input);
  const VideoFrames b = probe_video(output);
  if (a.streams != b.streams)
    return {false, "the streams changed: " + fmt::format("{}", fmt::join(b.streams, ", ")), {}};
  if (a.pixel_format != b.pixel_format) return {false, "the pixel format changed", {}};
  const GateResult gate =
      frame_gate(input, output, quality_floor(policy), kEveryFrame, kTileMargin, &context);
  if (!gate.passes) return {false, gate.problem, {}};
  // Within one frame's length: a muxer may round the last frame's duration.
  const double frame_s = a.packets > 0 ? a.duration_s / double(a.packets) : 0.0;
  if (std::abs(a.duration_s - b.duration_s) > std::max(frame_s, kDurationTolerance_s))
    return {
        false,
        fmt::format("the duration changed from {:.3f} s to {:.3f} s", a.duration_s, b.duration_s),
        {}};
  Verdict v;
  v.ok = true;
  v.quality.ssimulacra2 = gate.worst;
  return v;
}

void describe_media(ByteView input, FileInfo& info) {
  const VideoFrames v = probe_video(input);
  for (size_t i = 0; i < v.streams.size(); ++i)
    info.properties.emplace_back("stream " + std::to_string(i), v.streams[i]);
  info.properties.emplace_back("duration", fmt::format("{:.3f} s", v.duration_s));
  info.properties.emplace_back(
      "video", fmt::format("{} {}, {} packets{}", v.codec, v.pixel_format, v.packets,
                           same_codec_encoder(v.codec, 0)
                               ? " (perceptual modes re-encode it with the same codec)"
                               : " (left as it is in every mode)"));
  if (v.encrypted) info.properties.emplace_back("encrypted", "yes (left as it is)");
}

}  // namespace lighten
