#include "tinycore/codegen/prefetch.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "tinycore/uop/pattern_matcher.h"

namespace tc::codegen {
namespace {

bool reads(const UOpRef& u, const UOp* node) {
  std::vector<const UOp*> all = u->toposort();
  return std::find(all.begin(), all.end(), node) != all.end();
}

UOpRef prefetch(const UOpRef& index, const UOpRef& v, bool write) {
  return UOp::make(Ops::PREFETCH, v->dtype, {index, v}, int64_t{write});
}

}  // namespace

UOpRef prefetch_next_row(const UOpRef& v, const UOpRef& at, const UOp* row, const UOp* inner) {
  const UOpRef next = row->ref() + 1;
  UOpRef out = v;
  for (const UOp* u : v->toposort())
    if (u->op == Ops::LOAD && reads(u->src[0], inner) && reads(u->src[0], row))
      out = prefetch(substitute(u->src[0], {{row, next}}), out, false);
  return prefetch(substitute(at, {{row, next}}), out, true);
}

LoweredKernel prefetch_streams(const LoweredKernel& plain, const KernelOpts& opts) {
  if (!opts.prefetch) return plain;
  const int nd = static_cast<int>(plain.shape.size());
  absl::flat_hash_map<const UOp*, UOpRef> ahead;
  for (const UOp* r : plain.sink->toposort()) {
    if (r->op != Ops::REDUCE) continue;
    for (const UOp* u : r->src[0]->toposort()) {
      if (u->op != Ops::LOAD || ahead.contains(u)) continue;
      bool along = false, own = false;  // reads the reduce's loops; an output loop: its own part
      for (const UOp* n : u->src[0]->toposort()) {
        along = along || std::any_of(r->src.begin() + 1, r->src.end(),
                                     [&](const UOpRef& loop) { return loop.get() == n; });
        own = own || (n->op == Ops::RANGE && n->arg_int() < nd);
      }
      if (!along || !own) continue;
      const UOpRef& index = u->src[0];
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
