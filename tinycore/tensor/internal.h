// Helpers that several of the Tensor method files use, each defined once: inline here, or in the
// file named beside it. Internal to tinycore/tensor/*.cc, not part of the Tensor API.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "tinycore/tensor.h"

namespace tc::detail {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;  // (begin, end) or (before, after) per axis

// ---- bits

// x * 2^bits and x / 2^bits on an unsigned tensor (tinygrad's lshift / rshift of unsigned ints).
inline Tensor shl(const Tensor& x, int bits) {
  if (bits == 0) return x;
  return x.mul(ConstValue(static_cast<long long>(int64_t{1} << bits)));
}
inline Tensor shr(const Tensor& x, int bits) {
  if (bits == 0) return x;
  return x.idiv(
      Tensor::full({}, ConstValue(static_cast<long long>(int64_t{1} << bits)), x.dtype()));
}

// ---- reductions, scans and sorting

// The order-reversing map of min/argmin: -x for floats, ~x for integers, not for bool.
inline Tensor inverse(const Tensor& t) {
  if (dtypes::is_float(t.dtype())) return t.neg();
  if (dtypes::is_bool(t.dtype())) return t.logical_not();
  return t.bitwise_xor(Tensor::full({}, ConstValue(-1), t.dtype()));
}

// The smallest value of `d` (the identity of max), as a constant: what max pooling pads with (-inf
// for floats, as tinygrad).
inline ConstValue lowest(DType d) {
  if (dtypes::is_bool(d)) return ConstValue(false);
  if (dtypes::is_float(d)) return ConstValue(-std::numeric_limits<double>::infinity());
  if (dtypes::is_unsigned(d)) return ConstValue(0);
  return ConstValue(static_cast<long long>(dtypes::min(d)));
}

// shape with its last dimension split into `tail`
inline Shape split_last(const Shape& s, std::initializer_list<int64_t> tail) {
  Shape out(s.begin(), s.end() - 1);
  out.insert(out.end(), tail);
  return out;
}

// 0 .. n-1 of `dtype` (n >= 1) as one fused elementwise kernel (random.cc).
Tensor binary_iota(int64_t n, DType dtype);

// ---- movement

// Which dims resolve_dim accepts, n being the tensor's ndim.
enum class Dims {
  kAny,       // tinygrad's: [-max(1, n), max(1, n) - 1], so a 0-d tensor's dim 0 or -1 (as 0)
  kNew,       // [-(n + 1), n]: where a new dimension goes (unsqueeze, stack)
  kExisting,  // [-n, n - 1]: a dimension the op reads (a 0-d tensor has none)
};

// The one check of a dim argument (tinygrad's _resolve_dim): `dim`, negative counting from the
// end, as an index in [0, n); out of range, an error naming the op, the dim, the valid range and
// the shape (an IndexError in Python).
inline int resolve_dim(const char* op, const Tensor& t, int dim, Dims dims = Dims::kAny) {
  int n = t.ndim() + (dims == Dims::kNew ? 1 : 0);
  int hi = dims == Dims::kExisting ? n : std::max(1, n);
  if (hi == 0)
    fail("Tensor.%s: dim %d is out of range for a tensor of shape () (it has no dimensions)", op,
         dim);
  if (dim < -hi || dim > hi - 1)
    fail("Tensor.%s: dim %d is out of range [%d, %d] for a tensor of shape %s", op, dim, -hi,
         hi - 1, fmt_shape(t.shape()));
  return dim < 0 ? dim + hi : dim;
}

// Full ranges everywhere except (b, e) along `dim`.
inline Pairs range_on(const Tensor& t, int dim, int64_t b, int64_t e) {
  Pairs r;
  for (int i = 0; i < t.ndim(); i++)
    r.push_back(i == dim ? std::make_pair(b, e) : std::make_pair(int64_t{0}, t.shape()[i]));
  return r;
}

// Zeros everywhere except (b, a) along `dim`.
inline Pairs pad_on(const Tensor& t, int dim, int64_t b, int64_t a) {
  Pairs p(t.ndim(), {0, 0});
  p[dim] = {b, a};
  return p;
}

// The shapes of `ts` for an error message: "(2, 3), (4,)".
inline std::string fmt_shapes(const std::vector<Tensor>& ts) {
  std::vector<std::string> parts;
  for (const Tensor& t : ts) parts.push_back(fmt_shape(t.shape()));
  return absl::StrJoin(parts, ", ");
}

// ---- windows, of the pools and the convolutions

// "(1, 2)" for an error message.

inline std::string fmt_ints(const std::vector<int64_t>& v) {
  return "(" + absl::StrJoin(v, ", ") + ")";
}

// tinygrad's make_tuple and _resolve_pool_pads (pool.cc): per spatial dimension.
std::vector<int64_t> make_tuple(const char* op, const char* what, const IntTuple& t, size_t n);
Pairs resolve_pads(const char* op, const IntTuple& padding, size_t n);

// The padding of all dimensions of `t`: none on the leading ones, `pads` on the last ones.
inline Pairs full_pads(const Tensor& t, const Pairs& pads) {
  Pairs out(t.ndim() - pads.size(), {0, 0});
  out.insert(out.end(), pads.begin(), pads.end());
  return out;
}

// tinygrad's _pool (pool.cc): windows of the last k.size() dimensions as a view.
Tensor pool_view(const char* op, const Tensor& x, const std::vector<int64_t>& k_,
                 const std::vector<int64_t>& s_, const std::vector<int64_t>& d_);

// Strided views and their inverse (pool.cc), for gradients of strided windows:
// every `step`-th element along `axis` from `start` on;
Tensor every(const Tensor& t, int axis, int64_t start, int64_t step);
// t's last n axes spread `stride` apart: shape (..., len0, stride0, len1, stride1, ...), element
// i at position `slot` of block i, zeros elsewhere. Tensors spread into each slot, added, then
// unspread (the pairs of axes joined, cut to `keep`) interleave.
Tensor spread(const Tensor& t, const std::vector<int64_t>& stride,
              const std::vector<int64_t>& slot);
Tensor unspread(const Tensor& t, const Pairs& keep);
// The next index of a grid of `extent`, the last axis fastest; false after the last one.
bool next_index(std::vector<int64_t>& index, const std::vector<int64_t>& extent);

}  // namespace tc::detail
