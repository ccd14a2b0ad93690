// Splitting large reductions (tinygrad's GROUP at the graph level): a reduce over many elements
// into few outputs becomes two reduces, the first over contiguous chunks with one output per
// chunk, so its kernel has enough outputs to spread across cores; the scheduler gives each its
// own kernel.
#pragma once

#include "tinycore/uop/pattern_matcher.h"

namespace tc::schedule {

const PatternMatcher& split_reduces();

}  // namespace tc::schedule
