// Restart intervals for progressive outputs of inputs that restart every N MCUs.
#pragma once

#include <optional>
#include <vector>

#include "core/bytes.h"
#include "formats/jpeg/coefficients.h"
#include "formats/jpeg/markers.h"

namespace lighten::jpeg {

// A restart interval counts MCUs of the scan: a whole MCU (h x v blocks of each component) in an
// interleaved scan, one block in a scan of one component. A baseline input restarting every N
// MCUs, written progressive with N throughout, restarts h x v times more often in each
// component's own scans, and every restart costs a marker, padding and a broken EOB run.
//
// The interval that keeps the input's density in scan `scan` of `script`: N in interleaved
// scans and in images of one component, N x h x v (at most 65535) in scans of one component.
// The restart interval in effect for each scan of the input (the last DRI before its SOS; 0
// before any), in scan order. libjpeg reads them all but keeps only the last.
std::vector<unsigned> scan_restart_intervals(const Layout& layout);

unsigned matched_restart_interval(const jpeg_decompress_struct& info, const jpeg_scan_info& scan,
                                  unsigned input_interval);

// The interval N an input restarts at: the one interval of all its scans, or the N whose
// matched intervals its scans follow (a progressive file lighten wrote keeping a baseline
// input's density); nullopt where its scans follow neither (cjpeg -restart N in rows, a DRI 0
// that ends restarts before a scan). `info`: the input's, read.
std::optional<unsigned> input_restart_interval(const Layout& layout,
                                               const jpeg_decompress_struct& info);

// Writes `script` with each scan's matched interval: the image is written once per distinct
// interval (`written_with_input_interval` is the writing with N throughout, reused) and each scan
// is taken from the writing with its interval, a DRI segment before every scan whose interval
// differs from the one before. nullopt when every scan's interval is N already.
std::optional<Bytes> write_with_matched_restarts(CoefficientImage& image,
                                                 const std::vector<jpeg_scan_info>& script,
                                                 unsigned input_interval,
                                                 const Bytes& written_with_input_interval);

}  // namespace lighten::jpeg
