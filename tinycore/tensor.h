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
#include "tinycore/tensor/options.h"
#include "tinycore/uop/uop.h"

namespace tc {

class Tensor {
 public:
  // A Tensor is a handle: copies share one tensor (its graph, and later its grad), like Python
  // references, so realize() on any copy is seen by all.
  explicit Tensor(UOpRef uop) : impl_(std::make_shared<Impl>(std::move(uop))) {}
  // Host data (copied); no shape means 1-D, Shape{} means a scalar.
  Tensor(const std::vector<float>& data, std::optional<Shape> shape = {});

  template <typename T>
  static Tensor from_vector(const std::vector<T>& data, std::optional<Shape> shape = {});
  // Copies `data` into a new buffer on `device` (default: the default device). Given an `owner`
  // that keeps `data` alive (and writable: an in-place write lands there), the tensor reads it in
  // place where it can, on a device of host memory when `data` is aligned to
  // runtime::kBufferAlignment: a mapped file's weights then cost no copy.
  static Tensor from_blob(const void* data, Shape shape, DType dtype,
                          const std::string& device = "",
                          std::shared_ptr<const void> owner = nullptr);

  // creation
  // A new buffer on `device` (default: the default device), its contents unset.
  static Tensor empty(Shape shape, DType dtype = dtypes::default_float,
                      const std::string& device = "");
  static Tensor full(Shape shape, ConstValue value, std::optional<DType> dtype = {});
  static Tensor zeros(Shape shape, DType dtype = dtypes::default_float);
  static Tensor ones(Shape shape, DType dtype = dtypes::default_float);
  static Tensor arange(double stop);
  static Tensor arange(double start, double stop, double step = 1, std::optional<DType> dtype = {});
  static Tensor eye(int64_t n, std::optional<int64_t> m = {}, DType dtype = dtypes::default_float);

  const UOpRef& uop() const { return impl_->uop; }
  // Whether `other` is a copy of this handle (Python's `is`): different tensors may hold the same
  // UOp (equal graphs are interned, e.g. two layers' ones-initialised weights) until assigned.
  bool is_same_tensor(const Tensor& other) const { return impl_ == other.impl_; }
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
  // tinycore's: acc + the products of this int32 tensor's bytes (unsigned) with x's (signed), four
  // to each element (Ops::DOT4: x86's vpdpbusd). A quantized matvec's inner step (nn/q4_weight.h).
  Tensor dot4(const Tensor& x, const Tensor& acc) const;

  // movement: views, never copies
  Tensor reshape(Shape shape) const;  // one dimension may be -1
  Tensor permute(std::vector<int> order) const;
  Tensor expand(Shape shape) const;  // -1 keeps a dimension; new leading dimensions allowed
  Tensor pad(std::vector<std::pair<int64_t, int64_t>> padding, ConstValue value = 0.0) const;
  Tensor shrink(std::vector<std::pair<int64_t, int64_t>> ranges) const;
  // The `length` elements along `dim` from a position known only when the graph runs: `start` is
  // a 0-d integer tensor (Variable::tensor() plus an offset), tinygrad's shrink with Variable
  // bounds. A view as shrink's: a write through it lands in this tensor. Past the end reads 0.
  Tensor shrink_from(int dim, const Tensor& start, int64_t length) const;
  Tensor flip(std::vector<int> axes) const;
  Tensor transpose(int dim0 = 1, int dim1 = 0) const;
  Tensor flatten(int start_dim = 0, int end_dim = -1) const;
  Tensor contiguous() const;
  // Replaces this tensor's value (every copy of the handle) by `x`, as tinygrad's assign: same
  // shape and device; x is cast to this dtype. Lazy: graphs built before read the old value if
  // they run first (or are realized together with it). When this tensor was realized, realize()
  // writes the new value into a buffer of its own: from the second assign on (the first moves it
  // off a buffer it may share), the same buffer in place, so whatever holds that buffer (a
  // TinyJit capture) sees the update. On a view (movements, detach) of a tensor that holds a
  // buffer, the write lands in that tensor; every live view of a tensor follows its assigns.
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
  // tinygrad's requires_grad=None ("maybe"): backward() fills .grad for this tensor too when the
  // loss depends on it, without making it a parameter (no buffer of its own).
  Tensor& requires_grad_maybe_();
  // The state every new tensor starts in: false in C++ (as torch), maybe under the Python module
  // (as tinygrad, whose backward fills a grad for every live tensor the loss uses).
  static void set_default_requires_grad(std::optional<bool> requires_grad);
  std::optional<bool> requires_grad_state() const;  // nullopt: maybe
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

