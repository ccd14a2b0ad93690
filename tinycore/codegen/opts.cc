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

bool lanes_are_contiguous(const UOpRef& ast, const KernelOpts& opts) {
  UOpRef sink = simplify_kernel(lower(ast, opts).sink);
  UOpRef lane;
  for (const UOp* u : sink->toposort())
    if (u->op == Ops::LANE) lane = u->ref();
  if (!lane) return true;
  for (const UOp* u : sink->toposort()) {
    if (u->op != Ops::INDEX) continue;
    const UOpRef& idx = u->src[1];
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

  // vector lanes on the innermost output axis (contiguous in the output): two registers wide
  // for reduces, whose accumulators stay in registers; one for elementwise kernels
  int last = nd - 1;
  while (last >= 0 && shape[last] == 1) last--;
  int widest = (reduce ? 2 : 1) * target.simd_bytes / itemsize;
  for (int w = widest; last >= 0 && w >= 2; w /= 2) {
    if (shape[last] % w != 0) continue;
    KernelOpts trial;
    trial.lane_axis = last, trial.lanes = w;
    if (lanes_are_contiguous(ast, trial)) o.lane_axis = last, o.lanes = w;
    break;
  }

  // reduces: a register tile over a second output axis, so each load along it serves every row
  // of the tile; the tile's accumulators fill half the registers
  if (reduce && o.lane_axis >= 0) {
    int regs_per_row = std::max(1, o.lanes * itemsize / target.simd_bytes);
    int rows = std::max(1, target.simd_registers / 2 / regs_per_row);
    int best = -1;
    for (int i = 0; i < nd; i++)
      if (i != o.lane_axis && shape[i] > 1 && (best < 0 || shape[i] > shape[best])) best = i;
    while (best >= 0 && rows > 1 && shape[best] % rows != 0) rows /= 2;
    if (best >= 0 && rows > 1) o.unroll_axis = best, o.unroll = rows;
  }

  o.parallel = target.threads && nd > 0;
  return o;
}

}  // namespace tc::codegen
