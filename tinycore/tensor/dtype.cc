// dtypes: the cast shortcuts, Autocast (narrow operands for the products) and bitcast, which
// between sizes joins or splits unsigned integers with shifts and ors, little-endian as tinygrad.
#include <optional>
#include <vector>

#include "tinycore/tensor.h"
#include "tinycore/tensor/internal.h"

namespace tc {

using detail::shl;
using detail::shr;

namespace {

DType uint_of_size(int bytes) {
  switch (bytes) {
    case 1:
      return dtypes::uint8;
    case 2:
      return dtypes::uint16;
    case 4:
      return dtypes::uint32;
    default:
      return dtypes::uint64;
  }
}

bool storable(DType d) {
  return d.count == 1 && !d.ptr && d.scalar != Scalar::Void && d.scalar != Scalar::Index;
}

}  // namespace

Tensor Tensor::float_() const { return cast(dtypes::float32); }
Tensor Tensor::double_() const { return cast(dtypes::float64); }
Tensor Tensor::half() const { return cast(dtypes::float16); }
Tensor Tensor::bfloat16() const { return cast(dtypes::bfloat16); }
Tensor Tensor::int_() const { return cast(dtypes::int32); }
Tensor Tensor::long_() const { return cast(dtypes::int64); }
Tensor Tensor::short_() const { return cast(dtypes::int16); }
Tensor Tensor::char_() const { return cast(dtypes::int8); }
Tensor Tensor::byte() const { return cast(dtypes::uint8); }
Tensor Tensor::bool_() const { return cast(dtypes::bool_); }

namespace {
thread_local std::optional<DType> autocast_to;
}  // namespace

std::optional<DType> Tensor::autocast_dtype() { return autocast_to; }

Tensor::Autocast::Autocast(std::optional<DType> dtype) : prev_(autocast_to) {
  if (dtype && *dtype != dtypes::float16 && *dtype != dtypes::bfloat16)
    fail("Tensor.Autocast: autocast to float16 or bfloat16, not %s", dtype->name());
  autocast_to = dtype;
}
Tensor::Autocast::~Autocast() { autocast_to = prev_; }

Tensor Tensor::autocast() const {
  if (!autocast_to || !dtypes::is_float(dtype()) || dtype().itemsize() <= autocast_to->itemsize())
    return *this;
  return cast(*autocast_to);
}

Tensor Tensor::bitcast(DType dt) const {
  if (!storable(dt)) fail("Tensor.bitcast: %s is not a tensor dtype", dt.name());
  if (dt == dtype()) return *this;
  if (dtypes::is_bool(dt))
    fail("Tensor.bitcast: cannot bitcast %s to bool (only 0 and 1 are bools; use cast)",
         dtype().name());
  if (dtypes::is_bool(dtype())) return cast(dtypes::uint8).bitcast(dt);  // bools are bytes 0/1
  int ns = dt.itemsize(), os = dtype().itemsize();
  if (ns == os) return apply(Ops::BITCAST, dt);
  if (ndim() == 0 || (shape().back() * os) % ns != 0)
    fail(
        "Tensor.bitcast: cannot bitcast %s of shape %s to %s: the last dimension's bytes (%d) "
        "are not a multiple of %d",
        dtype().name(), fmt_shape(shape()), dt.name(), ndim() ? shape().back() * os : 0, ns);
  DType new_uint = uint_of_size(ns), old_uint = uint_of_size(os);
  Tensor tmp = bitcast(old_uint);
  if (ns > os) {  // little-endian: element i of a group is the i-th lowest part
    int rate = ns / os;
    Shape s = shape();
    s.back() /= rate;
    s.push_back(rate);
    tmp = tmp.reshape(s);
    std::vector<std::pair<int64_t, int64_t>> keep;
    for (size_t i = 0; i + 1 < s.size(); i++) keep.push_back({0, s[i]});
    std::optional<Tensor> acc;
    for (int i = 0; i < rate; i++) {
      keep.push_back({i, i + 1});
      Tensor part = shl(tmp.shrink(keep).cast(new_uint), 8 * i * os);
      keep.pop_back();
      acc = acc ? acc->bitwise_or(part) : part;
    }
    return acc->squeeze(-1).bitcast(dt);
  }
  std::vector<Tensor> parts;
  for (int i = 0; i < os / ns; i++) parts.push_back(shr(tmp, 8 * i * ns).cast(new_uint));
  return Tensor::stack(parts, -1).flatten(-2).bitcast(dt);
}

}  // namespace tc
