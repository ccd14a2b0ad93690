// Splitting large reductions (tinygrad's GROUP at the graph level): a reduce over many elements
// into few outputs becomes two reduces, the first over contiguous chunks with one output per
// chunk, so its kernel has enough outputs to spread across cores; the scheduler gives each its
// own kernel.
#pragma once

#include "tinycore/uop/pattern_matcher.h"

namespace tc::schedule {

const PatternMatcher& split_reduces();

// Whether the reduce `r` gathers: a factor of its operand tests equality with an index along a
// reduced axis (a one-hot: a gather, or an embedding's lookup), so codegen narrows it to one trip
// per output.
bool gathers(const UOp& r);

}  // namespace tc::schedule
