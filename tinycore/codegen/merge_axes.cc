#include "tinycore/codegen/merge_axes.h"

#include <algorithm>
#include <optional>

#include "tinycore/codegen/decompose.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/uop/pattern_matcher.h"

namespace tc::codegen {
namespace {

// `reduce` with its reduced axes `axis` and `axis + 1` as one: the same sum, over a view of its
// source with those two axes merged, viewed back in the original output shape.
UOpRef merged(const UOpRef& reduce, int64_t axis) {
  const UOpRef& src = reduce->src[0];
  Shape in = src->shape();
  in[axis] *= in[axis + 1];
  in.erase(in.begin() + axis + 1);
  std::vector<int64_t> arg = {reduce->arg_ints()[0]};
  for (size_t i = 1; i < reduce->arg_ints().size(); i++) {
    int64_t a = reduce->arg_ints()[i];
    if (a != axis + 1) arg.push_back(a > axis + 1 ? a - 1 : a);
  }
  UOpRef flat = UOp::make(Ops::RESHAPE, src->dtype, {src}, in);
  UOpRef sum = UOp::make(Ops::REDUCE_AXIS, reduce->dtype, {flat}, arg);
  return UOp::make(Ops::RESHAPE, reduce->dtype, {sum}, reduce->shape());
}

// Whether some division or remainder in the lowered kernel depends on a loop of `size`
// iterations: the merged loop would pay for index arithmetic the two loops did not need.
bool divides_a_loop_of(const UOpRef& ast, int64_t size) {
  UOpRef sink = simplify_kernel(lower(ast).sink);
  for (const UOp* u : sink->toposort()) {
    if (u->op != Ops::IDIV && u->op != Ops::MOD) continue;
    for (const UOp* n : u->toposort())
      if (n->op == Ops::RANGE && n->src[0]->arg_int() == size) return true;
  }
  return false;
}

// One merge that holds, or nullopt. Only a reduce's two innermost axes are tried: that is where
// a longer loop takes wider SIMD lanes, and each try lowers the whole kernel (a conv's window
// axes, which never merge, cost one try, not one per pair).
std::optional<UOpRef> merge_one(const UOpRef& ast) {
  for (const UOp* u : ast->toposort()) {
    if (u->op != Ops::REDUCE_AXIS) continue;
    const Shape& in = u->src[0]->shape();
    std::vector<int64_t> axes;  // reduced axes of more than one element, in order
    for (size_t i = 1; i < u->arg_ints().size(); i++)
      if (in[u->arg_ints()[i]] > 1) axes.push_back(u->arg_ints()[i]);
    std::sort(axes.begin(), axes.end());
    if (axes.size() < 2) continue;
    int64_t a = axes[axes.size() - 2];
    if (axes.back() != a + 1) continue;
    UOpRef candidate = substitute(ast, {{u, merged(u->ref(), a)}});
    if (!divides_a_loop_of(candidate, in[a] * in[a + 1])) return candidate;
  }
  return std::nullopt;
}

// The elementwise kernel `ast` storing its value viewed with output axes `axis` and `axis + 1` as
// one.
UOpRef with_output_axes_merged(const UOpRef& ast, size_t axis) {
  const UOpRef& store = ast->src[0];
  const UOpRef& value = store->src[1];
  Shape out = value->shape();
  out[axis] *= out[axis + 1];
  out.erase(out.begin() + static_cast<int64_t>(axis) + 1);
  UOpRef flat = UOp::make(Ops::RESHAPE, value->dtype, {value}, out);
  return UOp::sink({store->replace({store->src[0], flat})});
}

}  // namespace

UOpRef merge_reduce_axes(const UOpRef& ast) {
  UOpRef out = ast;
  while (std::optional<UOpRef> next = merge_one(out)) out = *next;
  return out;
}

UOpRef merge_output_axes(const UOpRef& ast) {
  if (ast->src.size() != 1 || has_reduce(ast)) return ast;
  // only while the innermost axis is shorter than the widest SIMD lanes (32 floats): longer ones
  // gain nothing, and a transposing copy's tiling depends on its axes
  constexpr int64_t kShort = 32;
  UOpRef out = ast;
  for (size_t i = out->src[0]->src[1]->shape().size(); i-- > 1;) {
    const Shape& shape = out->src[0]->src[1]->shape();
    if (shape[i] >= kShort) break;
    UOpRef candidate = with_output_axes_merged(out, i - 1);
    if (shape[i - 1] != 1 && shape[i] != 1 && divides_a_loop_of(candidate, shape[i - 1] * shape[i]))
      break;
    out = candidate;
  }
  return out;
}

}  // namespace tc::codegen
