// SIMD lanes of a linear program (codegen/linearize.h): which values are vectors, and how a
// vector's lanes address memory. The LLVM renderer emits vector code from it; codegen's opts and
// counts read it too.
#pragma once

#include <optional>
#include <vector>

#include "tinycore/uop/symbolic.h"
#include "tinycore/uop/uop.h"

namespace tc::renderer {

// The width of the program's SIMD lanes (1 without a LANE), and the nodes whose value differs
// per lane (they are vectors of that width; an accumulator is one when its update is).
struct Lanes {
  int width = 1;
  UOpRef lane;                      // the LANE node, if any
  std::vector<const UOp*> vectors;  // sorted
  bool is_vector(const UOp* u) const;
};
Lanes find_lanes(const std::vector<UOpRef>& program);

// For an index `base + lane` whose base does not depend on the lane (the lanes read consecutive
// elements), the base; else nullptr.
UOpRef contiguous_base(const UOpRef& idx, const UOpRef& lane);

// For a per-lane index `base + offsets[lane]` whose lanes read within two vectors' length (an
// upsample's 0,0,1,1, a reversal): the lowest address and each lane's offset from it, so those
// elements load as one short vector shuffled into place rather than lane by lane; else nullopt.
std::optional<LaneOffsets> short_run(const UOpRef& idx, const UOpRef& lane, int width);

}  // namespace tc::renderer