  // ---- movement, indexing and creation helpers (tensor/movement.cc, tensor/join.cc,
  // tensor/creation.cc) ----
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
  // remove elements: after reflecting or replicating, before wrapping around (as torch).
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
  // The n x n matrix with this 1-D tensor (n,) on its main diagonal and zeros elsewhere.
  Tensor diag() const;
  // The diagonal of dims dim1 and dim2 as a view: those dims are removed and the diagonal
  // becomes a new last dim. offset > 0 takes a diagonal above the main one, < 0 one below.
  Tensor diagonal(int64_t offset = 0, int dim1 = 0, int dim2 = 1) const;
  // Windows of `size` starting every `step` elements along `dim` (a view): dim becomes the
  // (shape[dim] - size) / step + 1 windows and a new last dim of `size` holds each one.
  Tensor unfold(int dim, int64_t size, int64_t step) const;
  // `steps` evenly spaced values from start to stop inclusive (computed in float32, then cast).
  static Tensor linspace(double start, double stop, int64_t steps,
                         DType dtype = dtypes::default_float);
  // Tensors of t's shape, and its dtype unless one is given.
  static Tensor zeros_like(const Tensor& t, std::optional<DType> dtype = {});
  static Tensor ones_like(const Tensor& t, std::optional<DType> dtype = {});
  static Tensor full_like(const Tensor& t, ConstValue value, std::optional<DType> dtype = {});
  static Tensor empty_like(const Tensor& t, std::optional<DType> dtype = {});
  // ---- end movement ----

  // ---- reductions, scans, activations and more elementwise (tensor/reduce.cc, tensor/scan.cc,
  // tensor/nn.cc, tensor/math.cc, tensor/activation.cc) ----
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
  // The running minimum along `axis` and, as int32, where it was taken: the last position so far
  // holding that value (torch's choice among ties); a NaN is the minimum from where it appears.
  std::pair<Tensor, Tensor> cummin(int axis = 0) const;
  // cummax and, as int32, where each running maximum was taken (the last position so far holding
  // it, as torch; a NaN is the maximum from where it appears): tinygrad's (values, indices).
  std::pair<Tensor, Tensor> cummax_with_indices(int axis = 0) const;
  // softmax(-x): weights that favour the smallest values.
  Tensor softmin(int axis = -1, std::optional<DType> dtype = {}) const;
  // x / max(||x||_p, eps) over `dim` (torch's F.normalize); p = 0 counts the non-zero elements.
  Tensor normalize(double p = 2.0, int dim = 1, double eps = 1e-12) const;

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
  Tensor isclose(ConstValue other, double rtol = 1e-05, double atol = 1e-08,
                 bool equal_nan = false) const;  // bool
  // At least one bound; NaN stays NaN.
  Tensor clamp(std::optional<ConstValue> min = {}, std::optional<ConstValue> max = {}) const;
  Tensor clip(std::optional<ConstValue> min = {}, std::optional<ConstValue> max = {}) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor lerp(const Tensor& end, ConstValue weight) const;
  Tensor copysign(const Tensor& other) const;  // the sign of a NaN `other` reads as +
  Tensor copysign(ConstValue other) const;
  // Float pow as exp2(e * log2|b|) with tinygrad's fixes: a negative base gives NaN for a
  // non-integer exponent (-inf excepted) and the sign of an odd one; x ** 0 is 1. An integer
  // constant exponent multiplies (exact where the products are). An integer base needs a float
  // exponent (the result is float, as torch) or a non-negative integer constant (exact, keeps the
  // dtype). Gradients as torch at 0 and inf (tensor/pow.cc).
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(ConstValue exponent, bool reverse = false) const;  // reverse: exponent ** this

  // Activations.
  // approximate "tanh" (tinygrad's default) or "none" (the exact x * Phi(x), through erf).
  Tensor gelu(const std::string& approximate = "tanh") const;
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

  // ---- products (tensor/matmul.cc) ----
  // Sum product over the last axis of this and the second-to-last of `w` (its only axis when
  // 1-D); leading axes broadcast as batch axes. `dtype` is the accumulation dtype.
  Tensor dot(const Tensor& w, std::optional<DType> dtype = {}) const;
  Tensor matmul(const Tensor& x, bool reverse = false, std::optional<DType> dtype = {}) const;
  // this @ weight + bias (elementwise product when weight is 1-D)
  Tensor linear(const Tensor& weight, const std::optional<Tensor>& bias = {}) const;
  Tensor sequential(const std::vector<std::function<Tensor(const Tensor&)>>& layers) const;
  // ---- end products ----

