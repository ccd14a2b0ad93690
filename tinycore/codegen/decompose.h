// Late rewrites that make a lowered kernel renderable: drop gates that are always true, and do
// float16/bfloat16 arithmetic in float32 (they are storage formats on the CPU).
#pragma once

#include "tinycore/uop/pattern_matcher.h"

namespace tc::codegen {

const PatternMatcher& decompositions();

// Bytes one element of `d` takes in a register: float16 and bfloat16 are computed as float32, so
// lane widths are chosen by that (else a kernel that stores float16 takes twice the registers).
int register_itemsize(DType d);

// symbolic() + decompositions(), to a fixed point; then gated loads' indices narrowed (narrow.h).
UOpRef simplify_kernel(const UOpRef& sink);

// A tensor's integer x / 0 and x % 0 give 0, and for signed integers x / -1 gives -x (wrapping)
// and x % -1 gives 0, where the CPU's division would trap (INT_MIN / -1 too): each division
// whose divisor may be 0 or -1 divides by 1 there and selects the result. Index math divides by
// nonzero constants and is left alone. One pass after the last simplify_kernel: the selects it
// makes are final, for every renderer.
UOpRef safe_divisions(const UOpRef& sink);

}  // namespace tc::codegen
