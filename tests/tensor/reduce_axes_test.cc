// sum/max/min over every axis combination and keepdim, on non-contiguous views, integer and bool
// inputs and many lengths, against a naive double-precision reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tests/tensor/reference.h"
#include "tinycore/dtype.h"
#include "tinycore/tensor.h"

namespace {

namespace ref = tcref;
namespace dt = tc::dtypes;
using ref::NDArray;
using tc::DType;
using tc::Tensor;
using S = std::vector<int64_t>;

constexpr double kF32 = 1e-5;  // float32 arithmetic
const double kInf = std::numeric_limits<double>::infinity();

NDArray vals(S shape, std::vector<double> v) { return NDArray(std::move(shape), std::move(v)); }

// ================================================================== reductions

struct AxisCase {
  std::vector<int> axes;  // empty: all
  bool keepdim;
};

const std::vector<AxisCase>& axis_cases() {
  static const std::vector<AxisCase> c = {
      {{}, false},   {{}, true},      {{0}, false},     {{1}, false},       {{2}, true},
      {{-1}, false}, {{0, 2}, false}, {{-1, -3}, true}, {{0, 1, 2}, false}, {{1, 1}, false},
  };
  return c;
}

Tensor apply_reduce(const Tensor& x, ref::Reduce op, const AxisCase& c) {
  tc::Axes ax = c.axes.empty() ? tc::Axes() : tc::Axes(c.axes);
  switch (op) {
    case ref::Reduce::Sum:
      return x.sum(ax, c.keepdim);
    case ref::Reduce::Max:
      return x.max(ax, c.keepdim);
    default:
      return x.min(ax, c.keepdim);
  }
}

std::string describe(ref::Reduce op, const AxisCase& c) {
  std::string s = op == ref::Reduce::Sum ? "sum" : op == ref::Reduce::Max ? "max" : "min";
  s += " axes {";
  for (int a : c.axes) s += std::to_string(a) + ",";
  return s + "} keepdim=" + (c.keepdim ? "true" : "false");
}

TEST(Reduce, AxesAndKeepdim) {
  NDArray a = ref::random({2, 3, 4}, 111);
  Tensor x = ref::tensor(a);
  for (ref::Reduce op : {ref::Reduce::Sum, ref::Reduce::Max, ref::Reduce::Min})
    for (const AxisCase& c : axis_cases()) {
      Tensor r = apply_reduce(x, op, c);
      EXPECT_EQ(r.dtype(), dt::float32);
      ref::expect_close(r, ref::reduce(a, op, c.axes, c.keepdim), kF32, kF32, describe(op, c));
    }
  Tensor all = x.sum();
  EXPECT_EQ(all.ndim(), 0);
  EXPECT_NEAR(all.item<double>(), ref::reduce(a, ref::Reduce::Sum).v[0], 1e-4);
  EXPECT_EQ(x.max().item<float>(), static_cast<float>(ref::reduce(a, ref::Reduce::Max).v[0]));
  // a larger row sum
  NDArray big = ref::random({3, 1000}, 112, -1, 1);
  ref::expect_close(ref::tensor(big).sum(1), ref::reduce(big, ref::Reduce::Sum, {1}), 1e-5, 1e-4,
                    "sum 1000");
}

// Non-contiguous views as reduce inputs.
struct ViewCase {
  const char* name;
  std::function<Tensor(const Tensor&)> t;
  std::function<NDArray(const NDArray&)> r;
};

// A 0-d tensor has one "axis", 0 or -1 (as torch): reductions and scans along it keep the value.
TEST(Reduce, AlongTheAxisOfAScalar) {
  Tensor x = Tensor::full({}, 2.5);
  for (int axis : {0, -1}) {
    EXPECT_EQ(x.sum(axis).shape(), S{});
    EXPECT_FLOAT_EQ(x.sum(axis).item<float>(), 2.5f);
    EXPECT_FLOAT_EQ(x.prod(axis, true).item<float>(), 2.5f);
    EXPECT_FLOAT_EQ(x.cumsum(axis).item<float>(), 2.5f);
    EXPECT_FLOAT_EQ(x.cummax(axis).item<float>(), 2.5f);
    EXPECT_FLOAT_EQ(x.softmax(axis).item<float>(), 1.0f);
    EXPECT_FLOAT_EQ(x.log_softmax(axis).item<float>(), 0.0f);
    EXPECT_FLOAT_EQ(x.logsumexp(axis).item<float>(), 2.5f);
  }
  EXPECT_THROW(x.sum(1), tc::Error);
  EXPECT_THROW(x.softmax(1), tc::Error);
  EXPECT_THROW(x.cumsum(-2), tc::Error);
}

TEST(Reduce, NonContiguousInputs) {
  NDArray a = ref::random({3, 4, 5}, 121, -3, -0.5);  // all negative: a zero pad shows up in max
  Tensor x = ref::tensor(a);
  std::vector<ViewCase> views = {
      {"permuted",
       [](const Tensor& t) {
         return t.permute({2, 0, 1});
       },
       [](const NDArray& n) {
         return ref::permute(n, {2, 0, 1});
       }},
      {"shrunk",
       [](const Tensor& t) {
         return t.shrink({{1, 3}, {0, 3}, {2, 5}});
       },
       [](const NDArray& n) {
         return ref::shrink(n, {{1, 3}, {0, 3}, {2, 5}});
       }},
      {"flipped",
       [](const Tensor& t) {
         return t.flip({0, 2});
       },
       [](const NDArray& n) {
         return ref::flip(n, {0, 2});
       }},
      {"padded",
       [](const Tensor& t) {
         return t.pad({{1, 0}, {0, 2}, {1, 1}});
       },
       [](const NDArray& n) {
         return ref::pad(n, {{1, 0}, {0, 2}, {1, 1}}, 0);
       }},
      {"padded with 4",
       [](const Tensor& t) {
         return t.pad({{0, 1}, {1, 0}, {0, 0}}, 4.0);
       },
       [](const NDArray& n) {
         return ref::pad(n, {{0, 1}, {1, 0}, {0, 0}}, 4.0);
       }},
      {"expanded",
       [](const Tensor& t) {
         return t.shrink({{0, 3}, {0, 1}, {0, 5}}).expand({3, 6, 5});
       },
       [](const NDArray& n) {
         return ref::expand(ref::shrink(n, {{0, 3}, {0, 1}, {0, 5}}), {3, 6, 5});
       }},
      {"reshaped permute",
       [](const Tensor& t) {
         return t.permute({1, 0, 2}).reshape({2, 6, 5});
       },
       [](const NDArray& n) {
         return ref::reshape(ref::permute(n, {1, 0, 2}), {2, 6, 5});
       }},
      {"chain",
       [](const Tensor& t) {
         return t.permute({2, 1, 0})
             .flip({1})
             .shrink({{1, 5}, {0, 4}, {1, 3}})
             .pad({{0, 0}, {1, 1}, {0, 2}}, -7.0);
       },
       [](const NDArray& n) {
         return ref::pad(
             ref::shrink(ref::flip(ref::permute(n, {2, 1, 0}), {1}), {{1, 5}, {0, 4}, {1, 3}}),
             {{0, 0}, {1, 1}, {0, 2}}, -7.0);
       }},
  };
  std::vector<AxisCase> axes = {{{1}, false}, {{0, 2}, true}, {{}, false}, {{-1}, true}};
  for (const ViewCase& v : views) {
    NDArray va = v.r(a);
    for (ref::Reduce op : {ref::Reduce::Sum, ref::Reduce::Max, ref::Reduce::Min})
      for (const AxisCase& c : axes)
        ref::expect_close(apply_reduce(v.t(x), op, c), ref::reduce(va, op, c.axes, c.keepdim), kF32,
                          kF32, std::string(v.name) + " " + describe(op, c));
  }
}

TEST(Reduce, ReduceOfReduceAndElementwiseAfter) {
  NDArray a = ref::random({4, 5, 6}, 131);
  Tensor x = ref::tensor(a);
  ref::expect_close(x.sum(1).max(0),
                    ref::reduce(ref::reduce(a, ref::Reduce::Sum, {1}), ref::Reduce::Max, {0}), kF32,
                    kF32, "sum then max");
  ref::expect_close(
      x.max(2, true) * 2 + 1,
      ref::map(ref::reduce(a, ref::Reduce::Max, {2}, true), [](double v) { return v * 2 + 1; }),
      kF32, kF32, "max then elementwise");
  // reduce of an elementwise expression
  ref::expect_close(
      (x * x).sum({0, 2}),
      ref::reduce(ref::map(a, [](double v) { return v * v; }), ref::Reduce::Sum, {0, 2}), kF32,
      kF32, "sum of squares");
}

TEST(Reduce, IntegerAndBool) {
  NDArray a = ref::random_int({3, 4}, 141, -100, 100);
  Tensor x = ref::tensor(a, dt::int32);
  for (ref::Reduce op : {ref::Reduce::Sum, ref::Reduce::Max, ref::Reduce::Min})
    for (const std::vector<int>& ax : std::vector<std::vector<int>>{{0}, {1}, {}}) {
      AxisCase c{ax, false};
      Tensor r = apply_reduce(x, op, c);
      EXPECT_EQ(r.dtype(), dt::int32);
      ref::expect_exact(r, ref::reduce(a, op, ax), "int32 " + describe(op, c));
    }
  // int8 sums accumulate in int32 (no wrap at 127)
  NDArray i8 = ref::generate({4, 4}, [](int64_t i) { return i % 2 ? 100.0 : 120.0; });
  Tensor s8 = ref::tensor(i8, dt::int8).sum(1);
  EXPECT_EQ(s8.dtype(), dt::int32);
  ref::expect_exact(s8, ref::reduce(i8, ref::Reduce::Sum, {1}), "int8 sum");
  // uint8: sum in uint32, min/max unsigned
  NDArray u8 = ref::random_int({3, 5}, 142, 0, 255);
  Tensor xu = ref::tensor(u8, dt::uint8);
  EXPECT_EQ(xu.sum(1).dtype(), dt::uint32);
  ref::expect_exact(xu.sum(1), ref::reduce(u8, ref::Reduce::Sum, {1}), "uint8 sum");
  EXPECT_EQ(xu.max(1).dtype(), dt::uint8);
  ref::expect_exact(xu.max(1), ref::reduce(u8, ref::Reduce::Max, {1}), "uint8 max");
  EXPECT_EQ(xu.min(0).dtype(), dt::uint8);
  ref::expect_exact(xu.min(0), ref::reduce(u8, ref::Reduce::Min, {0}), "uint8 min");
  NDArray u32 = vals({2, 2}, {4000000000.0, 5, 3, 4294967295.0});
  ref::expect_exact(ref::tensor(u32, dt::uint32).min(1), vals({2}, {5, 3}), "uint32 min");
  ref::expect_exact(ref::tensor(u32, dt::uint32).max(0), vals({2}, {4000000000.0, 4294967295.0}),
                    "uint32 max");
  // bool: sum counts (int32), max is any, min is all
  NDArray b = vals({3, 3}, {1, 0, 1, 0, 0, 0, 1, 1, 1});
  Tensor xb = ref::tensor(b, dt::bool_);
  EXPECT_EQ(xb.sum(1).dtype(), dt::int32);
  ref::expect_exact(xb.sum(1), vals({3}, {2, 0, 3}), "bool sum");
  EXPECT_EQ(xb.max(1).dtype(), dt::bool_);
  ref::expect_exact(xb.max(1), vals({3}, {1, 0, 1}), "bool max");
  EXPECT_EQ(xb.min(1).dtype(), dt::bool_);
  ref::expect_exact(xb.min(1), vals({3}, {0, 0, 1}), "bool min");
  // int64 beyond 2^53 stays exact
  Tensor l = Tensor::from_vector<int64_t>({int64_t{1} << 60, 3, -(int64_t{1} << 59), 1});
  EXPECT_EQ(l.sum().item<int64_t>(), (int64_t{1} << 60) + 4 - (int64_t{1} << 59));
  EXPECT_EQ(l.max().item<int64_t>(), int64_t{1} << 60);
  EXPECT_EQ(l.min().item<int64_t>(), -(int64_t{1} << 59));
}

TEST(Reduce, MinAtTheBottomOfSignedRanges) {
  // min must not negate: -(-128) does not fit in int8
  NDArray a = vals({2, 3}, {-128, 5, 7, 3, -128, 127});
  Tensor x8 = ref::tensor(a, dt::int8);
  ref::expect_exact(x8.min(1), ref::reduce(a, ref::Reduce::Min, {1}), "int8 min");
  ref::expect_exact(x8.min(), vals({}, {-128}), "int8 min all");
  NDArray b = vals({3}, {-2147483648.0, 5, -7});
  ref::expect_exact(ref::tensor(b, dt::int32).min(), vals({}, {-2147483648.0}), "int32 min");
}

TEST(Reduce, ManySizes) {
  // odd and power-of-two lengths, so any unrolling / vectorizing of loops meets its remainders
  for (int64_t n : {1, 2, 3, 7, 16, 17, 31, 64, 127, 257}) {
    std::string ns = " n=" + std::to_string(n);
    NDArray rows = ref::random({5, n}, static_cast<uint64_t>(200 + n));
    Tensor r = ref::tensor(rows);
    ref::expect_close(r.sum(1), ref::reduce(rows, ref::Reduce::Sum, {1}), kF32, kF32 * 4,
                      "row sum" + ns);
    ref::expect_close(r.max(0), ref::reduce(rows, ref::Reduce::Max, {0}), 0, 0, "column max" + ns);
    ref::expect_close(r.permute({1, 0}).min(0), ref::reduce(rows, ref::Reduce::Min, {1}), 0, 0,
                      "min over a transposed view" + ns);
    ref::expect_close(r * 2 - 1, ref::map(rows, [](double v) { return v * 2 - 1; }), kF32, kF32,
                      "elementwise" + ns);
  }
}

TEST(Reduce, OfConstants) {
  ref::expect_exact(Tensor::full({3, 4}, 2.0).sum(1), vals({3}, {8, 8, 8}), "full.sum(1)");
  ref::expect_exact(Tensor::full({3, 4}, 2).sum(), vals({}, {24}), "full int .sum()");
  ref::expect_exact(Tensor::ones({5}).max(), vals({}, {1}), "ones.max()");
  ref::expect_exact(Tensor::zeros({2, 3}).min(0), vals({3}, {0, 0, 0}), "zeros.min(0)");
  ref::expect_close(Tensor::full({1000}, 0.1).sum(), vals({}, {100}), 1e-5, 0, "full(0.1).sum()");
  ref::expect_exact(Tensor::full({2, 3}, -1.5).expand({4, 2, 3}).sum({0, 2}), vals({2}, {-18, -18}),
                    "expanded full sum");
  ref::expect_exact(Tensor::arange(10).sum(), vals({}, {45}), "arange.sum()");
  ref::expect_exact(Tensor::eye(5).sum(0), vals({5}, {1, 1, 1, 1, 1}), "eye.sum(0)");
}

}  // namespace
