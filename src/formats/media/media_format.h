// MP4, MOV and 3GP (and AVI with other codecs than Motion-JPEG) in the perceptual modes: the
// first video stream re-encoded with the same codec (or, under --video-codec h264, MPEG-4 part 2
// and MS-MPEG4 as H.264) at the coarsest quality whose sampled frames all meet the mode's
// SSIMULACRA2 floor, everything else carried over (av_reencode.h). Lossless
// mode leaves them alone: a lossy stream cannot be re-encoded without changing pixels.
#pragma once

#include "core/format.h"

namespace lighten {

Outcome optimize_media(ByteView input, Context& context);
Verdict verify_media(ByteView input, ByteView output, Context& context);
void describe_media(ByteView input, FileInfo& info);

}  // namespace lighten
