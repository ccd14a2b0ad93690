// Late rewrites that make a lowered kernel renderable: drop gates that are always true, and do
// float16/bfloat16 arithmetic in float32 (they are storage formats on the CPU).
#pragma once

#include "tinycore/uop/pattern_matcher.h"

namespace tc::codegen {

const PatternMatcher& decompositions();

// symbolic() + decompositions(), to a fixed point.
UOpRef simplify_kernel(const UOpRef& sink);

}  // namespace tc::codegen
