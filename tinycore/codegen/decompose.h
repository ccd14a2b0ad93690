// Late rewrites that make a lowered kernel renderable: drop gates that are always true, and do
// float16/bfloat16 arithmetic in float32 (they are storage formats on the CPU).
#pragma once

#include "tinycore/uop/pattern_matcher.h"

namespace tc::codegen {

const PatternMatcher& decompositions();

// Bytes one element of `d` takes in a register: float16 and bfloat16 are computed as float32, so
// lane widths are chosen by that (else a kernel that stores float16 takes twice the registers).
int register_itemsize(DType d);

// symbolic() + decompositions(), to a fixed point.
UOpRef simplify_kernel(const UOpRef& sink);

}  // namespace tc::codegen
