#include "tinycore/codegen/merge_axes.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "tinycore/codegen/decompose.h"

namespace tc::codegen {
namespace {

using Map = absl::flat_hash_map<const UOp*, UOpRef>;

UOpRef range(int64_t size, int64_t id) {
  return UOp::make(Ops::RANGE, dtypes::index, {index_const(size)}, id);
}

// `sink` with loops `outer` and `inner` as one loop `merged` (outer * inner iterations, numbered
// as `outer`): each reads merged // inner and merged % inner, and a reduce over both runs over
// `merged`.
UOpRef merge_loops(const UOpRef& sink, const UOpRef& outer, const UOpRef& inner,
                   const UOpRef& merged) {
  const int64_t n = inner->src[0]->arg_int();
  Map memo = {{outer.get(), merged / n}, {inner.get(), merged % n}};
  std::function<UOpRef(const UOpRef&)> walk = [&](const UOpRef& u) -> UOpRef {
    if (auto it = memo.find(u.get()); it != memo.end()) return it->second;
    std::vector<UOpRef> src;
    for (size_t i = 0; i < u->src.size(); i++) {
      bool loop = u->op == Ops::REDUCE && i > 0;
      if (loop && u->src[i] == inner) continue;
      src.push_back(loop && u->src[i] == outer ? merged : walk(u->src[i]));
    }
    return memo[u.get()] = src == u->src ? u : u->replace(std::move(src));
  };
  return walk(sink);
}

// `sink` simplified, unless some division or remainder in it depends on loop `merged`. Simplified,
// so that the opts' splits of the merged loop (into lanes) index without the division either.
std::optional<UOpRef> without_division(const UOpRef& sink, const UOpRef& merged) {
  UOpRef simplified = simplify_kernel(sink);
  for (const UOp* u : simplified->toposort()) {
    if (u->op != Ops::IDIV && u->op != Ops::MOD) continue;
    for (const UOp* n : u->toposort())
      if (n == merged.get()) return std::nullopt;
  }
  return simplified;
}

// The kernel's loops renumbered as lower() numbers them (output axis i is loop i, the reduce
// loops after them in their order), its name from their sizes.
LoweredKernel renumbered(LoweredKernel k, const std::vector<UOpRef>& outputs) {
  std::map<int64_t, UOpRef> reduces;  // by number
  for (const UOp* u : k.sink->toposort())
    if (u->op == Ops::RANGE && std::find(outputs.begin(), outputs.end(), u->ref()) == outputs.end())
      reduces[u->arg_int()] = u->ref();
  Map to;
  std::vector<int64_t> reduce_sizes;
  for (size_t i = 0; i < outputs.size(); i++)
    if (outputs[i])
      to[outputs[i].get()] = range(outputs[i]->src[0]->arg_int(), static_cast<int64_t>(i));
  for (const auto& [id, r] : reduces) {
    reduce_sizes.push_back(r->src[0]->arg_int());
    to[r.get()] =
        range(reduce_sizes.back(), static_cast<int64_t>(outputs.size() + reduce_sizes.size() - 1));
  }
  k.sink = substitute(k.sink, to);
  std::vector<UOpRef> innermost;  // of the reduces simplifying left
  for (const UOpRef& r : k.innermost)
    if (auto it = to.find(r.get()); it != to.end()) innermost.push_back(it->second);
  k.innermost = std::move(innermost);
  k.output_loops = static_cast<int>(k.shape.size());
  k.name = kernel_name(k.shape, reduce_sizes);
  return k;
}

}  // namespace

LoweredKernel merge_axes(const LoweredKernel& plain) {
  LoweredKernel k = plain;
  // the output loops, per axis (none for an axis of 1)
  std::vector<UOpRef> outputs(k.shape.size());
  for (const UOp* u : k.sink->toposort())
    if (u->op == Ops::RANGE && u->arg_int() < static_cast<int64_t>(outputs.size()))
      outputs[u->arg_int()] = u->ref();

  // each reduce's two innermost loops, while they merge (a conv's window loops, which never do,
  // cost one try)
  for (const UOpRef& last : plain.innermost) {
    UOpRef inner = last;
    while (true) {
      const UOp* reduce = nullptr;
      for (const UOp* u : k.sink->toposort())
        if (u->op == Ops::REDUCE && u->src.back() == inner && u->src.size() > 2) reduce = u;
      if (!reduce) break;
      const UOpRef& outer = reduce->src[reduce->src.size() - 2];
      UOpRef merged = range(outer->src[0]->arg_int() * inner->src[0]->arg_int(), outer->arg_int());
      std::optional<UOpRef> sink =
          without_division(merge_loops(k.sink, outer, inner, merged), merged);
      if (!sink) break;
      k.sink = *sink;
      std::replace(k.innermost.begin(), k.innermost.end(), inner, merged);
      inner = merged;
    }
  }

  // the innermost output loops: an elementwise kernel's only while the innermost is shorter than
  // the widest SIMD lanes (32 floats): longer ones gain nothing, and a transposing copy's tiling
  // depends on its axes; a reduce's where the innermost is no multiple of them and the merged loop
  // is (a 1x1 conv's 56x56 positions as 3136 take 32 lanes and store whole vectors, rather than
  // lanes on its channels scattering each store; a 3x3 conv's windows never merge)
  constexpr int64_t kLanes = 32;
  const bool reduce = has_reduce(k.ast);
  if (k.sink->src.size() == 1)
    for (size_t i = k.shape.size(); i-- > 1;) {
      if (reduce ? k.shape[i] % kLanes == 0 || k.shape[i - 1] * k.shape[i] % kLanes != 0
                 : k.shape[i] >= kLanes)
        break;
      UOpRef outer = outputs[i - 1], inner = outputs[i], merged = outer ? outer : inner;
      if (outer && inner) {
        merged = range(k.shape[i - 1] * k.shape[i], outer->arg_int());
        std::optional<UOpRef> sink =
            without_division(merge_loops(k.sink, outer, inner, merged), merged);
        if (!sink) break;
        k.sink = *sink;
      }
      k.shape[i - 1] *= k.shape[i];
      k.shape.erase(k.shape.begin() + static_cast<int64_t>(i));
      outputs[i - 1] = merged;
      outputs.erase(outputs.begin() + static_cast<int64_t>(i));
    }
  return renumbered(std::move(k), outputs);
}

}  // namespace tc::codegen
