// Sorting (a bitonic network of compare-exchange steps over (value, index) pairs, each step a
// where() between two halves of a view), argsort and topk. All composed from Tensor ops: movement,
// elementwise and reductions, no hand-written kernels.
#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "tinycore/tensor.h"
#include "tinycore/tensor/internal.h"

namespace tc {

using detail::resolve_dim;
using detail::split_last;

namespace {

// Lines of up to 2^kRankSortLog2 elements are sorted by ranking (O(n^2) work, two kernels),
// longer ones in such blocks first and then by bitonic merges.
constexpr int kRankSortLog2 = 5;

// The dtype the network runs in: holds every value of `d` and every index below `n` exactly.
DType work_dtype(DType d, int64_t n) {
  if (dtypes::is_float(d)) {
    bool small = d == dtypes::float16 || d == dtypes::bfloat16 || d == dtypes::float32;
    return small && n <= (int64_t{1} << 24) ? dtypes::float32 : dtypes::float64;
  }
  if (d == dtypes::uint64) return dtypes::uint64;
  if (d == dtypes::int64 || d == dtypes::uint32 || n > (int64_t{1} << 31)) return dtypes::int64;
  return dtypes::int32;  // bool, int8..int32, uint8, uint16
}

// Whether (value a, index ia) comes before (b, ib): by value, NaN as the largest value, ties by
// index. Keys are distinct, so this is a strict total order.
Tensor comes_before(const Tensor& a, const Tensor& ia, const Tensor& b, const Tensor& ib) {
  Tensor first = a.lt(b), same = a.eq(b);
  if (dtypes::is_float(a.dtype())) {
    Tensor na = a.isnan(), nb = b.isnan();
    first = first.bitwise_or(nb.bitwise_and(na.logical_not()));
    same = same.bitwise_or(na.bitwise_and(nb));
  }
  return first.bitwise_or(same.bitwise_and(ia.lt(ib)));
}

// The slice [b, e) of axis `axis` (negative counts from the end).
Tensor slice(const Tensor& t, int axis, int64_t b, int64_t e) {
  int a = resolve_dim("sort", t, axis);
  std::vector<std::pair<int64_t, int64_t>> r;
  for (int i = 0; i < t.ndim(); i++)
    r.push_back(i == a ? std::make_pair(b, e) : std::make_pair(int64_t{0}, t.shape()[i]));
  return t.shrink(r);
}

// One compare-exchange step over p = stack(values, indices) of shape (2, ..., N): the elements
// at distance d within each block of 2d are put in order. Written without a cat: the first of a
// pair keeps its element when it comes before its partner, the second when it does not.
Tensor compare_exchange(const Tensor& p, int64_t d) {
  const Shape& s = p.shape();
  int64_t n = s.back();
  Shape split = split_last(s, {n / (2 * d), 2, d});
  Tensor q = p.reshape(split);
  Tensor top = slice(q, -2, 0, 1), bot = slice(q, -2, 1, 2);
  Tensor before = comes_before(slice(top, 0, 0, 1), slice(top, 0, 1, 2), slice(bot, 0, 0, 1),
                               slice(bot, 0, 1, 2));
  Tensor second = Tensor::full({1, 1}, true).pad({{1, 0}, {0, 0}});  // [[false], [true]]
  Tensor keep_top = before.bitwise_xor(second);
  return keep_top.where(top.expand(split), bot.expand(split)).reshape(s).contiguous();
}

// p = stack(values, indices) of shape (2, ..., N) with every block of `block` elements sorted:
// each element's rank in its block is the number of elements that come before it (block^2
// comparisons and a sum), then output position j selects the element of rank j (a one-hot
// select-and-sum, exact). Two kernels, where a bitonic network needs log2(block) (log2(block)
// + 1) / 2 of them.
Tensor rank_sort_blocks(const Tensor& p, int64_t block) {
  const Shape& s = p.shape();
  int64_t n = s.back();
  Tensor q = p.reshape(split_last(s, {n / block, block}));
  Tensor v = slice(q, 0, 0, 1), i = slice(q, 0, 1, 2);
  // before[..., a, b]: element a comes before element b
  Tensor before = comes_before(v.unsqueeze(-1), i.unsqueeze(-1), v.unsqueeze(-2), i.unsqueeze(-2));
  Tensor rank = before.cast(dtypes::int32).sum(-2);  // (1, ..., n / block, block)
  Tensor pos = detail::binary_iota(block, dtypes::int32).reshape({block, 1});
  Tensor onehot = rank.unsqueeze(-2).eq(pos);  // [..., j, b]: element b has rank j
  return onehot.where(q.unsqueeze(-2), ConstValue(0))
      .sum(-1)
      .cast(p.dtype())
      .reshape(s)
      .contiguous();
}

// The second half of every block of `block` elements reversed (a view).
Tensor reverse_second_halves(const Tensor& p, int64_t block) {
  const Shape& s = p.shape();
  int64_t n = s.back();
  Tensor q = p.reshape(split_last(s, {n / block, 2, block / 2}));
  Tensor lo = slice(q, -2, 0, 1), hi = slice(q, -2, 1, 2).flip({-1});
  return lo.cat({hi}, -2).reshape(s);
}

}  // namespace

std::pair<Tensor, Tensor> Tensor::sort(int dim, bool descending) const {
  int a = resolve_dim("sort", *this, dim);
  if (ndim() == 0) return {*this, zeros({}, dtypes::int32)};
  int64_t n = shape()[a];
  if (numel() == 0) return {*this, zeros(shape(), dtypes::int32)};
  Tensor xt = transpose(a, -1);
  // descending is the ascending sort of the reversed line, reversed back: equal elements then
  // keep their original order, and NaN comes first
  Tensor x = descending ? xt.flip({-1}) : xt;
  int k = 0;
  while ((int64_t{1} << k) < n) k++;
  int64_t big = int64_t{1} << k;
  DType w = work_dtype(dtype(), big);
  // padding that sorts after every element (NaN for floats, the dtype's max for integers): its
  // indices n .. big-1 also put it after equal elements
  ConstValue fill = ConstValue(1);  // bool
  if (dtypes::is_float(dtype())) fill = ConstValue(std::numeric_limits<double>::quiet_NaN());
  if (dtype() == dtypes::int64) fill = ConstValue(std::numeric_limits<long long>::max());
  if (dtype() == dtypes::uint64) fill = ConstValue(-1LL);  // wraps to the largest uint64
  if (dtypes::is_int(dtype()) && dtype().itemsize() < 8)
    fill = ConstValue(static_cast<long long>(dtypes::max(dtype())));
  std::vector<std::pair<int64_t, int64_t>> pad(x.ndim(), {0, 0});
  pad.back() = {0, big - n};
  Tensor v = x.detach().cast(w).pad(pad, fill);
  Tensor idx =
      detail::binary_iota(big, w).reshape(split_last(Shape(x.ndim(), 1), {big})).expand(v.shape());
  Tensor p = Tensor::stack(std::vector<Tensor>{v, idx});
  // blocks of up to 2^kRankSortLog2 sorted by rank, then bitonic merges: before the merge of each
  // block of 2^s, its (ascending) second half is reversed, so the block is bitonic; half-cleaners
  // at distances 2^(s-1) .. 1 then sort it ascending
  int first = std::min(k, kRankSortLog2);
  if (first > 0) p = rank_sort_blocks(p, int64_t{1} << first);
  for (int s = first + 1; s <= k; s++) {
    p = reverse_second_halves(p, int64_t{1} << s);
    for (int64_t d = int64_t{1} << (s - 1); d >= 1; d /= 2) p = compare_exchange(p, d);
  }
  Tensor net_values = slice(slice(p, 0, 0, 1), -1, 0, n).squeeze(0);
  Tensor indices = slice(slice(p, 0, 1, 2), -1, 0, n).squeeze(0).cast(dtypes::int32);
  if (descending) {
    net_values = net_values.flip({-1});
    indices = indices.flip({-1}).sub(ConstValue(static_cast<long long>(n - 1)), true);
  }
  Tensor values = net_values.cast(dtype());
  if (dtypes::is_float(dtype())) {
    // float values are gathered from the input with a one-hot select-and-sum (fused, O(n^2) per
    // line), so that gradients flow back to the input in one step rather than through the
    // network (whose backward would re-read every earlier step)
    Tensor pos = detail::binary_iota(n, dtypes::int32);
    Tensor onehot = indices.unsqueeze(-1).eq(pos.reshape(split_last(Shape(x.ndim(), 1), {n})));
    values = onehot.where(xt.unsqueeze(-2), ConstValue(0.0)).sum(-1).cast(dtype());
  }
  return {values.transpose(a, -1), indices.transpose(a, -1)};
}

Tensor Tensor::argsort(int dim, bool descending) const { return sort(dim, descending).second; }

std::pair<Tensor, Tensor> Tensor::topk(int64_t k, int dim, bool largest, bool sorted) const {
  (void)sorted;  // always sorted, which also satisfies sorted=false
  int a = resolve_dim("topk", *this, dim);
  int64_t n = ndim() == 0 ? 1 : shape()[a];
  if (k < 0 || k > n)
    fail("Tensor.topk: k=%d is out of range [0, %d] for dim %d of shape %s", k, n, dim,
         fmt_shape(shape()));
  auto [values, indices] = sort(dim, largest);
  if (ndim() == 0) return {values, indices};
  return {slice(values, a, 0, k), slice(indices, a, 0, k)};
}

}  // namespace tc
