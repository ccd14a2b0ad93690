// Optimization choices for one kernel, applied to its loops once it is lowered (apply_opts.h):
//   lanes   an output axis spread across SIMD lanes: one loop iteration computes `lanes`
//           consecutive outputs as a vector (tinygrad's UPCAST of a contiguous axis)
//   unroll  an output axis computed `unroll` times per iteration, sharing every load that does
//           not depend on it: a register tile (UPCAST of a second axis)
//   order   the output loops, outermost first
//   tile    an output axis split into blocks of `tile` iterations, the loop over the blocks
//           outermost: what one block reads stays in cache while the other loops run over it
//           (cache tiling of a large loop; the blocks' loop is the one cores share)
//   threads the outermost loop is split across CPU cores (THREAD)
//   reduce_lanes  with no lanes on an output axis: each reduce's innermost axis spread across
//           SIMD lanes, the lanes combined after its loop (a row sum reading consecutive elements)
//   reduce_unroll  each reduce's innermost loop unrolled: one iteration takes this many
//           consecutive elements (or runs of lanes), combined before they reach the accumulator
//           (tinygrad's UNROLL), so the loop-carried chain is that many times shorter
//   stash   a costly part of a row reduce's operand that the row's loop computes again is stored
//           into the output by the reduce and loaded back (stash.h; CPU)
//   prefetch  a reduce's loads of its own part of a buffer for every output prefetch ahead
//           along its loop (prefetch.h; CPU)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tinycore/uop/uop.h"

namespace tc::runtime {
class Device;
}
namespace tc::codegen {

struct LoweredKernel;

struct KernelOpts {
  int lane_axis = -1, lanes = 1;
  int unroll_axis = -1, unroll = 1;
  std::vector<int> order;  // empty: natural order
  bool parallel = false;
  int reduce_lanes = 1;
  int reduce_unroll = 1;
  int tile_axis = -1, tile = 1;
  bool stash = false;
  bool prefetch = false;

  bool tiled() const { return tile > 1; }  // an extra output loop, over the blocks, is loop 0

  std::string key() const;  // for caches: every field
};

// opts as one line of text (the disk caches), and back for a kernel of `nd` output axes: nullopt
// for anything malformed or out of range, so a damaged entry is made again, never trusted.
std::string opts_line(const KernelOpts& o);
std::optional<KernelOpts> parse_opts(const std::string& line, int nd);

// What the heuristic needs to know of the device.
struct Target {
  int simd_bytes = 16;                     // one vector register
  int simd_registers = 16;                 // how many there are
  bool threads = true;                     // kernels may be split across cores
  int64_t cache_bytes = int64_t{1} << 20;  // private to each core (runtime::Device::cache_bytes)
  bool cpu = true;  // output loops run on cores, not as a GPU's grid of threads
};
Target target_of(const runtime::Device& device);

// The heuristic: picks opts for a lowered kernel (lower.h) from its loops and the target, trying
// them on it (apply_opts.h); NOOPT=1 picks none.
KernelOpts choose_opts(const LoweredKernel& plain, const Target& target);

// True when, with `opts`, every load and store along the SIMD lanes reads consecutive elements
// (or one element for all lanes, or a load a short run of them): no gathers, which would cost more
// than the vector saves. With `epilogue_may_gather`, a reduce's loads and stores once per output
// (after its loop) are exempt.
bool lanes_are_contiguous(const LoweredKernel& plain, const KernelOpts& opts,
                          bool epilogue_may_gather = false);

// The coefficient of `v` in the index `idx` when v appears only in terms `v` or `v * c` of a sum,
// else nullopt.
std::optional<int64_t> coefficient(const UOpRef& idx, const UOp* v);

// Of those loads and stores whose index depends on the lane: how many read consecutive elements,
// how many loads read a short run (renderer::short_run), and how many gather.
struct LaneAccesses {
  int contiguous = 0, short_runs = 0, gathered = 0;
};
LaneAccesses lane_accesses(const LoweredKernel& plain, const KernelOpts& opts,
                           bool epilogue_may_gather = false);

}  // namespace tc::codegen
