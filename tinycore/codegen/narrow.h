// Narrowing a reduce's loops to where its terms can be nonzero: a sum of products, one factor a
// load gated by `lo <= r + e` and `r + e < hi` (a padded input read through a window, as a
// transposed conv reads its gradient), runs its loop `r` from max(0, lo - e) to min(n, hi - e)
// and loses those conditions, which then always hold. A transposed 5x5 conv over a 4-padded
// input computes 10.5 GFLOP rather than 15.1 for the MNIST step, and loads ungated.
#pragma once

#include "tinycore/uop/uop.h"

namespace tc::codegen {

// The lowered kernel `sink` (simplified) with every such loop narrowed: RANGE r becomes
// lo + RANGE(hi - lo), the conditions it satisfies become true. A loop is narrowed only when
// every reduce over it is an ADD whose terms are zero outside the same bounds (a term whose
// other factor is infinite or NaN there, NaN before, is left out: as PyTorch's transposed conv
// never multiplies the padding).
UOpRef narrow_reduce_loops(const UOpRef& sink);

// How many times the loop `range` runs on average over the outer loops its end reads (a narrowed
// loop's length varies with them); its end when that is a number. For counting a kernel's flops.
double mean_trips(const UOp& range);

}  // namespace tc::codegen