  // ---- random and sorting (tensor/random.cc, tensor/nn.cc, tensor/dtype.cc, tensor/sort.cc,
  // tensor/scan.cc) ----
  // Random numbers are counter based, as tinygrad's: threefry2x32 (20 rounds) of the key
  // (k0, k1) = (a per-device constant, seed) over 64-bit counters, computed by generated code
  // (uint32 ADD/XOR/SHL/SHR). A call drawing `num` 32-bit words takes the process-wide counter c
  // and advances it by num; with h = ceil(num / 2), block i < h hashes the counter c + i and its
  // two output words are words i and h + i. So values depend only on the seed and the order of
  // the calls, never on the device, thread count or kernel split. The default seed is 0. The
  // counter lives on the device: a draw generates its words at once (one kernel reading the
  // counter) and advances the counter in place (a second kernel), so TinyJit replays continue the
  // stream instead of repeating the captured values.
  //
  // Sets the seed and restarts the counter (the next calls repeat the same values).
  static void manual_seed(uint64_t seed = 0);
  // The generator's state (the seed and the count of 32-bit words drawn), so a training run can
  // checkpoint it and continue the same stream. rng_state() reads the counter from the device
  // (not inside a TinyJit); set_rng_state() writes it in place. The seed is a constant of each
  // draw's kernel: restore it before a TinyJit captures its draws.
  struct RandomState {
    uint64_t seed = 0, counter = 0;
  };
  static RandomState rng_state();
  static void set_rng_state(RandomState state);
  // Uniform in [0, 1) of a float dtype (default float32): the top mantissa bits of the words
  // with exponent 1, minus 1 (a float16 draws half a word per value, a float64 two words).
  static Tensor rand(Shape shape, std::optional<DType> dtype = {}, bool contiguous = true);
  // Standard normal (Box-Muller over rand of shape (2, *shape), float32, then cast).
  static Tensor randn(Shape shape, std::optional<DType> dtype = {});
  static Tensor randint(Shape shape, RandintOptions opts = {});  // int32 by default
  static Tensor normal(Shape shape, NormalOptions opts = {});
  static Tensor uniform(Shape shape, UniformOptions opts = {});
  // Initializers (as tinygrad): uniform in +-prod(shape)^-0.5; glorot: +-sqrt(6 / (shape[0] +
  // prod(shape[1:]))); kaiming_uniform: +-sqrt(6 / (1 + a^2) / prod(shape[1:])); kaiming_normal:
  // std sqrt(2 / (1 + a^2) / prod(shape[1:])).
  static Tensor scaled_uniform(Shape shape, std::optional<DType> dtype = {});
  static Tensor glorot_uniform(Shape shape, std::optional<DType> dtype = {});
  static Tensor kaiming_uniform(Shape shape, double a = 0.01, std::optional<DType> dtype = {});
  static Tensor kaiming_normal(Shape shape, double a = 0.01, std::optional<DType> dtype = {});
  // A random permutation of 0 .. n-1 (argsort of rand(n)).
  static Tensor randperm(int64_t n, DType dtype = dtypes::int32);
  // rand / randn of this shape, and of this dtype unless one is given.
  Tensor rand_like(std::optional<DType> dtype = {}) const;
  Tensor randn_like(std::optional<DType> dtype = {}) const;
  // int32 indices drawn with probabilities proportional to the non-negative weights of a 1-D
  // (num_samples,) or 2-D (rows, num_samples) tensor; without replacement (Efraimidis-Spirakis,
  // as the newer seed) num_samples must not exceed the number of categories. The weights are
  // checked (finite, >= 0, no zero row) by reading them back, so not inside a TinyJit.
  Tensor multinomial(int64_t num_samples = 1, bool replacement = false) const;
  // Zeroes each element with probability p and scales the rest by 1 / (1 - p), only while
  // training() is true (otherwise the tensor itself, as tinygrad).
  Tensor dropout(double p = 0.5) const;
  // tinygrad's Tensor.training: process-wide, false by default. A Train guard sets it for a
  // scope and restores the previous value (tinygrad's `with Tensor.train():`); guards nest.
  static bool training();
  static void set_training(bool mode);
  class Train {
   public:
    explicit Train(bool mode = true);
    ~Train();
    Train(const Train&) = delete;
    Train& operator=(const Train&) = delete;

   private:
    bool prev_;
  };

  // torch.autocast for the products: while an Autocast guard holds float16 or bfloat16, dot,
  // matmul, linear and the convolutions first cast float operands wider than it (float32) to
  // it, so they read half the bytes; their sums still accumulate in float32 and their result has
  // the narrow dtype. Other ops keep their dtypes (adding a float32 bias promotes back to
  // float32), and gradients flow back through the casts to float32 parameters (master weights).
  // Per thread, as torch's; guards nest. std::nullopt turns it off.
  static std::optional<DType> autocast_dtype();
  class Autocast {
   public:
    explicit Autocast(std::optional<DType> dtype);
    ~Autocast();
    Autocast(const Autocast&) = delete;
    Autocast& operator=(const Autocast&) = delete;

   private:
    std::optional<DType> prev_;
  };
  // This tensor as an operand of a product under Autocast: cast to the autocast dtype when it is
  // a float wider than that, else itself.
  Tensor autocast() const;

