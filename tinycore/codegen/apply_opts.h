// The optimizer's choices (opts.h) applied to a lowered kernel as rewrites of its plain loops, as
// tinygrad applies its opts after lowering: an output loop split into SIMD lanes, into a register
// tile (a store per row), or into cache blocks; the output loops renumbered in the chosen order;
// each reduce's innermost loop split into lanes and unrolled runs. Every trial of the heuristic
// or of BEAM and the kernel built take this one route.
#pragma once

#include <cstdint>

#include "tinycore/codegen/lower.h"
#include "tinycore/codegen/opts.h"

namespace tc::codegen {

// `plain` (lower()'s) with `opts` applied. `opts` must fit the shape (an axis split by
// lanes/unroll is divisible by them).
LoweredKernel apply_opts(const LoweredKernel& plain, const KernelOpts& opts);

// How a reduce whose innermost axis has `inner` elements is split under `opts`: SIMD lanes, and
// the runs of them each loop iteration takes (each 1 where it does not divide the axis).
struct ReduceSplit {
  int64_t lanes = 1, unroll = 1;
};
ReduceSplit reduce_split(int64_t inner, const KernelOpts& opts);

}  // namespace tc::codegen
