// Stashing a reduce's operand. A row kernel (a softmax fused whole) whose reduce over the row
// computes a costly value per element, exp(x - max), which the row's own loop computes again for
// the same element: the reduce's loop also stores the value into the output as it goes (STASH),
// and the row's loop loads it back, so exp runs once per element rather than twice. The row is
// one core's and its loop runs after the reduce's, so the output's element is free to hold it.
// While the reduce's loop computes them it also prefetches the next row's lines (PREFETCH).
#pragma once

#include "tinycore/codegen/lower.h"
#include "tinycore/codegen/opts.h"

namespace tc::codegen {

// The plain kernel with one reduce's operand stashed, where `opts.stash` asks for it and its loop
// order allows it (the row's loop is not the loop cores share, and opens after every output loop
// the reduce reads); `plain` itself otherwise.
LoweredKernel stash_reduce_operand(const LoweredKernel& plain, const KernelOpts& opts);

}  // namespace tc::codegen