  // Sorting along `dim`: (values, int32 indices). Stable: equal values keep their original
  // order, also when descending; NaN sorts as the largest value. (value, index) pairs are ranked
  // in blocks of up to 32 (O(32 n) compares), then merged by a bitonic network (one kernel per
  // compare-exchange step, O(n log^2 n)). Float values are then gathered from the input by a
  // one-hot select-and-sum (O(n^2) per line, fused; skipped when only indices are used, as by
  // argsort), so gradients flow to the input directly; a -0.0 comes back as 0.0.
  std::pair<Tensor, Tensor> sort(int dim = -1, bool descending = false) const;
  Tensor argsort(int dim = -1, bool descending = false) const;  // sort(...).second
  // The k largest (smallest) along `dim` in sorted order: (values, int32 indices); k in
  // [0, shape[dim]]. sorted=false returns them sorted too.
  std::pair<Tensor, Tensor> topk(int64_t k, int dim = -1, bool largest = true,
                                 bool sorted = true) const;
  // Scans along `axis` (same shape): the running product (keeps the dtype) and
  // log(cumsum(exp(x))) computed stably (float).
  Tensor cumprod(int axis) const;
  Tensor logcumsumexp(int axis = 0) const;
  // ---- end random and sorting ----

  // ---- indexing (tensor/indexing.cc, tensor/movement.cc, tensor/rearrange.cc) ----
  // Python's x[...] (tinygrad's __getitem__): x[0], x[idx], x[{1, Slice(), NewAxis}],
  // x[{Ellipsis, Slice({}, {}, -2)}], x[{i, Slice(1, {}, 2), NewAxis, Ellipsis, idx}].
  // Ints, slices, NewAxis and Ellipsis give views (shrink/flip/pad/reshape, never copies).
  // Integer tensor indices (advanced indexing) broadcast together; their dimensions replace the
  // indexed ones where the first tensor index was, or go first when tensor indices are not
  // adjacent (numpy's rule). Negative index values count from the end; a value out of range
  // reads 0 (as tinygrad). Constant ints out of range, more indices than dimensions, two
  // Ellipsis, a zero step or a non-integer index tensor throw tc::Error.
  // (One index is a template so that a braced list always means the vector of positions.)
  template <typename I, typename = std::enable_if_t<std::is_convertible_v<I, IndexItem>>>
  Tensor operator[](const I& index) const {
    return getitem({IndexItem(index)});
  }
  Tensor operator[](const std::vector<IndexItem>& indices) const { return getitem(indices); }
  Tensor getitem(const std::vector<IndexItem>& indices) const;
  // Python's x[...] = value (tinygrad's __setitem__), lazily through assign(): this tensor
  // (every handle) becomes a copy with the indexed elements replaced by `value`, broadcast to
  // the indexed shape. A tensor value must have this dtype; a scalar is cast to it. With
  // repeated advanced indices the last one (in row-major order of the index) wins. Throws when
  // another live tensor's unrealized graph reads this one (not as a view of its buffer, and not
  // the value's own graph): the write would change what it computes (as tinygrad).
  Tensor& setitem(const std::vector<IndexItem>& indices, const Tensor& value);
  Tensor& setitem(const std::vector<IndexItem>& indices, ConstValue value);
  // setitem at the elements of `view`, a view taken from this tensor (or from the tensor this one
  // is a view of): how Python writes t[v:v+2] = x, whose window (shrink_from) has a Variable start.
  Tensor& setitem_view(const Tensor& view, const Tensor& value);
  template <typename I, typename V,
            typename = std::enable_if_t<std::is_convertible_v<I, IndexItem>>>
  Tensor& setitem(const I& index, const V& value) {
    return setitem(std::vector<IndexItem>{IndexItem(index)}, value);
  }
  // out[i][j][k] = this[index[i][j][k]][j][k] for dim 0 (and so on): index has this ndim, an
  // integer dtype, and index.shape[d] <= shape[d] for d != dim. Out-of-range values read 0.
  Tensor gather(int dim, const Tensor& index) const;
  // A copy with this[index[i][j]][j] = src[i][j] for dim 0 (and so on); the last write wins.
  // src has this dtype and src.shape >= index.shape; a scalar src is cast to this dtype and may
  // take reduce "add" or "multiply" (for a tensor src use scatter_reduce). Out-of-range index
  // values write nothing.
  Tensor scatter(int dim, const Tensor& index, const Tensor& src,
                 const std::string& reduce = "") const;
  Tensor scatter(int dim, const Tensor& index, ConstValue src,
                 const std::string& reduce = "") const;
  // scatter that combines: reduce is "sum", "prod", "mean", "amax" or "amin"; include_self=false
  // leaves the old value out where something is scattered. "mean" divides (float result).
  Tensor scatter_reduce(int dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                        bool include_self = true) const;
  // The elements where the bool `mask` (broadcast to this shape) is true, flattened. Without a
  // size the length is data-dependent: the mask is realized to count (as tinygrad). With a size,
  // the result has that length, padded with fill_value or truncated, and nothing is realized.
  Tensor masked_select(const Tensor& mask, std::optional<int64_t> size = {},
                       ConstValue fill_value = 0) const;
  // mask.where(value, this): dtypes promote as in where (an int tensor filled with 1.5 is float).
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;
  Tensor masked_fill(const Tensor& mask, ConstValue value) const;
  // int32 (n, ndim) coordinates of the non-zero elements in row-major order; n is data-dependent
  // (realized to count) unless size is given (then padded with fill_value or truncated).
  Tensor nonzero(std::optional<int64_t> size = {}, ConstValue fill_value = 0) const;
  // Each element repeated `repeats` times along dim (default: of the flattened tensor).
  Tensor repeat_interleave(int64_t repeats, std::optional<int> dim = {}) const;
  // einops-style: x.rearrange("b c (h w) -> b (c h) w", {{"h", 4}}); "..." stands for the
  // remaining dimensions, "1" and "()" for size-1 dimensions.
  Tensor rearrange(const std::string& formula,
                   const std::vector<std::pair<std::string, int64_t>>& sizes = {}) const;
  // int32 one-hot of an integer tensor along a new last axis; -1 infers max + 1 (realizes).
  Tensor one_hot(int64_t num_classes = -1) const;
  // ---- end indexing ----

