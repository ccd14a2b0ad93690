#include "tinycore/schedule/split_reduce.h"

#include <algorithm>

namespace tc::schedule {
namespace {

constexpr int64_t kMinReduce = 32768;  // smaller reduces run fast enough in one kernel
constexpr int64_t kMaxOutputs = 1024;  // with this many outputs, cores already have work

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// REDUCE_AXIS(x, axes) -> RESHAPE(REDUCE_AXIS(REDUCE_AXIS(x split into (chunks, chunk)), chunks))
UOpRef split(const UOpRef& r) {
  const UOpRef& x = r->src[0];
  const Shape& in = x->shape();
  const auto& arg = r->arg_ints();
  std::vector<int64_t> axes(arg.begin() + 1, arg.end());
  int64_t reduced = numel(in) / std::max<int64_t>(numel(r->shape()), 1);
  if (reduced < kMinReduce || numel(r->shape()) >= kMaxOutputs) return nullptr;
  // chunks of the outermost reduce axis: each partial sums a contiguous slab of memory
  int64_t a = -1, chunks = 0;
  for (int64_t b : axes) {
    for (int64_t d : {256, 128, 64, 32, 16, 8})
      if (in[b] % d == 0) {
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
  std::vector<int64_t> first = {arg[0]};
  for (int64_t b : axes) first.push_back(b < a ? b : b + 1);  // axis a's chunk is axis a+1 now
  std::sort(first.begin() + 1, first.end());
  UOpRef partial = UOp::make(Ops::REDUCE_AXIS, r->dtype, {xs}, first);
  UOpRef total = UOp::make(Ops::REDUCE_AXIS, r->dtype, {partial}, std::vector<int64_t>{arg[0], a});
  return UOp::make(Ops::RESHAPE, r->dtype, {total}, r->shape());
}

}  // namespace

const PatternMatcher& split_reduces() {
  static const PatternMatcher pm({
      // big reduce into few outputs -> reduce of chunks, then reduce of the partials
      {UPat::op(Ops::REDUCE_AXIS).no_src_check().named("r"),
       [](const Captures& c) { return split(c["r"]); }},
  });
  return pm;
}

}  // namespace tc::schedule
