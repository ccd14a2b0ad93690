#include "tinycore/codegen/prefetch.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "tinycore/codegen/narrow.h"
#include "tinycore/uop/pattern_matcher.h"
#include "tinycore/uop/symbolic.h"

namespace tc::codegen {
namespace {

// Each loop of `reduce` as (its coefficient in `index`, its trips), smallest step first; empty
// where one is not a plain multiple (or its trips are not constant).
using Steps = std::vector<std::pair<int64_t, int64_t>>;
Steps steps_of(const UOpRef& index, const UOp& reduce) {
  const UOpRef idx = simplify(index);
  Steps steps;
  for (size_t i = 1; i < reduce.src.size(); i++) {
    std::optional<int64_t> c = coefficient(idx, reduce.src[i].get());
    if (!c || reduce.src[i]->src[0]->op != Ops::CONST) return {};
    steps.push_back({*c, reduce.src[i]->src[0]->arg_int()});
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

// Whether loads with these steps read one run along the reduce's loops: the innermost steps by one
// element and each outer one by the run of those inside it (a matvec's weight row, however its sum
// is split into loops), or by `copies` such runs where that many loads of the buffer step alike
// (the words of a block, each loaded on its own). Then kPrefetchBytes ahead is where the stream
// goes next. A load that jumps between runs (a batch's statistics over each image's plane) does
// not.
bool streams(const Steps& steps, int64_t copies) {
  int64_t run = 1;
  for (auto [c, trips] : steps) {
    if (c != run && c != run * copies) return false;
    if (c != run) copies = 1;  // the copies fill one gap
    run = c * trips;
  }
  return !steps.empty();
}

UOpRef prefetch(const UOpRef& index, const UOpRef& v, bool write) {
  return UOp::make(Ops::PREFETCH, v->dtype, {index, v}, int64_t{write});
}

}  // namespace

UOpRef prefetch_next_row(const UOpRef& v, const UOpRef& at, const UOp* row, const UOp* inner) {
  const UOpRef next = row->ref() + 1;
  UOpRef out = v;
  for (const UOp* u : v->toposort())
    if (u->op == Ops::LOAD && depends_on(u->src[0], {inner}) && depends_on(u->src[0], {row}))
      out = prefetch(substitute(u->src[0], {{row, next}}), out, false);
  return prefetch(substitute(at, {{row, next}}), out, true);
}

LoweredKernel prefetch_streams(const LoweredKernel& plain, const KernelOpts& opts) {
  if (!opts.prefetch) return plain;
  const int nd = static_cast<int>(plain.shape.size());
  absl::flat_hash_map<const UOp*, UOpRef> ahead;
  for (const UOp* r : plain.sink->toposort()) {
    if (r->op != Ops::REDUCE) continue;
    std::vector<std::pair<const UOp*, Steps>> own;  // loads of their own part for every output
    absl::flat_hash_map<std::pair<const UOp*, Steps>, int64_t> copies;  // per buffer and steps
    for (const UOp* u : r->src[0]->toposort()) {
      if (u->op != Ops::LOAD || ahead.contains(u)) continue;
      const UOpRef& index = u->src[0];
      bool reads_output = false;
      for (const UOp* n : index->toposort())
        reads_output = reads_output || (n->op == Ops::RANGE && n->arg_int() < nd);
      if (!reads_output) continue;
      own.push_back({u, steps_of(index->src[1], *r)});
      copies[{index->src[0].get(), own.back().second}]++;
    }
    for (const auto& [u, steps] : own) {
      const UOpRef& index = u->src[0];
      if (!streams(steps, copies[{index->src[0].get(), steps}])) continue;
      std::vector<UOpRef> src = index->src;
      src[1] = src[1] + kPrefetchBytes / index->src[0]->dtype.itemsize();
      ahead[u] = prefetch(index->replace(src), u->ref(), false);
    }
  }
  if (ahead.empty()) return plain;
  LoweredKernel k = plain;
  k.sink = substitute(plain.sink, ahead);
  return k;
}

}  // namespace tc::codegen
