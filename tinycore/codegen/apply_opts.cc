#include "tinycore/codegen/apply_opts.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "tinycore/codegen/prefetch.h"
#include "tinycore/codegen/stash.h"
#include "tinycore/error.h"

namespace tc::codegen {
namespace {

using Map = absl::flat_hash_map<const UOp*, UOpRef>;

// The SIMD lane index, 0 .. lanes-1.
UOpRef lane(int64_t lanes) { return UOp::make(Ops::LANE, dtypes::index, {index_const(lanes)}); }

// A loop of `size` iterations numbered `id`; none (index 0) for one iteration.
UOpRef loop(int64_t size, int64_t id) {
  return size == 1 ? index_const(0) : UOp::make(Ops::RANGE, dtypes::index, {index_const(size)}, id);
}

// Rebuilds the plain kernel with each plain loop replaced by its expression under the opts. A
// reduce whose innermost loop is split is rebuilt whole: its source once per unrolled run (each
// with the loop's index shifted by a run of lanes), combined, reduced over the shorter loop and,
// with lanes, across them after it.
class Rewriter {
 public:
  using SplitOf = std::function<ReduceSplit(const UOp& loop)>;
  Rewriter(SplitOf split_of, const absl::flat_hash_map<int64_t, int64_t>& renumbered)
      : split_of_(std::move(split_of)), renumbered_(renumbered) {}

  UOpRef rewrite(const UOpRef& n, const Map& to, Map& memo) {
    if (auto it = to.find(n.get()); it != to.end()) return it->second;
    if (auto it = memo.find(n.get()); it != memo.end()) return it->second;
    UOpRef out = n->op == Ops::REDUCE ? reduce(n, to, memo) : rebuilt(n, to, memo);
    memo[n.get()] = out;
    return out;
  }

 private:
  UOpRef rebuilt(const UOpRef& n, const Map& to, Map& memo) {
    std::vector<UOpRef> src;
    bool changed = false;
    for (const UOpRef& s : n->src) {
      src.push_back(rewrite(s, to, memo));
      changed = changed || src.back() != s;
    }
    return changed ? n->replace(std::move(src)) : n;
  }

  UOpRef reduce(const UOpRef& n, const Map& to, Map& memo) {
    const UOpRef& inner = n->src.back();
    int64_t size = inner->src[0]->arg_int();
    ReduceSplit split = split_of_(*inner);
    const int64_t run = split.lanes * split.unroll;
    if (run == 1) return rebuilt(n, to, memo);
    UOpRef r = loop(size / run, renumbered_.at(inner->arg_int()));
    UOpRef at = r * run;
    if (split.lanes > 1) at = at + lane(split.lanes);
    std::vector<UOpRef> ranges;
    for (size_t i = 1; i + 1 < n->src.size(); i++) ranges.push_back(rewrite(n->src[i], to, memo));
    if (r->op == Ops::RANGE) ranges.push_back(r);
    // each unrolled copy reads the next run of elements (of lanes) along the innermost loop
    UOpRef v;
    for (int64_t copy = 0; copy < split.unroll; copy++) {
      Map shifted = to, fresh;
      shifted[inner.get()] = copy == 0 ? at : at + copy * split.lanes;
      UOpRef c = rewrite(n->src[0], shifted, fresh);
      v = copy == 0 ? c : alu(static_cast<Ops>(n->arg_int()), v, c);
    }
    if (!ranges.empty()) {
      std::vector<UOpRef> src = {v};
      src.insert(src.end(), ranges.begin(), ranges.end());
      v = UOp::make(Ops::REDUCE, v->dtype, std::move(src), n->arg);
    }
    // the lane is a source: a value that does not depend on it (a sum of a constant) is the same
    // partial in every lane, and combining them all still counts each element once
    if (split.lanes == 1) return v;
    return UOp::make(Ops::HREDUCE, v->dtype, {v, lane(split.lanes)}, n->arg);
  }

