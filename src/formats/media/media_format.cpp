#include "formats/media/media_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "core/errors.h"
#include "core/policy_names.h"
#include "formats/media/av_reencode.h"
#include "formats/media/frame_gate.h"
#include "formats/media/mp4_boxes.h"
#include "formats/media/mp4_header_times.h"
#include "formats/media/mp4_metadata.h"
#include "formats/media/mp4_sample_entries.h"
#include "formats/media/mp4_sample_tables.h"

namespace lighten {
namespace {

using namespace media;

// Frames the search scores per candidate; the chosen one and the verifier score every frame.
constexpr uint32_t kSearchSamples = 12;
constexpr uint32_t kEveryFrame = 0;
// A frame's worst 256-pixel tile may sit this far under the floor (as for JPEG photos).
constexpr double kTileMargin = 10.0;
constexpr const char* kMarkerDropped =
    "the re-encoded file would not carry lighten's marker (the muxer drops the tag), so a later "
    "run could not tell it was re-encoded and would lose quality again";
// The least the container's duration may move by (a muxer rounds to its time scale).
constexpr double kDurationTolerance_s = 0.002;

// The settings tried, finest first: CRF for x264/x265, qscale for MPEG-4 part 2.
std::vector<int> candidate_values(const std::string& knob) {
  if (knob == "crf") return {16, 18, 20, 22, 24, 26, 28, 30, 32};
  return {2, 3, 4, 5, 6, 8, 10};
}

bool to_h264(const Policy& policy) { return policy.video_codec == VideoCodecPolicy::kH264; }

bool is_avi(ByteView file) { return starts_with(file, "RIFF"); }

// A stream copied packet for packet that the output holds fewer or more packets of, or states
// another length for (the AVI muxer would write a VBR MP3 stream's header as if it were CBR, its
// length then unknown to readers).
std::optional<std::string> copied_stream_changed(const VideoFrames& a, const VideoFrames& b) {
  if (a.lengths.size() != b.lengths.size())
    return fmt::format("the streams would be {} where they are {}", fmt::join(b.streams, ", "),
                       fmt::join(a.streams, ", "));
  for (size_t i = 0; i < a.lengths.size(); ++i) {
    if (int(i) == a.video_stream) continue;
    const VideoFrames::StreamLength &x = a.lengths[i], &y = b.lengths[i];
    const double packet_s = x.packets > 0 && x.seconds > 0 ? x.seconds / double(x.packets) : 0.0;
    const bool seconds_kept =
        x.seconds < 0 || (y.seconds >= 0 && std::abs(x.seconds - y.seconds) <=
                                                std::max(packet_s, kDurationTolerance_s));
    if (!seconds_kept || y.packets != x.packets)
      return fmt::format(
          "stream {} ({}) would hold {} packets over {} where it holds {} over {}", i, a.streams[i],
          y.packets,
          y.seconds < 0 ? std::string("no stated length") : fmt::format("{:.3f} s", y.seconds),
          x.packets,
          x.seconds < 0 ? std::string("no stated length") : fmt::format("{:.3f} s", x.seconds));
  }
  return std::nullopt;
}

// A container tag of the input the output does not carry (the minor version and compatible
// brands aside, which follow the muxer's ftyp; the software tag may gain lighten's marker).
std::optional<std::string> tag_lost(const VideoFrames& a, const VideoFrames& b) {
  for (const auto& tag : a.tags) {
    // Named, not bound: clang before 16 cannot capture structured bindings.
    const std::string &key = tag.first, &value = tag.second;
    if (key == "minor_version" || key == "compatible_brands") continue;
    const auto kept = std::find_if(b.tags.begin(), b.tags.end(), [&](const auto& t) {
      return t.first == key && (t.second == value || ((key == "encoder" || key == "software") &&
                                                      t.second.starts_with(value)));
    });
    if (kept == b.tags.end()) return fmt::format("the container tag '{}' would not be kept", key);
  }
  return std::nullopt;
}

// The muxer's output laid out as the input was: the user data boxes the muxer drops put back,
// the moov first where it was first, and the bytes the input has after its last box after the
// output's.
Bytes as_the_input_was(ByteView input, const std::optional<Mp4Layout>& layout, Bytes out) {
  if (!layout) return out;
  out = with_metadata_of(input, std::move(out));
  out = with_user_data_of(input, std::move(out));
  out = with_header_times_of(input, std::move(out));
  if (moov_before_mdat(*layout)) out = with_moov_first(out);
  out.insert(out.end(), input.begin() + ptrdiff_t(layout->trailing), input.end());
  return out;
}

// What the remux must keep of an MP4's structure, checked on a candidate (or the final output).
std::optional<std::string> structure_changed(ByteView input, const Mp4Layout& a, ByteView output) {
  const Mp4Layout b = read_mp4_layout(output);
  if (!same_bytes(input.subspan(a.trailing), output.subspan(b.trailing)))
    return "the bytes after the last box changed";
  if (moov_before_mdat(a) && !moov_before_mdat(b)) return "the moov no longer comes first";
  if (std::optional<std::string> why = track_headers_changed(input, output)) return why;
  if (std::optional<std::string> why = header_times_changed(input, output)) return why;
  const std::vector<std::string> entries = sample_descriptions_lost(input, output);
  if (!entries.empty())
    return fmt::format("{} would not be carried over", fmt::join(entries, ", "));
  const std::vector<std::string> lost = user_data_lost(input, output);
  if (!lost.empty())
    return fmt::format("user data {} would not be carried over", fmt::join(lost, ", "));
  const std::vector<std::string> items = metadata_lost(input, output);
  if (!items.empty())
    return fmt::format("the metadata item {} would not be carried over as it is",
                       fmt::join(items, ", "));
  return std::nullopt;
}

// Why a codec is left alone: cinepak and other RGB codecs get the reason the H.264 flag does
// not change (their RGB frames would become YUV 4:2:0, another colour representation).
std::string not_reencoded(const VideoFrames& probe) {
  const std::string known =
      "H.264, HEVC, MPEG-4 part 2 and MS-MPEG4 v2/v3 are; --video-codec h264 turns MPEG-4 part 2 "
      "and MS-MPEG4 into H.264";
  if (probe.pixel_format.find("rgb") != std::string::npos ||
      probe.pixel_format.find("pal8") != std::string::npos)
    return probe.codec + " video is not re-encoded: its frames are " + probe.pixel_format +
           ", which H.264 would store as YUV 4:2:0, another colour representation (" + known + ")";
  return probe.codec + " video is not re-encoded (" + known + ")";
}

// A codec lighten re-encodes always gives its picture format once its parameters decode; none
// means they are damaged (an H.264 sequence parameter set with a wrong byte), where the
// encoder would fail later with a message about itself.
void refuse_undecodable(const VideoFrames& probe) {
  const bool known = same_codec_encoder(probe.codec, 0) || converts_to_h264(probe.codec);
  if (known && probe.packets > 0 && probe.pixel_format == "unknown")
    throw FormatError(Reason::kCorrupt, 0,
                      probe.codec + " video whose parameters do not decode to a picture format");
}

// A movie header whose duration is not its longest track's: the remux would state the track's.
// Far from it (over a second, or 1 % of the length) that is damage; apart by more than the
// verifier lets the length move (a frame), the output would be refused after the whole
// re-encode. `probe` (the input's) gives the frame; without it only damage is looked for.
void check_movie_duration(ByteView input, const VideoFrames* probe) {
  const std::optional<MovieDurations> d = movie_durations(input);
  if (!d) return;
  const double apart = std::abs(d->movie_s - d->longest_track_s);
  const std::string says = fmt::format("the movie header says {:.3f} s, its longest track {:.3f} s",
                                       d->movie_s, d->longest_track_s);
  if (apart > std::max(1.0, 0.01 * d->longest_track_s))
    throw FormatError(Reason::kCorrupt, 0, says);
  if (!probe) return;
  const double frame_s = probe->packets > 0 ? probe->duration_s / double(probe->packets) : 0.0;
  if (apart > std::max(frame_s, kDurationTolerance_s))
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      says + ", and a re-encode would state the track's length");
}

VideoFrames checked_probe(ByteView input, const Policy& policy,
                          const std::optional<Mp4Layout>& layout) {
  if (layout && !has_video_track(input, *layout))
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "the file has no video, and lossy audio is kept as it is in every mode");
  if (policy.mode == Mode::kLossless)
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "lossless mode does not re-encode lossy audio or video (a perceptual "
                      "--mode re-encodes video streams)");
  if (layout) {
    if (std::optional<std::string> why = remux_obstacle(input, *layout))
      throw FormatError(Reason::kUnsupportedVariant, 0, *why + " by the remux");
    check_sample_tables(input);
  }
  VideoFrames probe = probe_video(input);
  if (layout) check_movie_duration(input, &probe);
  if (probe.encrypted)
    throw FormatError(Reason::kEncrypted, 0, "a stream is encrypted (DRM): left as it is");
  if (!probe.marker.empty())
    throw FormatError(Reason::kAlreadyOptimized, 0,
                      "re-encoded by lighten already (" + probe.marker +
                          "): a second re-encode would lose quality again");
  if (!encoder_for(probe.codec, to_h264(policy), 0))
    throw FormatError(Reason::kUnsupportedVariant, 0, not_reencoded(probe));
  refuse_undecodable(probe);
  if (!probe.uncarried.empty())
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "the file holds " + probe.uncarried +
                          ", which a re-encode would not carry over: the video is left as it is");
  if (uint64_t(probe.width) * probe.height > policy.limits.max_pixels)
    throw FormatError(Reason::kLimitExceeded, 0,
                      fmt::format("frames of {}x{} are larger than --max-pixels {}", probe.width,
                                  probe.height, policy.limits.max_pixels));
  // Nothing else tells a later run that a video was re-encoded (a JPEG's tables can): without the
  // marker, every run would re-encode the last one's output and lose quality again.
  if (policy.quality_marker != QualityMarker::kWrite)
    throw FormatError(Reason::kUnsupportedVariant, 0,
                      "video is re-encoded only with the quality marker (--quality-marker write): "
                      "without it a later run could not tell and would lose quality again");
  return probe;
}

