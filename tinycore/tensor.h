// The lazy Tensor: a handle to a UOp. Creating and combining tensors only builds the graph;
// realize(), data(), item() and tolist() run the pipeline. Names and semantics follow the
// seeds' tinygrad Tensor (broadcasting, dtype promotion, negative axes, keepdim).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tinycore/dtype.h"
#include "tinycore/error.h"
#include "tinycore/helpers.h"
#include "tinycore/uop/uop.h"

namespace tc {

// A Python-like scalar operand: keeps whether it was written as a bool, an int or a float,
// because that decides the result dtype (x_int + 1 stays int, x_int + 1.5 becomes float).
struct ConstValue {
  enum class Kind { Bool, Int, Float } kind;
  double value;
  ConstValue(bool v) : kind(Kind::Bool), value(v) {}
  ConstValue(int v) : kind(Kind::Int), value(v) {}
  ConstValue(long v) : kind(Kind::Int), value(static_cast<double>(v)) {}
  ConstValue(long long v) : kind(Kind::Int), value(static_cast<double>(v)) {}
  ConstValue(float v) : kind(Kind::Float), value(v) {}
  ConstValue(double v) : kind(Kind::Float), value(v) {}
  DType dtype() const;  // the dtype of the scalar alone: bool, int32 or float32
};

// Reduction axes: one axis, a list, or (default) all of them.
struct Axes {
  std::optional<std::vector<int>> axes;
  Axes() = default;
  Axes(int a) : axes(std::vector<int>{a}) {}
  Axes(std::initializer_list<int> l) : axes(std::vector<int>(l)) {}
  Axes(std::vector<int> v) : axes(std::move(v)) {}
};

template <typename T>
DType dtype_of();

class Tensor {
 public:
  // A Tensor is a handle: copies share one tensor (its graph, and later its grad), like Python
  // references, so realize() on any copy is seen by all.
  explicit Tensor(UOpRef uop) : impl_(std::make_shared<Impl>(Impl{std::move(uop)})) {}
  // Host data (copied); no shape means 1-D, Shape{} means a scalar.
  Tensor(const std::vector<float>& data, std::optional<Shape> shape = {});

  template <typename T>
  static Tensor from_vector(const std::vector<T>& data, std::optional<Shape> shape = {});
  static Tensor from_blob(const void* data, Shape shape, DType dtype);  // copies

  // creation
  static Tensor empty(Shape shape, DType dtype = dtypes::default_float);
  static Tensor full(Shape shape, ConstValue value, std::optional<DType> dtype = {});
  static Tensor zeros(Shape shape, DType dtype = dtypes::default_float);
  static Tensor ones(Shape shape, DType dtype = dtypes::default_float);
  static Tensor arange(double stop);
  static Tensor arange(double start, double stop, double step = 1, std::optional<DType> dtype = {});
  static Tensor eye(int64_t n, std::optional<int64_t> m = {}, DType dtype = dtypes::default_float);

  const UOpRef& uop() const { return impl_->uop; }
  const Shape& shape() const { return uop()->shape(); }
  DType dtype() const { return uop()->dtype; }
  int ndim() const { return static_cast<int>(shape().size()); }
  int64_t numel() const;
  std::string device() const;

  // unary
  Tensor neg() const;
  Tensor logical_not() const;
  Tensor reciprocal() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor exp() const;
  Tensor exp2() const;
  Tensor log() const;
  Tensor log2() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor trunc() const;
  Tensor relu() const;
  Tensor abs() const;
  Tensor sigmoid() const;
  Tensor square() const;
  Tensor cast(DType dtype) const;

