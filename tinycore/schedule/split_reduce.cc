#include "tinycore/schedule/split_reduce.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "absl/container/flat_hash_set.h"

namespace tc::schedule {
namespace {

constexpr int64_t kMinReduce = 32768;  // smaller reduces run fast enough in one kernel
constexpr int64_t kMaxOutputs = 1024;  // with this many outputs, cores already have work
constexpr int64_t kMinChunk = 2048;    // a partial sum of fewer elements costs more than it saves
// A reduce this big into many outputs (a conv's weight gradient) would stream its whole input
// once per register tile of outputs: split, each partial reads a slab that stays in cache.
constexpr int64_t kMinBlockedReduce = 16384;

// Whether the kernel that computes x (its graph down to the reduces below, kernels of their own)
// holds a node for which found() holds.
template <class Found>
bool in_kernel(const UOpRef& x, Found found) {
  std::vector<const UOp*> stack = {x.get()};
  absl::flat_hash_set<const UOp*> seen;
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (!seen.insert(u).second) continue;
    if (found(*u)) return true;
    if (u->op != Ops::REDUCE_AXIS)
      for (const UOpRef& s : u->src) stack.push_back(s.get());
  }
  return false;
}

// REDUCE_AXIS(x, axes) -> RESHAPE(REDUCE_AXIS(REDUCE_AXIS(x split into (chunks, chunk), with
// chunks moved first), chunks)). The partial sums' kernel loops over chunks outermost: its cores
// take whole chunks, and each chunk's slab of the input is read from cache by every output.
UOpRef split(const UOpRef& r) {
  const UOpRef& x = r->src[0];
  const Shape& in = x->shape();
  const auto& arg = r->arg_ints();
  std::vector<int64_t> axes(arg.begin() + 1, arg.end());
  int64_t outputs = shape_numel(r->shape());
  int64_t reduced = shape_numel(in) / std::max<int64_t>(outputs, 1);
  bool few_outputs = reduced >= kMinReduce && outputs < kMaxOutputs;
  if (!few_outputs && reduced < kMinBlockedReduce) return nullptr;
  // a gather runs one trip per output (codegen narrows it), which a split would hide behind two
  // loops; tested after the cheap tests: it walks x's graph
  if (gathers(*r)) return nullptr;
  // Chunks of the outermost reduce axis: each partial sums a contiguous slab of memory. Few
  // outputs: as many chunks as keep a partial at kMinChunk elements or more (fewer, with partials
  // of kMinReduce or more, and the partials would be split again, their chunks interleaved with
  // these: every core's reads strided, at half the bandwidth). Many outputs: up to 64 chunks,
  // whose partials are as big as the outputs each.
  int64_t a = -1, chunks = 0;
  for (int64_t b : axes) {
    for (int64_t d = few_outputs ? 16384 : 64; d >= 8; d /= 2)
      if (in[b] % d == 0 && in[b] > d && (!few_outputs || reduced / d >= kMinChunk)) {
        a = b, chunks = d;
        break;
      }
    if (a >= 0) break;
  }
  if (a < 0) return nullptr;

  Shape split_shape(in.begin(), in.begin() + a);
  split_shape.push_back(chunks);
  split_shape.push_back(in[a] / chunks);
  split_shape.insert(split_shape.end(), in.begin() + a + 1, in.end());
  UOpRef xs = UOp::make(Ops::RESHAPE, x->dtype, {x}, split_shape);
  std::vector<int64_t> chunks_first = {a};
  for (int64_t i = 0; i < static_cast<int64_t>(split_shape.size()); i++)
    if (i != a) chunks_first.push_back(i);
  xs = UOp::make(Ops::PERMUTE, x->dtype, {xs}, chunks_first);
  // every reduce axis moves up one: past the chunks axis, or (axis a) to the chunk's elements
  std::vector<int64_t> first = {arg[0]};
  for (int64_t b : axes) first.push_back(b + 1);
  UOpRef partial = UOp::make(Ops::REDUCE_AXIS, r->dtype, {xs}, first);
  UOpRef total = UOp::make(Ops::REDUCE_AXIS, r->dtype, {partial}, std::vector<int64_t>{arg[0], 0});
  return UOp::make(Ops::RESHAPE, r->dtype, {total}, r->shape());
}

}  // namespace

// Only a factor of the operand counts (through products, casts, views, detaches and
// where(c, x, 0), as codegen narrows: codegen/narrow.h): a one-hot subtracted from a value (a
// loss's gradient, softmax - one_hot, times the output weights) leaves every term of the sum
// nonzero. And only an arange as long as a reduced axis, in the operand's own kernel: a loss's
// one-hot over 10 classes up a backward graph is not this reduce's.
bool gathers(const UOp& r) {
  const Shape& in = r.src[0]->shape();
  std::vector<int64_t> reduced_sizes;
  for (size_t i = 1; i < r.arg_ints().size(); i++) reduced_sizes.push_back(in[r.arg_ints()[i]]);
  auto along_reduce = [&](const UOp& v) {
    return v.op == Ops::IOTA &&
           std::count(reduced_sizes.begin(), reduced_sizes.end(), v.arg_ints()[0]) > 0;
  };
  auto zero = [](const UOpRef& v) {
    const UOp* u = v.get();
    while (group::is_movement(u->op)) u = u->src[0].get();
    return u->is_const(0);
  };
  std::function<bool(const UOp&)> factor = [&](const UOp& u) {
    if (u.op == Ops::CMPEQ)
      return std::any_of(u.src.begin(), u.src.end(),
                         [&](const UOpRef& s) { return in_kernel(s, along_reduce); });
    if (u.op == Ops::MUL || (u.op == Ops::WHERE && zero(u.src[2])))
      return factor(*u.src[0]) || factor(*u.src[1]);
    bool through = u.op == Ops::CAST || u.op == Ops::DETACH || group::is_movement(u.op);
    return through && factor(*u.src[0]);
  };
  return factor(*r.src[0]);
}

const PatternMatcher& split_reduces() {
  static const PatternMatcher pm({
      // big reduce into few outputs -> reduce of chunks, then reduce of the partials
      {UPat::op(Ops::REDUCE_AXIS).no_src_check().named("r"),
       [](const Captures& c) { return split(c["r"]); }},
  });
  return pm;
}

}  // namespace tc::schedule
