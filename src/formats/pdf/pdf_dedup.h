// Identical streams become one object: equal dictionaries (but for /Length) and equal raw bytes.
#pragma once

#include <qpdf/QPDF.hh>

namespace lighten::pdf {

// Points every reference to a duplicate stream (in every object, the trailer included) at the
// first of its equals, so the writer drops the rest. Repeats until nothing merges, since merging
// images can make the forms that use them equal. Returns how many streams were merged away.
int merge_identical_streams(QPDF& pdf);

}  // namespace lighten::pdf