  // binary, with broadcasting and promotion; `reverse` swaps the operands (x - t as t.sub(x, true))
  Tensor add(const Tensor& x) const;
  Tensor sub(const Tensor& x) const;
  Tensor mul(const Tensor& x) const;
  Tensor div(const Tensor& x) const;  // true division: the result is float
  Tensor idiv(const Tensor& x) const;  // integer division, truncating toward zero
  Tensor mod(const Tensor& x) const;   // Python's %: the result has the divisor's sign
  Tensor maximum(const Tensor& x) const;
  Tensor minimum(const Tensor& x) const;
  Tensor lt(const Tensor& x) const;
  Tensor gt(const Tensor& x) const;
  Tensor le(const Tensor& x) const;
  Tensor ge(const Tensor& x) const;
  Tensor eq(const Tensor& x) const;
  Tensor ne(const Tensor& x) const;
  Tensor bitwise_and(const Tensor& x) const;
  Tensor bitwise_or(const Tensor& x) const;
  Tensor bitwise_xor(const Tensor& x) const;
  Tensor add(ConstValue x, bool reverse = false) const;
  Tensor sub(ConstValue x, bool reverse = false) const;
  Tensor mul(ConstValue x, bool reverse = false) const;
  Tensor div(ConstValue x, bool reverse = false) const;
  Tensor maximum(ConstValue x) const;
  Tensor minimum(ConstValue x) const;
  Tensor lt(ConstValue x) const;
  Tensor gt(ConstValue x) const;
  Tensor le(ConstValue x) const;
  Tensor ge(ConstValue x) const;
  Tensor eq(ConstValue x) const;
  Tensor ne(ConstValue x) const;
  // ternary: this is the condition
  Tensor where(const Tensor& x, const Tensor& y) const;
  Tensor where(ConstValue x, const Tensor& y) const;
  Tensor where(const Tensor& x, ConstValue y) const;
  Tensor where(ConstValue x, ConstValue y) const;

  // movement: views, never copies
  Tensor reshape(Shape shape) const;  // one dimension may be -1
  Tensor permute(std::vector<int> order) const;
  Tensor expand(Shape shape) const;  // -1 keeps a dimension; new leading dimensions allowed
  Tensor pad(std::vector<std::pair<int64_t, int64_t>> padding, ConstValue value = 0.0) const;
  Tensor shrink(std::vector<std::pair<int64_t, int64_t>> ranges) const;
  Tensor flip(std::vector<int> axes) const;
  Tensor transpose(int dim0 = 1, int dim1 = 0) const;
  Tensor flatten(int start_dim = 0, int end_dim = -1) const;
  Tensor contiguous() const;

  // reductions
  Tensor sum(Axes axis = {}, bool keepdim = false) const;
  Tensor max(Axes axis = {}, bool keepdim = false) const;
  Tensor min(Axes axis = {}, bool keepdim = false) const;

  // running the graph
  Tensor& realize();
  template <typename T>
  std::vector<T> data() const;
  template <typename T>
  std::vector<T> tolist() const { return data<T>(); }
  template <typename T>
  T item() const;

 private:
  Tensor apply(Ops op, DType dtype, std::vector<Tensor> src = {}) const;
  Tensor binop(const char* name, Ops op, const Tensor& x) const;
  Tensor as_float() const;
  Tensor scalar_like(ConstValue x) const;
  Tensor reduce(const char* name, Ops op, const Axes& axis, bool keepdim) const;
  Tensor broadcast_to(const Shape& shape) const;
  int normalize_axis(const char* name, int axis) const;
  std::vector<uint8_t> bytes() const;  // the realized, contiguous contents

  friend void realize_all(const std::vector<Tensor>& tensors);
  struct Impl {
    UOpRef uop;
  };
  std::shared_ptr<Impl> impl_;
};

// Shape every operand broadcasts to; throws naming the operation and the shapes.
Shape broadcast_shape(const char* op, const std::vector<Shape>& shapes);

// Realizes several tensors in one schedule.
void realize_all(const std::vector<Tensor>& tensors);

inline Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
inline Tensor operator-(const Tensor& a) { return a.neg(); }
inline Tensor operator+(const Tensor& a, ConstValue b) { return a.add(b); }
inline Tensor operator-(const Tensor& a, ConstValue b) { return a.sub(b); }
inline Tensor operator*(const Tensor& a, ConstValue b) { return a.mul(b); }
inline Tensor operator/(const Tensor& a, ConstValue b) { return a.div(b); }
inline Tensor operator+(ConstValue a, const Tensor& b) { return b.add(a, true); }
inline Tensor operator-(ConstValue a, const Tensor& b) { return b.sub(a, true); }
inline Tensor operator*(ConstValue a, const Tensor& b) { return b.mul(a, true); }
inline Tensor operator/(ConstValue a, const Tensor& b) { return b.div(a, true); }

}  // namespace tc

#include "tinycore/tensor_data.h"