struct Candidate {
  int value = 0;
  Bytes bytes;
  GateResult gate;
};

// A few hundred kilobytes of video may hold 8K frames, which no estimate from the file's size
// sees: the decoders' and encoder's frames, their RGB copies for the metric and its bands
// (an 8192x8192 video peaked at 1.29 GB, 19 bytes a pixel).
MemoryHold hold_frame_memory(Context& context, uint32_t width, uint32_t height) {
  return context.hold_memory(uint64_t(width) * uint64_t(height) * 20);
}

}  // namespace

Outcome optimize_media(ByteView input, Context& context) {
  const Policy& policy = context.policy();
  const std::optional<Mp4Layout> layout =
      is_avi(input) ? std::nullopt : std::optional(read_mp4_layout(input));
  const VideoFrames probe = checked_probe(input, policy, layout);
  const MemoryHold hold = hold_frame_memory(context, probe.width, probe.height);
  const double floor = quality_floor(policy);
  const EncoderChoice base = *encoder_for(probe.codec, to_h264(policy), 0);
  const std::vector<int> values = candidate_values(base.knob);

  // Binary search for the coarsest setting whose sampled frames all meet the floor; coarser
  // settings give smaller files, so that one is the smallest that passes. Then every frame of
  // the choice is scored, and finer settings are taken while one falls short.
  std::optional<Candidate> best;
  size_t tried = 0;
  std::string finest_problem;  // why the finest setting tried failed, for the message
  auto attempt = [&](int index, uint32_t samples) {
    if (context.out_of_time())
      throw FormatError(Reason::kLimitExceeded, 0, "the time budget ran out during the search");
    Candidate c{values[size_t(index)], {}, {}};
    EncoderChoice choice = *encoder_for(probe.codec, to_h264(policy), c.value);
    choice.keyframe_interval = int(std::min<int64_t>(probe.longest_gop, 1 << 20));
    if (policy.quality_marker == QualityMarker::kWrite)
      choice.marker = fmt::format("{} {} {}, SSIMULACRA2 floor {:.1f}", choice.encoder, choice.knob,
                                  choice.value, floor);
    c.bytes = as_the_input_was(input, layout, reencode_video(input, choice, &context));
    // Readers would show other colours: no setting of this encoder can do better.
    const VideoFrames written = probe_video(c.bytes);
    // A muxer that dropped the tag without lighten knowing (3GP's is put in a box of its own).
    if (written.marker.empty()) throw FormatError(Reason::kUnsupportedVariant, 0, kMarkerDropped);
    // Nor would any setting keep what the muxer drops or describes otherwise.
    std::optional<std::string> lost = copied_stream_changed(probe, written);
    if (!lost) lost = tag_lost(probe, written);
    if (!lost && layout) lost = structure_changed(input, *layout, c.bytes);
    if (lost) throw FormatError(Reason::kUnsupportedVariant, 0, *lost + " after the remux");
    if (written.pixel_format != probe.pixel_format || written.full_range != probe.full_range)
      throw FormatError(
          Reason::kUnsupportedVariant, 0,
          fmt::format("the {} encoder writes {}{} where the video is {}{}", choice.encoder,
                      written.pixel_format, written.full_range ? " full range" : "",
                      probe.pixel_format, probe.full_range ? " full range" : ""));
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
      finest_problem = c.gate.problem;
      hi = mid - 1;
    }
  }
  // Finer settings are only larger: once a setting that passes is no smaller than the input,
  // the search ends, before every frame of it is scored when it is the sampled search's choice.
  size_t larger_bytes = 0;
  int larger_value = 0;
  auto give_up_if_larger = [&] {
    if (!best || best->bytes.size() < input.size()) return false;
    larger_bytes = best->bytes.size(), larger_value = best->value;
    best.reset();
    return true;
  };
  for (; best && chosen >= 0; --chosen) {
    if (give_up_if_larger()) break;
    if (best->value != values[size_t(chosen)] || best->gate.compared < size_t(probe.packets))
      best = attempt(chosen, kEveryFrame);
    if (best->gate.passes) break;
    finest_problem = best->gate.problem;
    if (chosen == 0) best.reset();
  }
  give_up_if_larger();
  Outcome outcome;
  outcome.bytes_in = input.size();
  if (!best && larger_bytes) {
    outcome.action = Action::kKept;
    outcome.reason = Reason::kNoGain;
    outcome.message = fmt::format(
        "the coarsest setting that keeps the sampled frames at SSIMULACRA2 {}, {} {} {}, "
        "gives {} bytes, not fewer than the input's {} ({} tries)",
        floor_text(floor), base.encoder, base.knob, larger_value, larger_bytes, input.size(),
        tried);
    return outcome;
  }
  if (!best) {
    outcome.action = Action::kKept;
    outcome.reason = Reason::kNoGain;
    outcome.message = fmt::format(
        "no {} {} from {} to {} keeps every sampled frame at SSIMULACRA2 {} ({} tries; the "
        "finest tried: {})",
        base.encoder, base.knob, values.front(), values.back(), floor_text(floor), tried,
        finest_problem);
    return outcome;
  }
  outcome.action = Action::kReplaced;
  outcome.bytes = std::move(best->bytes);
  outcome.bytes_out = outcome.bytes.size();
  outcome.quality.ssimulacra2 = best->gate.worst;
  outcome.detail = fmt::format(
      "{} re-encoded with {} {} {}: SSIMULACRA2 of all {} frames min {:.1f} (frame {}), mean "
      "{:.1f}, {} tries; other streams copied",
      probe.codec, base.encoder, base.knob, best->value, best->gate.compared, best->gate.worst,
      best->gate.worst_frame, best->gate.mean, tried);
  return outcome;
}