  // ---- processing: pools, convolutions, einsum, interpolate (tensor/pool.cc, tensor/conv.cc,
  // tensor/einsum.cc, tensor/interpolate.cc) ----
  // Sliding windows over the last kernel.size() dimensions as movement ops only (tinygrad's
  // _pool): (..., i1..in) -> (..., o1..on, k1..kn) with o = ceil((i - d*(k-1)) / s). No copy.
  Tensor pool(const IntTuple& kernel, const IntTuple& stride = 1,
              const IntTuple& dilation = 1) const;
  // Average / max pooling of the last opts.kernel_size.size() dimensions (tinygrad: any number of
  // them, not only 2). max pads with the dtype's lowest value.
  Tensor avg_pool2d(const PoolOpts& opts = {}) const;
  Tensor max_pool2d(const PoolOpts& opts = {}) const;
  // max_pool2d with return_indices: (values, indices), the indices int32 and flat within each
  // pooled plane (PyTorch's convention; the first maximum of a window wins).
  std::pair<Tensor, Tensor> max_pool2d_with_indices(const PoolOpts& opts = {}) const;
  // The partial inverse of max_pool2d: this (bs, c, *spatial) scattered to `indices` in planes of
  // opts.output_size (default: the size max_pool2d with these options was given).
  Tensor max_unpool2d(const Tensor& indices, const UnpoolOpts& opts = {}) const;
  // Convolution of this (bs, groups*cin, *spatial) with weight (cout, cin, *kernel) over any
  // number of spatial dimensions: pool + mul + sum, one reduce kernel. bias: (cout,). WINO=1 (env)
  // uses Winograd F(4x4, 3x3) when every kernel dimension is 3, stride and dilation 1.
  Tensor conv2d(const Tensor& weight, const std::optional<Tensor>& bias,
                const ConvOpts& opts = {}) const;
  Tensor conv2d(const Tensor& weight, const ConvOpts& opts = {}) const;
  // Transposed convolution; weight (groups*cin, cout/groups, *kernel) as PyTorch.
  Tensor conv_transpose2d(const Tensor& weight, const std::optional<Tensor>& bias,
                          const ConvTransposeOpts& opts = {}) const;
  Tensor conv_transpose2d(const Tensor& weight, const ConvTransposeOpts& opts = {}) const;
  // Einstein summation, e.g. einsum("ij,jk->ik", {a, b}): explicit ("->") or implicit output
  // (the letters seen once, sorted), repeated letters in one operand take the diagonal, "..."
  // broadcasts. `dtype` is the accumulation dtype.
  static Tensor einsum(const std::string& formula, const std::vector<Tensor>& operands,
                       std::optional<DType> dtype = {});
  // Resizes the last size.size() dimensions to `size`: mode "linear" (also "bilinear" /
  // "trilinear"), "nearest" or "nearest-exact"; align_corners only with linear. Keeps the dtype.
  Tensor interpolate(Shape size, const std::string& mode = "linear",
                     bool align_corners = false) const;
  // ---- end processing ----

