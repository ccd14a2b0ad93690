// Lowering ("rangeify"): a kernel AST over tensor shapes becomes loops. Each output dimension
// becomes a RANGE, movement ops become index arithmetic on those ranges (never copies), PAD
// becomes a gate on the load, and REDUCE_AXIS becomes a REDUCE over fresh ranges. A kernel is
// lowered once, with plain loops; what the optimizer chooses (opts.h) is applied to the lowered
// kernel as rewrites of its loops (apply_opts.h).
#pragma once

#include <string>
#include <vector>

#include "tinycore/uop/uop.h"

namespace tc::codegen {

struct LoweredKernel {
  UOpRef ast;   // what it was lowered from: the caches' key
  UOpRef sink;  // SINK(STORE(INDEX(DEFINE_GLOBAL 0, idx), value)...), a store per unrolled copy
  // The output axes: plainly lowered, axis i is the loop RANGE(shape[i]) numbered i (none where
  // the size is 1), and the reduce loops are numbered from shape.size() on.
  Shape shape;
  // The plain loops each reduce runs innermost (where its SIMD lanes and unrolled runs go).
  std::vector<UOpRef> innermost;
  int output_loops = 0;  // loops numbered below this are output loops
  std::string name;      // "E_..." elementwise or "r_..." reduce, then the loop sizes
  bool reduces = false;  // it has a reduce loop (an "r_" kernel)
};

// `ast` is SINK(STORE(DEFINE_GLOBAL out, value)), as the scheduler builds it.
LoweredKernel lower(const UOpRef& ast);

// The kernel's name from its loops: "E" or "r" (with a reduce loop), then each loop's size.
std::string kernel_name(const Shape& shape, const std::vector<int64_t>& reduce_sizes);

// Whether the kernel AST reduces (holds a REDUCE_AXIS).
bool has_reduce(const UOpRef& ast);

// The starting value of a reduction: 0 for ADD, 1 for MUL, the lowest value of the dtype for MAX.
UOpRef reduce_identity(Ops op, DType dtype);

}  // namespace tc::codegen
