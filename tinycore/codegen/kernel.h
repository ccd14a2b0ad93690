// The codegen pipeline's driver: a scheduled kernel AST is lowered once (lower.h), its loops merged
// (merge_axes.h), its opts chosen (the heuristic, or BEAM) and applied as rewrites
// (apply_opts.h), and is built (program.h: simplify -> linearize -> render -> compile) once, kept
// in memory and on disk across runs.
#pragma once

#include <memory>
#include <vector>

#include "tinycore/codegen/program.h"
#include "tinycore/runtime/device.h"
#include "tinycore/uop/uop.h"

namespace tc::codegen {

// Compiles `ast` (see schedule::ScheduleItem), its loops merged (merge_axes.h), for
// `device` with the heuristic's opts (BEAM=N: the best of a search, see beam.h); cached per
// (ast, device, opts) in memory, and on disk across runs (saved_kernel.h).
std::shared_ptr<const Kernel> get_kernel(const UOpRef& ast, runtime::Device& device);
// Drops the kernels get_kernel holds in memory (those in use live on): the next get_kernel of an
// AST finds it on disk, as a new process would.
void forget_built_kernels();
// get_kernel for each of `asts`, built on as many threads as the device compiles with (first
// runs of a model build their kernels on every core).
std::vector<std::shared_ptr<const Kernel>> get_kernels(const std::vector<UOpRef>& asts,
                                                       runtime::Device& device);

}  // namespace tc::codegen