  // ---- math: inverse trig, erf and friends (tensor/math.cc) ----
  // Float results for integer inputs. Outside the domain the result is NaN; asin/acos/atan are
  // tinygrad's polynomial (A&S 4.4.46, ~2e-8 absolute), erf is A&S 7.1.26 (~1.5e-7 absolute).
  Tensor asin() const;
  Tensor acos() const;
  Tensor atan() const;
  Tensor asinh() const;
  Tensor acosh() const;
  Tensor atanh() const;  // atanh(+-1) = +-inf
  Tensor erf() const;
  // ~x: every bit flipped for integers, logical_not for bool (other dtypes throw).
  Tensor bitwise_not() const;
  // x << n and x >> n of integers (n broadcast and promoted with x as in a binary op); >> of a
  // signed integer is arithmetic (keeps the sign). A count outside [0, bits) gives 0 for <<,
  // and for >> the sign fill (-1 or 0; 0 when unsigned), as PyTorch defines it.
  Tensor lshift(const Tensor& n) const;
  Tensor rshift(const Tensor& n) const;
  Tensor lshift(int64_t n) const;
  Tensor rshift(int64_t n) const;
  // C's remainder (the dividend's sign; tinygrad's fmod): exact for integers, a - trunc(a / b) * b
  // for floats.
  Tensor fmod(const Tensor& x) const;
  Tensor fmod(ConstValue x) const;
  Tensor log10() const;  // log2(x) * log10(2)
  // log(exp(x) + exp(other)) computed stably (float): -inf with -inf gives -inf.
  Tensor logaddexp(const Tensor& other) const;
  Tensor logaddexp(ConstValue other) const;
  // Division with tinygrad's rounding_mode "trunc" or "floor" (nullptr: true division). Integer
  // operands keep their promoted integer dtype and are divided exactly.
  Tensor div(const Tensor& x, const char* rounding_mode, bool reverse = false) const;
  Tensor div(ConstValue x, const char* rounding_mode, bool reverse = false) const;
  friend Tensor operator~(const Tensor& a) { return a.bitwise_not(); }
  friend Tensor operator<<(const Tensor& a, int64_t n) { return a.lshift(n); }
  friend Tensor operator>>(const Tensor& a, int64_t n) { return a.rshift(n); }
  friend Tensor operator<<(const Tensor& a, const Tensor& n) { return a.lshift(n); }
  friend Tensor operator>>(const Tensor& a, const Tensor& n) { return a.rshift(n); }
  // ---- end math ----

  // ---- nn ops, losses, dtype and misc (tensor/nn.cc, tensor/activation.cc, tensor/dtype.cc,
  // tensor/tensor.cc, tensor/creation.cc, tensor/hash.cc) ----
  // (x - mean) / sqrt(var + eps) over `axis` (biased variance), without affine parameters.
  Tensor layernorm(Axes axis = -1, double eps = 1e-5) const;
  // (x - mean) * weight * invstd + bias. mean, weight and bias hold one value per position of the
  // `axis` dimensions (shaped as those dimensions, in order); invstd too, or it is any tensor that
  // broadcasts to x (tinygrad's rule: it is reshaped only when its rank is the number of axes).
  Tensor batchnorm(const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                   const Tensor& mean, const Tensor& invstd, Axes axis = 1) const;
  // softmax(q @ k^T / sqrt(d) + mask) @ v with this as the query (..., L, d), key (..., S, d),
  // value (..., S, dv). A bool mask keeps the true positions; a float mask is added. The scores
  // are computed in at least float32 and cast back to the query's dtype before the softmax.
  Tensor scaled_dot_product_attention(const Tensor& key, const Tensor& value,
                                      const std::optional<Tensor>& attn_mask = {},
                                      const AttentionOpts& opts = {}) const;
  // Losses; reduction is "mean", "sum" or "none". Labels (class indices) must be an integer
  // dtype; a label outside [0, classes) that is not ignored makes its loss NaN.
  // Binary cross-entropy of probabilities (this) against targets Y of the same shape.
  Tensor binary_crossentropy(const Tensor& Y, const std::string& reduction = "mean") const;
  // The same on logits, in the stable form -(pos_weight * Y * logsigmoid(x) + (1 - Y) *
  // logsigmoid(-x)); pos_weight broadcasts to x (PyTorch's BCEWithLogitsLoss).
  Tensor binary_crossentropy_logits(const Tensor& Y, const std::string& reduction = "mean",
                                    const std::optional<Tensor>& pos_weight = {}) const;
  // Logits (..., classes) against labels Y (...): the class axis is the last one (unlike torch).
  Tensor sparse_categorical_crossentropy(const Tensor& Y,
                                         const SparseCrossEntropyOpts& opts = {}) const;
  // Logits (N, C, d1, ...) (or (C,)) with the class axis 1 (torch's F.cross_entropy); Y holds
  // class indices (integer dtype, shape without the class axis) or class probabilities (float,
  // the logits' shape).
  Tensor cross_entropy(const Tensor& Y, const std::string& reduction = "mean",
                       double label_smoothing = 0.0) const;
  // Negative log likelihood of log-probabilities (N, C, d1, ...) (or (C,)) at labels Y, each
  // weighted by weight[label] (weight: (C,)); "mean" divides by the sum of those weights.
  Tensor nll_loss(const Tensor& Y, const std::optional<Tensor>& weight = {},
                  std::optional<int64_t> ignore_index = {},
                  const std::string& reduction = "mean") const;
  // log(sigmoid(x)), stable for large |x|.
  Tensor logsigmoid() const;