  SplitOf split_of_;
  const absl::flat_hash_map<int64_t, int64_t>& renumbered_;  // the reduce loops' numbers
};

}  // namespace

ReduceSplit reduce_split(int64_t inner, const KernelOpts& opts) {
  ReduceSplit s;
  if (opts.reduce_lanes > 1 && inner % opts.reduce_lanes == 0) s.lanes = opts.reduce_lanes;
  if (opts.reduce_unroll > 1 && inner % (s.lanes * opts.reduce_unroll) == 0)
    s.unroll = opts.reduce_unroll;
  return s;
}

LoweredKernel apply_opts(const LoweredKernel& unstashed, const KernelOpts& opts) {
  const LoweredKernel plain = prefetch_streams(stash_reduce_operand(unstashed, opts), opts);
  const Shape& shape = plain.shape;
  const int nd = static_cast<int>(shape.size());
  TC_CHECK(opts.reduce_lanes == 1 || opts.lanes == 1 || opts.reduce_lanes == opts.lanes,
           "lanes of two widths, on an output axis and on reduces");
  TC_CHECK(!opts.tiled() || (opts.tile_axis >= 0 && opts.tile_axis < nd), "opts tile axis ",
           opts.tile_axis);

  // loop order: loop numbers follow it, and the linearizer opens loops by number; a tile's loop
  // over its blocks is loop 0, outside them all
  const int first = opts.tiled() ? 1 : 0;
  std::vector<int> order = opts.order;
  if (order.empty())
    for (int i = 0; i < nd; i++) order.push_back(i);
  std::vector<int64_t> loop_id(nd);
  for (int k = 0; k < nd; k++) loop_id[order[k]] = k + first;

  absl::flat_hash_map<int64_t, UOpRef> plain_loops;
  for (const UOp* u : plain.sink->toposort())
    if (u->op == Ops::RANGE) plain_loops[u->arg_int()] = u->ref();

  Map to;  // each plain loop's index under the opts
  for (int i = 0; i < nd; i++) {
    int64_t split = i == opts.lane_axis ? opts.lanes : i == opts.unroll_axis ? opts.unroll : 1;
    TC_CHECK(shape[i] % split == 0, "opts split axis ", i, " of size ", shape[i], " by ", split);
    if (shape[i] == 1) continue;
    UOpRef r = loop(shape[i] / split, loop_id[i]);
    if (opts.tiled() && i == opts.tile_axis) {  // the axis's loop, in blocks (of lanes, or rows)
      TC_CHECK(opts.tile % split == 0 && shape[i] % opts.tile == 0, "opts tile axis ", i,
               " of size ", shape[i], " by ", opts.tile, " (split by ", split, ")");
      r = loop(shape[i] / opts.tile, 0) * (opts.tile / split) + loop(opts.tile / split, loop_id[i]);
    }
    UOpRef idx = split == 1 ? r : r * split;
    if (i == opts.lane_axis) idx = idx + lane(opts.lanes);
    to[plain_loops.at(i).get()] = idx;
  }
  // the reduce loops keep their order, numbered after the output loops (a loop a split leaves
  // with one iteration is gone); an innermost one that is split is rebuilt with its reduce. The
  // output's lanes and a reduce's are one LANE: a reduce that reads the output's lane axis takes
  // none of its own (only one that does not, a row's reduce before the row's loop, may).
  absl::flat_hash_set<int64_t> innermost, reads_lanes;
  for (const UOpRef& r : plain.innermost) innermost.insert(r->arg_int());
  if (opts.lanes > 1 && shape[opts.lane_axis] != 1)
    for (const UOp* u : plain.sink->toposort())
      if (u->op == Ops::REDUCE)
        for (const UOp* n : u->src[0]->toposort())
          if (n == plain_loops.at(opts.lane_axis).get())
            reads_lanes.insert(u->src.back()->arg_int());
  auto split_of = [&](const UOp& loop) {
    if (!innermost.contains(loop.arg_int())) return ReduceSplit{};
    KernelOpts o = opts;
    if (reads_lanes.contains(loop.arg_int())) o.reduce_lanes = 1;
    return reduce_split(loop.src[0]->arg_int(), o);
  };
  std::vector<int64_t> reduce_sizes;
  absl::flat_hash_map<int64_t, int64_t> renumbered;
  for (int64_t id = nd; plain_loops.contains(id); id++) {
    const UOpRef& r = plain_loops.at(id);
    int64_t size = r->src[0]->arg_int();
    ReduceSplit split = split_of(*r);
    renumbered[id] = nd + first + static_cast<int64_t>(reduce_sizes.size());
    to[r.get()] = loop(size, renumbered[id]);
    if (size / (split.lanes * split.unroll) > 1) reduce_sizes.push_back(size);
  }

  // a store per row of the register tile, the unrolled axis's index shifted by the row
  Rewriter rewriter(split_of, renumbered);
  const UOp* unrolled = opts.unroll_axis >= 0 && shape[opts.unroll_axis] != 1
                            ? plain_loops.at(opts.unroll_axis).get()
                            : nullptr;
  std::vector<UOpRef> stores;
  for (int64_t copy = 0; copy < opts.unroll; copy++) {
    Map at = to, memo;
    if (unrolled) at[unrolled] = to.at(unrolled) + copy;
    for (const UOpRef& store : plain.sink->src) stores.push_back(rewriter.rewrite(store, at, memo));
  }

  LoweredKernel k = plain;
  k.sink = UOp::sink(std::move(stores));
  k.innermost.clear();
  k.output_loops = nd + first;
  k.name = kernel_name(shape, reduce_sizes);
  k.reduces = !reduce_sizes.empty();
  return k;
}

}  // namespace tc::codegen
