#include "tinycore/codegen/stash.h"

#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "tinycore/codegen/prefetch.h"
#include "tinycore/uop/pattern_matcher.h"

namespace tc::codegen {
namespace {

// Worth a store and a load in its place: a transcendental function or a division computed per
// element of the loop `inner` (not one computed once a row, as a mean's division).
bool costly(const UOp& v, const UOp* inner) {
  absl::flat_hash_map<const UOp*, bool> per_element;
  bool found = false;
  std::function<bool(const UOp&)> walk = [&](const UOp& u) {
    if (auto it = per_element.find(&u); it != per_element.end()) return it->second;
    bool reads = &u == inner;
    if (u.op != Ops::REDUCE)
      for (const UOpRef& s : u.src) reads = walk(*s) || reads;
    found = found || (reads && (u.op == Ops::EXP2 || u.op == Ops::EXP || u.op == Ops::LOG2 ||
                                u.op == Ops::SIN || u.op == Ops::SQRT || u.op == Ops::RECIP ||
                                u.op == Ops::FDIV));
    return per_element[&u] = reads;
  };
  walk(v);
  return found;
}

// The output loops (numbered below nd) that u reads.
absl::flat_hash_set<int64_t> output_loops(const UOp& u, int nd) {
  absl::flat_hash_set<int64_t> out;
  for (const UOp* n : u.toposort())
    if (n->op == Ops::RANGE && n->arg_int() < nd) out.insert(n->arg_int());
  return out;
}

}  // namespace

LoweredKernel stash_reduce_operand(const LoweredKernel& plain, const KernelOpts& opts) {
  if (!opts.stash || opts.tiled() || plain.sink->src.size() != 1) return plain;
  const UOpRef& store = plain.sink->src[0];
  const UOpRef &addr = store->src[0], &value = store->src[1];
  if (value->dtype != dtypes::float32 && value->dtype != dtypes::float64) return plain;
  const int nd = static_cast<int>(plain.shape.size());
  std::vector<int> position(nd);
  for (int k = 0; k < nd; k++) position[opts.order.empty() ? k : opts.order[k]] = k;

  std::vector<const UOp*> loops(nd, nullptr), reduces;
  for (const UOp* u : plain.sink->toposort()) {
    if (u->op == Ops::RANGE && u->arg_int() < nd) loops[u->arg_int()] = u;
    if (u->op == Ops::REDUCE) reduces.push_back(u);
    if (u->op == Ops::LOAD && u->src[0]->src[0] == addr->src[0]) return plain;  // in place
  }
  // the row's loop c: no reduce reads it, and it stays a loop (it opens once the reduces are
  // done, so its loads read what they stored: a row that is one vector would load before)
  auto stays_a_loop = [&](int c) {
    int64_t left = plain.shape[c];
    if (opts.lane_axis == c) left /= opts.lanes;
    if (opts.unroll_axis == c) left /= opts.unroll;
    return left > 1;
  };
  absl::flat_hash_set<int64_t> read_by_reduces;
  for (const UOp* r : reduces) read_by_reduces.merge(output_loops(*r, nd));
  const std::vector<const UOp*> in_value = value->toposort();
  const absl::flat_hash_set<const UOp*> computed(in_value.begin(), in_value.end());
  for (int c = 0; c < nd; c++) {
    if (!loops[c] || read_by_reduces.contains(c) || !stays_a_loop(c)) continue;
    for (const UOp* r : reduces) {
      // one loop as long as the row's, after which the reduce is done. It runs inside output
      // loops that all open before the row's (so the row's is not the loop cores share), and
      // where it stores the row's element it reads no other output loop.
      const UOpRef& inner = r->src.back();
      if (r->src.size() != 2 || inner->src[0] != loops[c]->src[0]) continue;
      absl::flat_hash_set<int64_t> read = output_loops(*r, nd);
      bool before = !read.empty();
      int64_t row = -1;  // the innermost of them
      for (int64_t i : read) {
        before = before && position[i] < position[c];
        if (row < 0 || position[i] > position[row]) row = i;
      }
      UOpRef at = substitute(addr, {{loops[c], inner}});
      for (int64_t i : output_loops(*at, nd)) before = before && read.contains(i);
      if (!before) continue;
      // the largest costly part of its operand that the row's loop computes again
      std::vector<const UOp*> operand = r->src[0]->toposort();
      for (auto it = operand.rbegin(); it != operand.rend(); ++it) {
        const UOpRef s = (*it)->ref();
        if (s->dtype != value->dtype || !costly(*s, inner.get())) continue;
        UOpRef again = substitute(s, {{inner.get(), loops[c]->ref()}});
        if (again == s || !computed.contains(again.get())) continue;
        UOpRef ahead = row == opts.lane_axis || row == opts.unroll_axis
                           ? s
                           : prefetch_next_row(s, at, loops[row], inner.get());
        UOpRef stashed = UOp::make(Ops::STASH, s->dtype, {at, ahead});
        UOpRef reduce = r->replace({substitute(r->src[0], {{s.get(), stashed}}), inner});
        UOpRef loaded = UOp::make(Ops::LOAD, s->dtype, {addr});
        LoweredKernel k = plain;
        k.sink = UOp::sink(
            {store->replace({addr, substitute(value, {{r, reduce}, {again.get(), loaded}})})});
        return k;
      }
    }
  }
  return plain;
}

}  // namespace tc::codegen
