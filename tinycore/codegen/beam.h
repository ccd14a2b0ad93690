// BEAM search (BEAM=N): the kernel's opts chosen by timing candidates on the device. Starting
// from the heuristic's choice and from no opts, each round applies every single action to each of
// the N best so far, compiles and times the new candidates on scratch buffers, and keeps the N
// fastest; it stops when a round finds nothing faster. The heuristic's choice and the N best are
// then timed again in turns (a round runs each once), and the heuristic's choice stays unless
// another beats it by 2% there: on a shared machine whose load comes and goes, a candidate timed
// in a quiet moment would otherwise win by luck. The winner is cached on disk, keyed by the
// kernel, the device and its features, and N, so a second run pays nothing.
//
// Actions, as tinygrad's codegen/opt: UPCAST an output axis into SIMD lanes (2..32 wide), UPCAST
// a second output axis into a register tile (2..16 rows), ORDER (an output loop moved
// outermost), THREAD (the outermost loop split across cores, or not).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tinycore/codegen/lower.h"
#include "tinycore/codegen/opts.h"
#include "tinycore/runtime/device.h"

namespace tc::codegen {

// Every opts one action away from `opts` that is valid for the lowered kernel on `target`.
std::vector<KernelOpts> neighbours(const LoweredKernel& plain, const KernelOpts& opts,
                                   const Target& target);

// The kernel with `opts` timed on zero-filled scratch buffers: the best of a few runs, in ms.
// A parallel candidate whose probe (one part in 16 of its work) predicts more than `cutoff_ms`
// returns that prediction without running whole (a search has no use for its exact time).
double time_opts(const LoweredKernel& plain, runtime::Device& device, const KernelOpts& opts,
                 double cutoff_ms = 0);

KernelOpts beam_search(const LoweredKernel& plain, runtime::Device& device, int width);

// Counters since the start, for tests and DEBUG output.
struct BeamStats {
  static inline int64_t searches = 0;   // searches run (cache misses)
  static inline int64_t disk_hits = 0;  // answers read from the disk cache
  static inline int64_t timed = 0;      // candidates compiled and timed
};

}  // namespace tc::codegen
