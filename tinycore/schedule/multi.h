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
// The devices are the CPU's: "CPU" and its virtual "CPU:0" .. "CPU:N-1", which share its memory,
// so a piece reads another's buffer where a GPU would copy it.
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

// Throws tc::Error unless every device is the CPU or one of its virtual CPU:N.
void check_shard_devices(const std::vector<std::string>& devices);

// `root` with every MULTI in its graph lowered: a MULTI of one graph per device, or a plain graph
// when its value is on one device (a shrink to one piece). Throws tc::Error for an op the rules
// refuse, naming it, the axis and the devices.
UOpRef lower_multi(const UOpRef& root);

// The whole value of a MULTI node on one device: its pieces side by side (or its first copy).
UOpRef gathered(const UOpRef& multi);

// Whether a MULTI node may be in `roots`' graphs (cheap: none is alive, none is there).
bool may_hold_multi(const std::vector<UOpRef>& roots);

}  // namespace tc::schedule
