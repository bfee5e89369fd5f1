// How the perceptual search reads a JPEG's pixels: through which colour profile, as which
// channels, and where the metric would score another picture than a colour-managed viewer shows.
#pragma once

#include <optional>
#include <string>

#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/markers.h"
#include "lighten/policy.h"
#include "quality/colour_profile.h"
#include "quality/image.h"

namespace lighten::jpeg {

// Why the metric would not score what a colour-managed viewer shows: the image's ICC profile
// declares samples of another kind than the decode the metric reads (gray for one component,
// RGB for three, CMYK for four), e.g. Lab planes that libjpeg decodes as if they were YCbCr.
// nullopt without a profile or with a matching one, and where the policy says how a container
// shows the image (Policy::jpeg_shown_through: the container checked its space).
std::optional<std::string> profile_unlike_decode(const Layout& layout, int components,
                                                 const Policy& policy);
// How the metric reads the decode of an image of `components` with this layout: through its ICC
// profile (icc_profile), or the one its container shows it through (Policy::jpeg_shown_through),
// where that is not sRGB's (CMYK: any CMYK profile); nullopt reads gray and RGB as sRGB, CMYK as
// rgb_from_cmyk renders it.
std::optional<ProfileColour> metric_colour(const Layout& layout, int components,
                                           const Policy& policy);

// Decoded pixels as the metric takes them, read through `colour` (metric_colour; may be null):
// gray or RGB; CMYK as it is where `colour` reads CMYK, else rendered as RGB (rgb_from_cmyk);
// nullopt for other component counts.
std::optional<ImageRgb8> to_metric_image(PixelImage pixels, const ProfileColour* colour);

}  // namespace lighten::jpeg
