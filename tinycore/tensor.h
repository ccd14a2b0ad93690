// The lazy Tensor: a handle to a UOp. Creating and combining tensors only builds the graph;
// realize(), data(), item() and tolist() run the pipeline. Names and semantics follow the
// seeds' tinygrad Tensor (broadcasting, dtype promotion, negative axes, keepdim).
#pragma once

#include <cstdint>
#include <functional>
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

// Option structs of the Tensor methods (keyword arguments in tinygrad), one section per family.
// ---- options: random (tensor_random.cc, tensor_sort.cc) ----
// ---- end options: random ----
// ---- options: indexing (tensor_index.cc) ----
// ---- end options: indexing ----
// ---- options: processing (tensor_conv.cc, tensor_einsum.cc) ----
// ---- end options: processing ----
// ---- options: nn (tensor_nn.cc, tensor_dtype.cc) ----
// ---- end options: nn ----

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
  // Replaces this tensor's value (every copy of the handle) by `x`, lazily, as tinygrad's assign:
  // same shape and device; x is cast to this dtype. Graphs built before keep the old value.
  Tensor& assign(const Tensor& x);

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
  // Size-1 dimensions removed: `dim` only (a no-op when it is not 1), or (default) all of them.
  Tensor squeeze(std::optional<int> dim = {}) const;
  Tensor unsqueeze(int dim) const;  // dim in [-ndim-1, ndim]
  // tinygrad's .T (transpose(): swaps dims 0 and 1); 0-d and 1-d tensors are returned as is.
  // Named t() because a member named T would hide the template parameters named T.
  Tensor t() const;
  Tensor T() const { return t(); }  // tinygrad's .T
  Tensor view(Shape shape) const;   // an alias of reshape
  // Dimension `dim` split into `sizes` (one of them may be -1); flatten(dim, dim+n-1) undoes it.
  Tensor unflatten(int dim, Shape sizes) const;
  // Concatenation along `dim` (pad + add, as tinygrad): all shapes equal except along `dim`,
  // dtypes promote. Tensor::cat(tensors, dim) for a vector; a.cat({b, c}, dim) is [a, b, c].
  // (Tensor::cat({a, b}) does not compile: pass a std::vector, or call a.cat({b}).)
  static Tensor cat(const std::vector<Tensor>& tensors, int dim = 0);
  Tensor cat(std::initializer_list<Tensor> others, int dim = 0) const;
  // Stacking along a new dimension `dim` (in [-ndim-1, ndim]); all shapes must be equal.
  static Tensor stack(const std::vector<Tensor>& tensors, int dim = 0);
  Tensor stack(std::initializer_list<Tensor> others, int dim = 0) const;
  // Tiled `repeats[i]` times along each dimension; extra leading repeats add dimensions.
  Tensor repeat(std::vector<int64_t> repeats) const;
  // Pieces of `size` along `dim` (the last one may be smaller), or of the given sizes.
  std::vector<Tensor> split(int64_t size, int dim = 0) const;
  std::vector<Tensor> split(std::vector<int64_t> sizes, int dim = 0) const;
  // At most `chunks` pieces of ceil(n / chunks) along `dim` (fewer when they run out).
  std::vector<Tensor> chunk(int64_t chunks, int dim = 0) const;
  // Circular shift by shifts[i] along dims[i] (elements leaving one end come back at the other).
  Tensor roll(std::vector<int64_t> shifts, std::vector<int> dims) const;
  Tensor roll(int64_t shift, int dim) const;
  // pad with a mode: "constant" (fill with `value`), "reflect" (mirror without the edge),
  // "replicate" (repeat the edge) or "circular" (wrap around, at most once). Negative entries
  // remove elements, except in "circular" mode.
  Tensor pad(std::vector<std::pair<int64_t, int64_t>> padding, const std::string& mode,
             ConstValue value = 0.0) const;
  template <size_t N>  // a string literal mode (a plain const char* would also match pad(p, 0))
  Tensor pad(std::vector<std::pair<int64_t, int64_t>> padding, const char (&mode)[N],
             ConstValue value = 0.0) const {
    return pad(std::move(padding), std::string(mode), value);
  }
  // Zero-padded at the end of each dimension up to `shape` (-1 keeps a dimension).
  Tensor pad_to(Shape shape) const;
  // Coordinate grids from 0-d or 1-d tensors; indexing "ij" (matrix) or "xy" (Cartesian).
  static std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors,
                                      const std::string& indexing = "ij");
  // The upper / lower triangle of the last two dimensions (others set to 0); `diagonal` > 0
  // moves the boundary above the main diagonal, < 0 below it.
  Tensor triu(int64_t diagonal = 0) const;
  Tensor tril(int64_t diagonal = 0) const;
  // `steps` evenly spaced values from start to stop inclusive (computed in float32, then cast).
  static Tensor linspace(double start, double stop, int64_t steps,
                         DType dtype = dtypes::default_float);
  // Tensors of t's shape, and its dtype unless one is given.
  static Tensor zeros_like(const Tensor& t, std::optional<DType> dtype = {});
  static Tensor ones_like(const Tensor& t, std::optional<DType> dtype = {});
  static Tensor full_like(const Tensor& t, ConstValue value, std::optional<DType> dtype = {});
  static Tensor empty_like(const Tensor& t, std::optional<DType> dtype = {});
  // ---- end movement ----

  // ---- reductions, scans, activations and more elementwise (tensor_reduce.cc) ----
  // Reductions. mean of an integer tensor is float32; var/std divide by max(0, n - correction).
  Tensor mean(Axes axis = {}, bool keepdim = false) const;
  Tensor var(Axes axis = {}, bool keepdim = false, double correction = 1) const;
  Tensor std(Axes axis = {}, bool keepdim = false, double correction = 1) const;
  std::pair<Tensor, Tensor> var_mean(Axes axis = {}, bool keepdim = false,
                                     double correction = 1) const;  // (var, mean)
  std::pair<Tensor, Tensor> std_mean(Axes axis = {}, bool keepdim = false,
                                     double correction = 1) const;  // (std, mean)
  Tensor any(Axes axis = {}, bool keepdim = false) const;           // bool
  Tensor all(Axes axis = {}, bool keepdim = false) const;           // bool
  Tensor softmax(int axis = -1, std::optional<DType> dtype = {}) const;
  Tensor log_softmax(int axis = -1, std::optional<DType> dtype = {}) const;
  Tensor logsumexp(Axes axis = {}, bool keepdim = false) const;
  // Index of the first maximum (minimum) as int32; no axis means of the flattened tensor (then
  // keepdim is ignored, as tinygrad).
  Tensor argmax(std::optional<int> axis = {}, bool keepdim = false) const;
  Tensor argmin(std::optional<int> axis = {}, bool keepdim = false) const;
  // Scans along one axis (same shape; cumsum takes sum's dtype, cummax keeps the dtype).
  Tensor cumsum(int axis = 0) const;
  Tensor cummax(int axis = 0) const;

  // Elementwise math (float results for integer inputs, except where noted).
  Tensor tan() const;
  Tensor tanh() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor sign() const;   // keeps the dtype; NaN stays NaN, +-inf gives +-1 (tinygrad: NaN)
  Tensor ceil() const;   // integers unchanged
  Tensor floor() const;  // integers unchanged
  Tensor round() const;  // half to even; integers unchanged
  Tensor isinf(bool detect_positive = true, bool detect_negative = true) const;  // bool
  Tensor isnan() const;                                                          // bool
  Tensor isfinite() const;                                                       // bool
  Tensor isclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08,
                 bool equal_nan = false) const;  // bool
  // At least one bound; NaN stays NaN.
  Tensor clamp(std::optional<ConstValue> min = {}, std::optional<ConstValue> max = {}) const;
  Tensor clip(std::optional<ConstValue> min = {}, std::optional<ConstValue> max = {}) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor lerp(const Tensor& end, ConstValue weight) const;
  Tensor copysign(const Tensor& other) const;  // the sign of a NaN `other` reads as +
  Tensor copysign(ConstValue other) const;
  // Float pow as exp2(e * log2|b|) with tinygrad's fixes: a negative base gives NaN for a
  // non-integer exponent and the sign of an odd one; 0 ** 0 is 1. An integer base needs a float
  // exponent (the result is rounded back to the base's dtype) or a non-negative integer constant
  // (exact, by repeated squaring).
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(ConstValue exponent, bool reverse = false) const;  // reverse: exponent ** this

  // Activations.
  Tensor gelu() const;  // tanh approximation
  Tensor quick_gelu() const;
  Tensor silu() const;
  Tensor swish() const;
  Tensor relu6() const;
  Tensor hardsigmoid(double alpha = 1.0 / 6, double beta = 0.5) const;
  Tensor hardswish() const;
  Tensor hardtanh(double min_val = -1, double max_val = 1) const;
  Tensor elu(double alpha = 1.0) const;
  Tensor celu(double alpha = 1.0) const;
  Tensor selu(double alpha = 1.67326, double gamma = 1.0507) const;
  Tensor leaky_relu(double neg_slope = 0.01) const;
  Tensor softplus(double beta = 1) const;
  Tensor softsign() const;
  Tensor mish() const;
  Tensor prod(Axes axis = {}, bool keepdim = false) const;  // keeps the dtype (ints wrap)
  // ---- end reductions ----

  // ---- products (tensor_matmul.cc) ----
  // Sum product over the last axis of this and the second-to-last of `w` (its only axis when
  // 1-D); leading axes broadcast as batch axes. `dtype` is the accumulation dtype.
  Tensor dot(const Tensor& w, std::optional<DType> dtype = {}) const;
  Tensor matmul(const Tensor& x, bool reverse = false, std::optional<DType> dtype = {}) const;
  // this @ weight + bias (elementwise product when weight is 1-D)
  Tensor linear(const Tensor& weight, const std::optional<Tensor>& bias = {}) const;
  Tensor sequential(const std::vector<std::function<Tensor(const Tensor&)>>& layers) const;
  // ---- end products ----

  // ---- random and sorting (tensor_random.cc, tensor_sort.cc) ----
  // ---- end random and sorting ----

  // ---- indexing (tensor_index.cc) ----
  // ---- end indexing ----

  // ---- processing: pools, convolutions, einsum, interpolate (tensor_conv.cc, tensor_einsum.cc)
  // ----
  // ---- end processing ----

  // ---- math: inverse trig, erf and friends (tensor_math.cc) ----
  // ---- end math ----

  // ---- nn ops, losses, dtype and misc (tensor_nn.cc, tensor_dtype.cc) ----
  // ---- end nn ----

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