  // Cast shortcuts (tinygrad's float() ... bool(); a trailing _ where the name is a C++ keyword).
  Tensor float_() const;   // float32
  Tensor double_() const;  // float64
  Tensor half() const;     // float16
  Tensor bfloat16() const;
  Tensor int_() const;    // int32
  Tensor long_() const;   // int64
  Tensor short_() const;  // int16
  Tensor char_() const;   // int8
  Tensor byte() const;    // uint8
  Tensor bool_() const;
  // The same bytes read as `dtype`. Between sizes, the last dimension changes by the size ratio
  // (its bytes must divide), little-endian as tinygrad. No gradient flows through it.
  Tensor bitcast(DType dtype) const;
  int64_t element_size() const;  // bytes of one element
  int64_t nbytes() const;        // numel() * element_size()
  bool is_floating_point() const;
  Shape size() const;           // the shape
  int64_t size(int dim) const;  // one dimension (negative counts from the end)
  // This tensor on `device` (this one itself when it is already there), its grad moved along.
  // Between devices it realizes this tensor and copies its values through host memory into a
  // new buffer: the copy is a leaf (no gradient flows back to the source device).
  Tensor to(const std::string& device) const;
  Tensor& to_(const std::string& device);  // moves this tensor (every handle) in place
  // Multi-device (tinygrad's shard): this tensor in pieces on `devices`, split along `axis`
  // (ceil(n / k) elements a piece, the last ones shorter), or a whole copy on each without one
  // (tinygrad's to(tuple)). Ops on it run on each device (tinycore/schedule/multi.h), reduces
  // over the split axis all-reduce; host reads see the whole tensor. Devices that do not share
  // memory (the CPU and CL) copy what the others need (Ops::COPY); to() gathers lazily.
  Tensor shard(const std::vector<std::string>& devices, std::optional<int> axis = {}) const;
  Tensor& shard_(const std::vector<std::string>& devices, std::optional<int> axis = {});
  // The devices of a multi-device tensor, or of one computed from them; {device()} otherwise.
  std::vector<std::string> devices() const;
  // The axis such a tensor is split along (tinygrad's uop.axis); none when each device holds it
  // whole, or it is on one device.
  std::optional<int> shard_axis() const;
  // A new tensor with its own buffer holding the same values (and a clone of the grad). Lazy as
  // tinygrad's: once realized, later assigns to either do not affect the other.
  Tensor clone() const;
  // Makes this tensor (every handle) `x`'s graph: the shape must match, dtype may differ.
  Tensor& replace(const Tensor& x);
  // A constant of this shape and dtype (tinygrad's const_like: a broadcast scalar, no buffer).
  Tensor const_like(ConstValue value) const;
  // A Python-like scalar as a 0-d operand of this tensor (tinygrad's _broadcasted rule): it takes
  // this dtype when this is float, or an integer and the scalar an int; otherwise its own.
  Tensor scalar_like(ConstValue x) const;
  // Keccak hash over the last dimension's bytes (any dtype, read as uint8): "sha3_224",
  // "sha3_256" or "shake_128" (16 output bytes), or a raw rate and domain byte. The result is
  // uint8 (..., digest bytes). Built from Tensor xor/and/mul/div ops on uint64 lanes.
  Tensor keccak(const std::string& cfg = "sha3_256") const;
  Tensor keccak(int rate, int dsbyte) const;
  // tinygrad's 16-byte tree hash of the bytes of the whole tensor (shake_128 over 1 MiB pages).
  Tensor hash() const;
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
  // The realized, contiguous contents as raw bytes in this tensor's dtype (tinygrad's .data()).
  std::vector<uint8_t> raw_bytes() const { return bytes(); }
  // The realized, contiguous contents where they lie, when that is host memory (the CPU device):
  // numel() elements of dtype(), valid while the returned handle lives (it holds the buffer).
  // No copy; nullptr on devices whose memory the host cannot read directly. Do not write
  // through it: the buffer may be shared by equal graphs.
  std::shared_ptr<const void> host_data() const;

 private:
  Tensor apply(Ops op, DType dtype, std::vector<Tensor> src = {}) const;
  Tensor binop(const char* name, Ops op, const Tensor& x) const;
  Tensor as_float() const;
  Tensor reduce(const char* name, Ops op, const Axes& axis, bool keepdim) const;
  std::vector<int64_t> reduce_axes(const char* name, const Axes& axis) const;  // sorted, checked
  Tensor broadcast_to(const Shape& shape) const;
  // An op along `axis` of a 0-d tensor (axis 0 or -1, as torch): f of it as a 1-element vector.
  Tensor on_scalar(const char* name, int axis, const std::function<Tensor(const Tensor&)>& f) const;
  std::vector<uint8_t> bytes() const;  // the realized, contiguous contents
  std::shared_ptr<runtime::Buffer> realized_buffer(const char* reader) const;

