// Tensor::interpolate: each resized dimension reads one source position (nearest) or lerps two
// (linear) along an arange, gathered with one-hot masks: composed from Tensor ops.
#include <string>

#include "tinycore/tensor.h"

namespace tc {
namespace {

// x where the index (along the last axis) equals `index`: gathers x (..., n) at `index` (m,)
// into (..., m), as a masked sum (so inf and NaN elsewhere do not leak in), in x's dtype.
Tensor gather_last(const Tensor& x, const Tensor& index) {
  int64_t n = x.shape().back(), m = index.shape()[0];
  Tensor onehot = index.reshape({m, 1}).eq(
      Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32).reshape({1, n}));
  Tensor picked = onehot.where(x.unsqueeze(-2), Tensor::zeros({}, x.dtype()));
  return picked.sum(-1).cast(x.dtype());
}

}  // namespace

Tensor Tensor::interpolate(Shape size, const std::string& mode, bool align_corners) const {
  const char* op = "interpolate";
  if (size.empty() || static_cast<int>(size.size()) > ndim())
    fail("Tensor.%s: size %s must have between 1 and %d entries for shape %s", op, fmt_shape(size),
         ndim(), fmt_shape(shape()));
  for (int64_t s : size)
    if (s <= 0) fail("Tensor.%s: size %s must be positive", op, fmt_shape(size));
  bool linear = mode == "linear" || (mode == "bilinear" && size.size() == 2) ||
                (mode == "trilinear" && size.size() == 3);
  if (!linear && mode != "nearest" && mode != "nearest-exact")
    fail(
        "Tensor.%s: mode '%s' is not supported for size %s (use linear, nearest or "
        "nearest-exact; bilinear needs 2 sizes, trilinear 3)",
        op, mode, fmt_shape(size));
  if (align_corners && !linear)
    fail("Tensor.%s: align_corners can only be set with a linear mode, got '%s'", op, mode);
  Tensor x = *this;
  int nd = ndim();
  for (int i = nd - 1; i >= nd - static_cast<int>(size.size()); i--) {
    int64_t in = shape()[i], out = size[i - (nd - static_cast<int>(size.size()))];
    double ac = align_corners ? 1.0 : 0.0;
    double scale =
        out - ac == 0 ? 0.0 : (static_cast<double>(in) - ac) / (static_cast<double>(out) - ac);
    Tensor arr = arange(0, static_cast<double>(out), 1, dtypes::float32);
    Tensor xt = x.transpose(i, -1);
    Tensor res = xt;
    if (linear) {
      // integers are interpolated in float (a lerp in uint8 would wrap), then cast back
      xt = xt.cast(least_upper_float(xt.dtype()));
      Tensor index = align_corners
                         ? arr.mul(ConstValue(scale))
                         : arr.add(ConstValue(0.5)).mul(ConstValue(scale)).sub(ConstValue(0.5));
      index = index.clip(ConstValue(0), ConstValue(static_cast<double>(in - 1)));
      Tensor low = index.floor(), high = index.ceil();
      Tensor perc = index.sub(low);
      res = gather_last(xt, low.cast(dtypes::int32))
                .lerp(gather_last(xt, high.cast(dtypes::int32)), perc);
    } else {
      Tensor index = mode == "nearest-exact" ? arr.add(ConstValue(0.5)).mul(ConstValue(scale))
                                             : arr.mul(ConstValue(scale));
      index = index.cast(dtypes::int32).minimum(ConstValue(static_cast<long long>(in - 1)));
      res = gather_last(xt, index);
    }
    x = res.transpose(i, -1);
  }
  return x.cast(dtype());
}

}  // namespace tc
