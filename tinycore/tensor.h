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
  double value;    // the value (exact for floats and for ints up to 2^53)
  int64_t ivalue;  // the exact value of a bool or int
  ConstValue(bool v) : kind(Kind::Bool), value(v), ivalue(v) {}
  ConstValue(int v) : kind(Kind::Int), value(v), ivalue(v) {}
  ConstValue(long v) : kind(Kind::Int), value(static_cast<double>(v)), ivalue(v) {}
  ConstValue(long long v) : kind(Kind::Int), value(static_cast<double>(v)), ivalue(v) {}
  ConstValue(float v) : kind(Kind::Float), value(v), ivalue(0) {}
  ConstValue(double v) : kind(Kind::Float), value(v), ivalue(0) {}
  DType dtype() const;               // the dtype of the scalar alone: bool, int32 or float32
  UOpRef to_uop(DType dtype) const;  // a CONST of `dtype`, exact for int values into int dtypes
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
  explicit Tensor(UOpRef uop) : impl_(std::make_shared<Impl>(std::move(uop))) {}
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
  Tensor div(const Tensor& x) const;   // true division: the result is float
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

  // autograd (tinygrad's requires_grad / grad / gradient / backward). Gradients are lazy graphs
  // built by rewriting this tensor's UOp graph (tinycore/gradient.h); realize them like any tensor.
  //
  // Marks this tensor (every copy of the handle) as a parameter that backward() fills .grad for.
  // The flag is not propagated to results of ops: only tensors marked here get a grad.
  Tensor& requires_grad_(bool requires_grad = true);
  bool requires_grad() const;
  // The accumulated gradient (shared: realize() on it is kept), or none before a backward().
  std::optional<Tensor> grad() const;
  void set_grad(std::optional<Tensor> grad);  // set_grad({}) clears it (zero_grad)
  // The same values, as a wall for gradients: nothing flows back through it.
  Tensor detach() const;
  // The gradients of this tensor with respect to `targets` (tinygrad's Tensor.gradient), given
  // the gradient flowing into it (default: 1, which needs a scalar). A target the tensor does not
  // depend on gets zeros of its shape (as tinygrad). This and every target must be float.
  std::vector<Tensor> gradient(const std::vector<Tensor>& targets,
                               std::optional<Tensor> gradient = {}) const;
  // Adds d(this)/d(t) to t.grad for every live float tensor t with requires_grad that this
  // tensor depends on (also when t was realized after this graph was built). Needs a scalar
  // unless `gradient` is given. Under a NoGrad guard it leaves every grad untouched. Call it
  // before realize() of this tensor: realize() replaces the graph by its result (as in tinygrad).
  Tensor& backward(std::optional<Tensor> gradient = {});
  // True while a NoGrad guard is alive on this thread.
  static bool no_grad();

  // ---- movement, indexing and creation helpers (tensor_movement.cc) ----
  // ---- end movement ----

  // ---- reductions, scans, activations and more elementwise (tensor_reduce.cc) ----
  // ---- end reductions ----

  // running the graph
  Tensor& realize();
  template <typename T>
  std::vector<T> data() const;
  template <typename T>
  std::vector<T> tolist() const {
    return data<T>();
  }
  template <typename T>
  T item() const;

 private:
  Tensor apply(Ops op, DType dtype, std::vector<Tensor> src = {}) const;
  Tensor binop(const char* name, Ops op, const Tensor& x) const;
  Tensor as_float() const;
  Tensor scalar_like(ConstValue x) const;
  Tensor reduce(const char* name, Ops op, const Axes& axis, bool keepdim) const;
  std::vector<int64_t> reduce_axes(const char* name, const Axes& axis) const;  // sorted, checked
  Tensor broadcast_to(const Shape& shape) const;
  int normalize_axis(const char* name, int axis) const;
  std::vector<uint8_t> bytes() const;  // the realized, contiguous contents

  friend void realize_all(const std::vector<Tensor>& tensors);
  struct Impl {
    explicit Impl(UOpRef u) : uop(std::move(u)) {}
    void set_uop(UOpRef u);  // realize(): the new uop, remembering the old graph (weakly)
    UOpRef uop;
    // The graphs this tensor held before realize() replaced them by their result; a loss built
    // from one of them (still alive while that loss is) depends on this tensor through it.
    std::vector<std::weak_ptr<const UOp>> before_realize;
    bool requires_grad = false;
    bool tracked = false;  // in the registry of tensors that may need a grad
    std::shared_ptr<Impl> grad;
  };
  explicit Tensor(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  static void track(const std::shared_ptr<Impl>& impl);
  static std::vector<std::shared_ptr<Impl>> tracked_with_grad();
  // The nodes whose gradient is this tensor's: its uop and its graphs from before realize(),
  // each with reshapes stripped (Tensor.reshape folds reshape(reshape(x)) into one RESHAPE of x,
  // so a reshaped tensor's own RESHAPE node need not be in a graph that uses it).
  std::vector<UOpRef> grad_nodes() const;
  // d(root)/d(target) for each target: the sum over its grad_nodes, zeros when none is reached.
  static std::vector<Tensor> gradient_of(const UOpRef& root, const UOpRef& root_grad,
                                         const std::vector<Tensor>& targets);
  std::shared_ptr<Impl> impl_;
};

// While alive, backward() on this thread fills no grads (tinygrad's Tensor.no_grad, e.g. for
// evaluation inside a training loop). Guards nest; each restores the previous state.
class NoGrad {
 public:
  NoGrad();
  ~NoGrad();
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  bool prev_;
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