  friend void realize_all(const std::vector<Tensor>& tensors);
  // realize_all's one schedule: each tensor into its assign target where it has one.
  static void realize_each(const std::vector<Tensor>& tensors);
  friend class AssignLog;
  friend class TinyJit;
  // One movement (or detach) from a tensor to its view, as the Tensor method was called.
  struct ViewStep {
    Ops op;
    Arg arg;
    Shape in_shape;  // the shape it was applied to
    UOpRef start;    // shrink_from's start (arg: {dim, length}); null for every other step
  };
  // Every Impl is in one list of live tensors (tinygrad's all_tensors), so that setitem can tell
  // whether another tensor still reads the graph it is about to change.
  struct Impl : std::enable_shared_from_this<Impl> {
    explicit Impl(UOpRef u);
    ~Impl();
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    void set_uop(UOpRef u);  // realize(): the new uop, remembering the old graph (weakly)
    UOpRef uop;
    // The graphs this tensor held before realize() replaced them by their result; a loss built
    // from one of them (still alive while that loss is) depends on this tensor through it.
    std::vector<std::weak_ptr<const UOp>> before_realize;
    std::optional<bool> requires_grad;  // nullopt: tinygrad's None (set_default_requires_grad)
    UOpRef assign_target;      // the buffer view an assign() writes into when realized, or null
    bool owns_buffer = false;  // its buffer is its own: assign() may write it in place
    std::shared_ptr<Impl> grad;
    // A view (movements or a detach of another tensor, as torch's and tinygrad's) aliases the
    // tensor it was taken from, its base, while that base holds a buffer: a write through the view
    // lands in the base, and a write to the base is seen through the view.
    // Weak: a base nobody holds can see no write, and a view of it is a tensor of its own.
    std::weak_ptr<Impl> view_base;
    std::vector<ViewStep> view_steps;        // from the base to this view
    std::vector<std::weak_ptr<Impl>> views;  // on a base: the views taken from it
    size_t views_prune_at = 16;
    Impl* live_prev = nullptr;  // the list of live tensors
    Impl* live_next = nullptr;
  };
  struct LiveTensors;  // the head of that list (tensor/assign.cc)
  // The live tensors but those `skip` names.
  static std::vector<std::shared_ptr<Impl>> live_tensors(
      const std::function<bool(const Impl&)>& skip);
  explicit Tensor(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  // This tensor's value becomes `fresh` (a new buffer, Tensor::empty), whose memory it owns.
  void hold_own(const Tensor& fresh);
  // A view of this tensor: `u`, the result of applying `op` with `arg` to uop() (see Impl).
  Tensor view_of(UOpRef u, Ops op, Arg arg, UOpRef start = nullptr) const;
  // Whether this tensor's value lives in a buffer a write can reach (realized, or assigned).
  bool holds_buffer() const;
  // assign() through a view: the base gets `x` at the view's elements; every view follows.
  void assign_through_view(Tensor base, const Tensor& x);
  // After this tensor's value changed, each live view of it takes its steps from the new value.
  void update_views();
  // setitem's guard: throws when a live tensor other than the value's graph reads this one's
  // unrealized graph (or its buffer, unless as a view of it): the write would change it.
  // `view`, when given, is the view being written through: not a reader either.
  void check_no_other_readers(const Tensor& value, const Impl* view = nullptr) const;
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

// While alive, assign() on this thread logs the tensors it changes, so that TinyJit realizes the
// assigns a step leaves pending together with the step's outputs (a replay must write them too,
// as tinygrad's capture does). Logs nest; assign() records into the innermost one.
class AssignLog {
 public:
  AssignLog();
  ~AssignLog();
  AssignLog(const AssignLog&) = delete;
  AssignLog& operator=(const AssignLog&) = delete;
  // `tensors` followed by each logged tensor whose assign is not realized yet (once each).
  std::vector<Tensor> with_pending(std::vector<Tensor> tensors) const;

 private:
  friend class Tensor;
  static thread_local AssignLog* current;
  AssignLog* prev_;
  std::vector<Tensor> assigned_;
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
// In-place operators (tinygrad's __iadd__ ...): this = this op x, via assign (every handle of
// `a` sees the new value; the result is cast back to a's dtype).
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator&=(Tensor& a, const Tensor& b);
Tensor& operator|=(Tensor& a, const Tensor& b);
Tensor& operator^=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, ConstValue b);
Tensor& operator-=(Tensor& a, ConstValue b);
Tensor& operator*=(Tensor& a, ConstValue b);
Tensor& operator/=(Tensor& a, ConstValue b);
Tensor& operator<<=(Tensor& a, int64_t n);
Tensor& operator>>=(Tensor& a, int64_t n);

}  // namespace tc

#include "tinycore/tensor/data.h"