Verdict verify_media(ByteView input, ByteView output, Context& context) {
  const Policy& policy = context.policy();
  const VideoFrames a = probe_video(input);
  const VideoFrames b = probe_video(output);
  std::vector<std::string> expected = a.streams;
  if (b.codec != a.codec && b.codec == "h264" && to_h264(policy) && converts_to_h264(a.codec)) {
    // The one codec change the policy allows: the video stream now says h264.
    const std::string from = "video " + a.codec + " ";
    const auto video = std::find_if(expected.begin(), expected.end(),
                                    [&](const std::string& s) { return s.rfind(from, 0) == 0; });
    if (video != expected.end()) video->replace(0, from.size(), "video h264 ");
  }
  if (expected != b.streams)
    return {false, "the streams changed: " + fmt::format("{}", fmt::join(b.streams, ", ")), {}};
  if (a.pixel_format != b.pixel_format) return {false, "the pixel format changed", {}};
  if (a.full_range != b.full_range) return {false, "the colour range changed", {}};
  if (interlaced(a.field_order) != interlaced(b.field_order))
    return {false, "the video's interlacing changed", {}};
  if (auto why = copied_stream_changed(a, b)) return {false, *why, {}};
  if (auto why = tag_lost(a, b)) return {false, *why, {}};
  if (b.marker.empty()) return {false, kMarkerDropped, {}};
  if (!is_avi(input)) {
    const Mp4Layout layout = read_mp4_layout(input);
    if (auto why = remux_obstacle(input, layout))
      return {false, "the input is not one the remux carries: " + *why, {}};
    if (auto why = structure_changed(input, layout, output)) return {false, *why, {}};
  }
  const MemoryHold hold = hold_frame_memory(context, a.width, a.height);
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
  if (!is_avi(input)) {
    check_sample_tables(input);
    check_movie_duration(input, nullptr);
  }
  const VideoFrames v = probe_video(input);
  refuse_undecodable(v);
  for (size_t i = 0; i < v.streams.size(); ++i)
    info.properties.emplace_back("stream " + std::to_string(i), v.streams[i]);
  info.properties.emplace_back("duration", fmt::format("{:.3f} s", v.duration_s));
  info.properties.emplace_back(
      "video", fmt::format("{} {}, {} packets{}", v.codec, v.pixel_format, v.packets,
                           same_codec_encoder(v.codec, 0)
                               ? " (perceptual modes re-encode it with the same codec)"
                           : converts_to_h264(v.codec)
                               ? " (perceptual modes re-encode it with --video-codec h264)"
                               : " (left as it is in every mode)"));
  if (v.encrypted) info.properties.emplace_back("encrypted", "yes (left as it is)");
  if (!v.uncarried.empty())
    info.properties.emplace_back("not re-encoded",
                                 v.uncarried + " (a re-encode would not carry it)");
}

}  // namespace lighten
