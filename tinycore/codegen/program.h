// A kernel as codegen makes it: lowered, simplified and linearized (LinearKernel), rendered and
// compiled for a device (Kernel); build_kernel makes one with given opts. The pipeline's driver,
// which picks the opts and keeps kernels across runs, is kernel.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tinycore/codegen/lower.h"
#include "tinycore/codegen/opts.h"
#include "tinycore/runtime/device.h"
#include "tinycore/uop/uop.h"

namespace tc::codegen {

struct Kernel {
  std::string name;
  std::string source;
  std::vector<UOpRef> program;  // the linearized UOps (none in a kernel loaded from disk)
  double flops = 0;             // ALU operations per run
  double bytes = 0;             // bytes of all its buffers
  KernelOpts opts;
  bool parallel = false;       // its outermost output loop is split across cores
  bool reduces = false;        // it has a reduce loop (see compile_effort)
  bool host = false;           // a host function (Ops::CUSTOM): no generated code, never skipped
  runtime::LaunchSpec launch;  // a GPU kernel's grid
  std::shared_ptr<runtime::Program> binary;
};

// A lowered kernel (lower.h) with `opts` applied, simplified and linearized: what every renderer
// starts from. `cpu`: its output loops are loops, which may be narrowed too (narrow.h).
struct LinearKernel {
  std::string name;
  std::vector<UOpRef> program;
  UOpRef sink;          // the simplified kernel graph the program was made from
  int output_dims = 0;  // loops numbered below this are output loops
  bool reduces = false;
};
LinearKernel linearize_kernel(const LoweredKernel& plain, const KernelOpts& opts, bool cpu = false);

// A kernel with so little work (flops and bytes) that it runs whole on one core: waking threads
// would cost more than they save, and optimizing it hard costs more compile time than it saves.
bool small_kernel(const Kernel& k);
// How much a device may spend compiling `k` (LaunchSpec::effort):
//   - quick when it is small: it runs in microseconds however it is compiled;
//   - light when it has no reduce loop: a stream through memory, which O3's
//     loop passes and aggressive instruction selection do not make faster (measured on the MNIST
//     step's);
//   - tiled for a reduce the heuristic vectorized: its register tiles need a few loop passes;
//   - full for a scalar reduce (NOOPT=1's, or one the heuristic gave no lanes), whose index
//     arithmetic the compiler's loop passes simplify.
runtime::CompileEffort compile_effort(const Kernel& k);
// How many shares of `device` a launch of `k` is split into (1 for a tiny kernel).
int launch_shares(const Kernel& k, const runtime::Device& device);
// Compiles k.source on `device` into k.binary, telling it how much effort k is worth.
void compile_kernel(Kernel& k, runtime::Device& device);

// A lowered kernel built (linearized, rendered, compiled) for `device` with `opts`; kept in memory
// per (its AST, device, opts), up to runtime::kernel_cache_limit() kernels.
std::shared_ptr<const Kernel> build_kernel(const LoweredKernel& plain, runtime::Device& device,
                                           const KernelOpts& opts);
// Drops the kernels build_kernel keeps (those in use live on).
void drop_build_cache();

}  // namespace tc::codegen
