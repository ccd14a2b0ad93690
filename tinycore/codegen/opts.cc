#include "tinycore/codegen/opts.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tinycore/codegen/decompose.h"
#include "tinycore/codegen/linearize.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/helpers.h"

namespace tc::codegen {

std::string KernelOpts::key() const {
  return absl::StrCat("lanes", lane_axis, "x", lanes, ",unroll", unroll_axis, "x", unroll, ",order",
                      absl::StrJoin(order, "."), parallel ? ",par" : "");
}

namespace {

bool has_reduce(const UOpRef& ast) {
  for (const UOp* u : ast->toposort())
    if (u->op == Ops::REDUCE_AXIS) return true;
  return false;
}

}  // namespace

bool lanes_are_contiguous(const UOpRef& ast, const KernelOpts& opts, bool loads_only) {
  UOpRef sink = simplify_kernel(lower(ast, opts).sink);
  UOpRef lane;
  for (const UOp* u : sink->toposort())
    if (u->op == Ops::LANE) lane = u->ref();
  if (!lane) return true;
  for (const UOp* u : sink->toposort()) {
    if (u->op != (loads_only ? Ops::LOAD : Ops::INDEX)) continue;
    const UOpRef& idx = loads_only ? u->src[0]->src[1] : u->src[1];
    bool uses_lane = false;
    for (const UOp* n : idx->toposort()) uses_lane |= n == lane.get();
    if (uses_lane && !contiguous_base(idx, lane)) return false;
  }
  return true;
}

KernelOpts choose_opts(const UOpRef& ast, const Target& target) {
  KernelOpts o;
  if (getenv_int("NOOPT")) return o;
  const UOpRef& store = ast->src[0];
  const Shape& shape = store->src[1]->shape();
  int nd = static_cast<int>(shape.size());
  int itemsize = std::max(store->src[1]->dtype.itemsize(), 1);
  bool reduce = has_reduce(ast);

  // vector lanes: two registers wide for reduces, whose accumulators stay in registers; one for
  // elementwise kernels. Those put them on the innermost output axis, where stores are
  // contiguous too. A reduce stores each output once after many loads, so it takes the axis with
  // the widest lanes along which every load is contiguous (a conv's output channels when its
  // positions are few or strided), scattering its stores if need be.
  int last = nd - 1;
  while (last >= 0 && shape[last] == 1) last--;
  int widest = (reduce ? 2 : 1) * target.simd_bytes / itemsize;
  for (int axis = last; axis >= 0 && (reduce || axis == last); axis--) {
    int w = widest;
    while (w >= 2 && shape[axis] % w != 0) w /= 2;
    if (w <= std::max(o.lanes, 1)) continue;
    KernelOpts trial;
    trial.lane_axis = axis, trial.lanes = w;
    if (lanes_are_contiguous(ast, trial, /*loads_only=*/axis != last))
      o.lane_axis = axis, o.lanes = w;
  }

  // reduces: a register tile over a second output axis, so each load along it serves every row
  // of the tile. Its accumulators fill at most half the registers; the axis is the one allowing
  // the most rows (a divisor of its size: 7 rows of a 7x7 conv output), the longest on a tie.
  if (reduce && o.lane_axis >= 0) {
    int regs_per_row = std::max(1, o.lanes * itemsize / target.simd_bytes);
    int most = std::max(1, target.simd_registers / 2 / regs_per_row);
    for (int i = 0; i < nd; i++) {
      if (i == o.lane_axis) continue;
      int rows = most;
      while (rows > 1 && shape[i] % rows != 0) rows--;
      if (rows > o.unroll || (rows == o.unroll && rows > 1 && shape[i] > shape[o.unroll_axis]))
        o.unroll_axis = i, o.unroll = rows;
    }
  }

  o.parallel = target.threads && nd > 0;
  return o;
}

}  // namespace tc::codegen
