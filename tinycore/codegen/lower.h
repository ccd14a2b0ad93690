// Lowering ("rangeify"): a kernel AST over tensor shapes becomes loops. Each output dimension
// becomes a RANGE, movement ops become index arithmetic on those ranges (never copies), PAD
// becomes a gate on the load, and REDUCE_AXIS becomes a REDUCE over fresh ranges.
#pragma once

#include <string>

#include "tinycore/codegen/opts.h"
#include "tinycore/uop/uop.h"

namespace tc::codegen {

struct LoweredKernel {
  UOpRef sink;  // SINK(STORE(INDEX(DEFINE_GLOBAL 0, idx), value)...), a store per unrolled copy
  std::string name;      // "E_..." elementwise or "r_..." reduce, then the loop sizes
  bool reduces = false;  // it has a reduce loop (an "r_" kernel)
};

// `ast` is SINK(STORE(DEFINE_GLOBAL out, value)), as the scheduler builds it. `opts` must fit
// the shape (an axis split by lanes/unroll is divisible by them).
LoweredKernel lower(const UOpRef& ast, const KernelOpts& opts = {});

// Whether the kernel AST reduces (holds a REDUCE_AXIS).
bool has_reduce(const UOpRef& ast);

// How a reduce whose innermost axis has `inner` elements is split under `opts`: SIMD lanes, and
// the runs of them each loop iteration takes (each 1 where it does not divide the axis).
struct ReduceSplit {
  int64_t lanes = 1, unroll = 1;
};
ReduceSplit reduce_split(int64_t inner, const KernelOpts& opts);

// The starting value of a reduction: 0 for ADD, 1 for MUL, the lowest value of the dtype for MAX.
UOpRef reduce_identity(Ops op, DType dtype);

}  // namespace tc::codegen
