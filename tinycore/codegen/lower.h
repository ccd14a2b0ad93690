// Lowering ("rangeify"): a kernel AST over tensor shapes becomes loops. Each output dimension
// becomes a RANGE, movement ops become index arithmetic on those ranges (never copies), PAD
// becomes a gate on the load, and REDUCE_AXIS becomes a REDUCE over fresh ranges.
#pragma once

#include <string>

#include "tinycore/uop/uop.h"

namespace tc::codegen {

struct LoweredKernel {
  UOpRef sink;       // SINK(STORE(INDEX(DEFINE_GLOBAL 0, idx), value))
  std::string name;  // "E_..." elementwise or "r_..." reduce, then the loop sizes
};

// `ast` is SINK(STORE(DEFINE_GLOBAL out, value)), as the scheduler builds it.
LoweredKernel lower(const UOpRef& ast);

// The starting value of a reduction: 0 for ADD, the lowest value of the dtype for MAX.
UOpRef reduce_identity(Ops op, DType dtype);

}  // namespace tc::codegen
