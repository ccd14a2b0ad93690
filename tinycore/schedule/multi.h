// Multi-device tensors, as tinygrad's: a MULTI node is one tensor whose pieces (its sources) live
// on several devices, split along one axis or each a whole copy. Graphs are built on the logical
// tensors (autograd too); before scheduling, lower_multi rewrites a graph into one graph per
// device with the rules of tinygrad's schedule/multi.py, so each device computes its piece:
//   - elementwise ops on equally split sources run per piece; a source on one device is split
//     like the others, one split along another axis is split again, a whole copy is cut;
//   - a reduce over the split axis reduces each piece, then all-reduces: every device sums (max,
//     min) the pieces, and the result is whole on each;
//   - movement ops run per piece, their arguments made the piece's; a reshape that would move
//     elements between pieces, and an expand, pad or flip of the split axis, are errors naming
//     the op, the axis and the devices (a shrink to exactly one piece is that piece).
// The devices are any of this machine's: the CPU's virtual "CPU:0" .. "CPU:N-1" share its memory,
// so a piece reads another's buffer; between devices that do not (the CPU and CL, or a GPU) a piece
// that another device reads is copied there (Ops::COPY). ":N" names one device of a kind: CL:1
// and CUDA:1 are CL and CUDA themselves (one GPU each), like the CPU's.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tinycore/uop/uop.h"

namespace tc::schedule {

struct Sharding {
  int axis = -1;  // -1: every device holds the whole tensor
  std::vector<std::string> devices;
};
Sharding sharding_of(const UOp& multi);
// The MULTI node of `pieces` (one per device, split along `s.axis`).
UOpRef make_multi(std::vector<UOpRef> pieces, const Sharding& s);

// Where each of `parts` pieces of an axis of `n` elements begins and ends: ceil(n / parts) each,
// the last ones shorter or empty (tinygrad's split).
std::vector<std::pair<int64_t, int64_t>> split_bounds(int64_t n, int parts);

// Throws tc::Error naming a device that is not a name with an optional :N, or not on this machine.
void check_shard_devices(const std::vector<std::string>& devices);

// `x` computed on `device`: itself where its graph is there already ("CPU:1" is the CPU) or reads
// no buffer (constants are computed where they are read, unless `constants`), else a COPY of it.
UOpRef placed(const UOpRef& x, const std::string& device, bool constants = false);

// The pieces `partial` (one per device of `devices`, equal shapes) combined by `op` (ADD, MAX),
// one result on each device, equal on all. Devices that share memory (the CPU's virtual ones) read
// each other's pieces; between devices that copy, each device copies in every piece (naive), or,
// with more than two devices and over RING_ALLREDUCE_THRESHOLD (256000) elements, the pieces go
// around a ring: a reduce-scatter and an all-gather, as tinygrad's. RING=0 never rings, RING=2
// always does.
std::vector<UOpRef> allreduce(const std::vector<UOpRef>& partial, Ops op,
                              const std::vector<std::string>& devices);

// `root` with every MULTI in its graph lowered: a MULTI of one graph per device, or a plain graph
// when its value is on one device (a shrink to one piece). Throws tc::Error for an op the rules
// refuse, naming it, the axis and the devices.
UOpRef lower_multi(const UOpRef& root);

// The whole value of a MULTI node on `device`: its pieces copied there and put side by side (or
// its first copy).
UOpRef gathered(const UOpRef& multi, const std::string& device);

// `pieces` side by side along `axis` (each padded to its place, then summed).
UOpRef joined(const std::vector<UOpRef>& pieces, int axis);

// Whether a MULTI node may be in `roots`' graphs (cheap: none is alive, none is there).
bool may_hold_multi(const std::vector<UOpRef>& roots);

}  // namespace tc::schedule
