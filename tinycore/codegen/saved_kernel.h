// Built kernels on disk, so that a warm start skips the codegen: lowering, the heuristic's trial
// lowerings and merging reduce axes cost more than reading the compiled code back (a third of
// the first MNIST step with a warm compiler cache). An entry holds what running a kernel needs
// (its name, source, launch, opts and counts; not its linearized UOps) and is keyed by
//   - the scheduled AST it was built from,
//   - the device and what the heuristic reads of it (SIMD width and registers, cores),
//   - the environment that steers codegen (NOOPT, BEAM, TRANSCENDENTAL, CHECK_RENDER),
//   - this build of tinycore: the GNU build ID of the file holding this code (the program, or
//     the Python module). A rebuild starts afresh, so a change to codegen never meets kernels
//     the old one made; a file without a build ID saves nothing.
// DISABLE_COMPILER_CACHE=1 skips the disk, as for the compilers' cache.
#pragma once

#include <memory>
#include <string>

#include "tinycore/codegen/program.h"

namespace tc::codegen {

// Empty when this build has no ID: load_kernel and save_kernel then do nothing.
std::string saved_kernel_key(const UOpRef& scheduled, const runtime::Device& device);

// The kernel saved under `key`, compiled for `device` (its binary from the compiler's cache when
// it was compiled before); nullptr when there is none, or the entry does not parse or compile.
std::shared_ptr<Kernel> load_kernel(const std::string& key, runtime::Device& device);

void save_kernel(const std::string& key, const Kernel& k);

}  // namespace tc::codegen
