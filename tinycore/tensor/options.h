// The argument types of the Tensor API beside Tensor itself: Python-like scalars and axes, and the
// option structs that stand for tinygrad's keyword arguments, one section per family of methods.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tinycore/dtype.h"
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
// ---- options: random (tensor/random.cc) ----
// Keyword arguments of Tensor::uniform: values in [low, high), cast to `dtype` (default float).
struct UniformOptions {
  double low = 0.0;
  double high = 1.0;
  std::optional<DType> dtype = std::nullopt;
};
// Keyword arguments of Tensor::normal: mean + std * randn (std >= 0), of `dtype`.
struct NormalOptions {
  double mean = 0.0;
  double std = 1.0;
  ::std::optional<DType> dtype = ::std::nullopt;
};
// Keyword arguments of Tensor::randint: integers in [low, high) of an integer `dtype`.
struct RandintOptions {
  int64_t low = 0;
  int64_t high = 10;
  DType dtype = dtypes::int32;
};
// ---- end options: random ----
// ---- options: indexing (tensor/indexing.cc) ----
class Tensor;
// Python's start:stop:step for Tensor indexing; an unset field takes Python's default.
// Slice() is `:`, Slice(1) is `1:`, Slice(1, 5) is `1:5`, Slice({}, {}, -1) is `::-1`.
struct Slice {
  std::optional<int64_t> start, stop, step;
  Slice() = default;
  Slice(std::optional<int64_t> start_, std::optional<int64_t> stop_ = {},
        std::optional<int64_t> step_ = {})
      : start(start_), stop(stop_), step(step_) {}
};
struct NewAxisT {};  // Python's None in an index: inserts a dimension of size 1
inline constexpr NewAxisT NewAxis{};
struct EllipsisT {};  // Python's ... in an index: as many `:` as the other indices leave
inline constexpr EllipsisT Ellipsis{};
// One position of an index: an int (removes the dimension; negative counts from the end), a
// Slice, NewAxis, Ellipsis, or an integer Tensor (advanced indexing, see Tensor::getitem).
struct IndexItem {
  enum class Kind { Int, Slice, NewAxis, Ellipsis, Tensor } kind;
  int64_t i = 0;
  tc::Slice slice;
  std::shared_ptr<Tensor> tensor;  // a handle to the index tensor
  IndexItem(int v) : kind(Kind::Int), i(v) {}
  IndexItem(long v) : kind(Kind::Int), i(v) {}
  IndexItem(long long v) : kind(Kind::Int), i(v) {}
  IndexItem(tc::Slice s) : kind(Kind::Slice), slice(s) {}
  IndexItem(NewAxisT) : kind(Kind::NewAxis) {}
  IndexItem(EllipsisT) : kind(Kind::Ellipsis) {}
  IndexItem(const Tensor& t);  // defined in tensor/indexing.cc
};
// ---- end options: indexing ----
// ---- options: processing (tensor/pool.cc, tensor/conv.cc) ----
// tinygrad's int | tuple[int, ...] for pools and convolutions: `2` (the same for every spatial
// dimension) or `{3, 2}` (one entry per spatial dimension). A padding may also have 2 entries per
// spatial dimension, in tinygrad's (and PyTorch's F.pad) flat order, last dimension first:
// {left, right, top, bottom, ...}.
// A pool's kernel_size written as an int is square (2-D), as tinygrad's make_tuple(k, 2).
struct IntTuple {
  std::vector<int64_t> v;
  bool is_int = false;  // written as one int, not as a tuple
  IntTuple(int x) : v{x}, is_int(true) {}
  IntTuple(int64_t x) : v{x}, is_int(true) {}
  IntTuple(std::initializer_list<int64_t> l) : v(l) {}  // {} (empty): the option's default
  IntTuple(std::vector<int64_t> x) : v(std::move(x)) {}
};
// avg_pool2d / max_pool2d: they pool the last kernel_size.size() dimensions (any number).
struct PoolOpts {
  IntTuple kernel_size = {2, 2};
  IntTuple stride = {};  // empty (default): kernel_size
  IntTuple dilation = 1;
  IntTuple padding = 0;
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg_pool2d only: padded zeros count in the average
};
struct UnpoolOpts {  // max_unpool2d: the options the indices were made with
  IntTuple kernel_size = {2, 2};
  IntTuple stride = {};  // empty (default): kernel_size
  IntTuple dilation = 1;
  IntTuple padding = 0;
  std::optional<Shape> output_size = std::nullopt;  // its trailing (spatial) entries are used
};
struct ConvOpts {
  int64_t groups = 1;
  IntTuple stride = 1;
  IntTuple dilation = 1;
  IntTuple padding = 0;
  std::optional<DType> dtype = std::nullopt;  // accumulation dtype of the sum
};
struct ConvTransposeOpts {
  int64_t groups = 1;
  IntTuple stride = 1;
  IntTuple dilation = 1;
  IntTuple padding = 0;  // int or one per spatial dimension, or the flat 2-per-dimension order
  IntTuple output_padding = 0;
};
// ---- end options: processing ----
// ---- options: nn (tensor/nn.cc) ----
// scaled_dot_product_attention's keyword arguments (besides attn_mask).
struct AttentionOpts {
  double dropout_p = 0.0;   // dropout of the attention weights (in training mode only)
  bool is_causal = false;   // a lower-triangular mask (attn_mask must then be empty)
  bool enable_gqa = false;  // key/value heads (dim -3) repeated to the query's head count
};
// sparse_categorical_crossentropy's keyword arguments.
struct SparseCrossEntropyOpts {
  int64_t ignore_index = -1;       // labels equal to it count for nothing (-1: none ignored)
  double label_smoothing = 0.0;    // in [0, 1]
  std::string reduction = "mean";  // "mean" (over the counted labels), "sum" or "none"
};
// ---- end options: nn ----

}  // namespace tc
