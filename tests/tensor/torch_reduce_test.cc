// Reductions, scans, the softmax family, arg-reductions and products against PyTorch
// (tests/fixtures/gen_reduce.py): forward values, output dtypes and the gradients of
// sum(out * w), over single, multiple, negative and all axes, with and without keepdim, and on
// permuted (non-contiguous) inputs.
//
// Tolerances (|ours - torch| <= atol + rtol * |torch|), float32:
//   kExact   0                 max/min/argmax/any/all/cummax, integer results
//   kSum     1e-5, 1e-6        sum/mean/cumsum/prod/var/std and matmul (summation order differs)
//   kMath    2e-5, 2e-6        softmax, log_softmax, logsumexp (exp and log approximations)
// Deviations from torch: integer sums and cumsums, argmax/argmin, and prod of int32 are int32
// in tinygrad (torch: int64), so those cases compare values only; mean of an int tensor is
// float32 in tinygrad (torch refuses it: the torch side casts first).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/tensor/fixture.h"
#include "tinycore/tensor.h"

namespace {

using tc::Axes;
using tc::Tensor;
using tcfix::bin;
using tcfix::check_op;
using tcfix::one;
using tcfix::Tol;
using tcfix::un;
namespace dt = tc::dtypes;
using T = const Tensor&;
using Ts = std::vector<Tensor>;

constexpr Tol kExact{0, 0};
constexpr Tol kSum{1e-5, 1e-6};
constexpr Tol kMath{2e-5, 2e-6};

const char* kFile = "reduce";

// ------------------------------------------------------------------ sum, max, min, mean, prod

struct ReduceCase {
  const char* name;
  std::function<Tensor(T, Axes, bool)> op;
  Tol fwd;
  Tol grad;
};

class TorchReduce : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(TorchReduce, AxesKeepdimAndPermuted) {
  const ReduceCase& p = GetParam();
  struct A {
    const char* name;
    Axes axes;
  };
  for (const A& a : std::vector<A>{{"all", Axes{}},
                                   {"a1", Axes(1)},
                                   {"neg1", Axes(-1)},
                                   {"a02", Axes{0, 2}},
                                   {"negs", Axes{-1, -3}}})
    for (bool keep : {false, true}) {
      std::string n = std::string(p.name) + "_" + a.name + (keep ? "_keep" : "_drop");
      check_op(kFile, n, un([&](T x) { return p.op(x, a.axes, keep); }), p.fwd, p.grad);
    }
  check_op(kFile, std::string(p.name) + "_permuted", un([&](T x) {
             return p.op(x.permute({1, 2, 0}), Axes(1), false);
           }),
           p.fwd, p.grad);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, TorchReduce,
    ::testing::Values(
        ReduceCase{"sum", [](T x, Axes a, bool k) { return x.sum(a, k); }, kSum, kExact},
        ReduceCase{"max", [](T x, Axes a, bool k) { return x.max(a, k); }, kExact, kExact},
        ReduceCase{"min", [](T x, Axes a, bool k) { return x.min(a, k); }, kExact, kExact},
        ReduceCase{"mean", [](T x, Axes a, bool k) { return x.mean(a, k); }, kSum, kSum},
        ReduceCase{"prod", [](T x, Axes a, bool k) { return x.prod(a, k); }, kSum, kSum}),
    [](const ::testing::TestParamInfo<ReduceCase>& i) { return std::string(i.param.name); });

TEST(TorchReduceMore, IntegerInputs) {
  // tinygrad sums int32 (and bool) to int32, torch to int64: values only
  check_op(kFile, "int_sum", un([](T x) { return x.sum(1); }), kExact, {}, false);
  check_op(kFile, "int_max", un([](T x) { return x.max(-1); }), kExact);
  check_op(kFile, "int_min", un([](T x) { return x.min(0); }), kExact);
  check_op(kFile, "int_prod", un([](T x) { return x.prod(-1); }), kExact, {}, false);
  check_op(kFile, "int_mean", un([](T x) { return x.mean(1); }), kSum);
  check_op(kFile, "bool_sum", un([](T x) { return x.sum(0); }), kExact, {}, false);
}

TEST(TorchReduceMore, ProdWithZeros) {
  check_op(kFile, "prod_zeros", un([](T x) { return x.prod(-1); }), kExact, kSum);
  check_op(kFile, "prod_zeros_all", un([](T x) {
             return x.shrink({{0, 1}, {0, 4}}).reshape({4}).prod();
           }),
           kExact, kSum);
}

TEST(TorchReduceMore, MaxMinTiesSplitTheGradient) {
  check_op(kFile, "max_ties", un([](T x) { return x.max(1); }), kExact, kExact);
  check_op(kFile, "min_ties", un([](T x) { return x.min(1); }), kExact, kExact);
}

// ------------------------------------------------------------------ var, std

TEST(TorchVarStd, Corrections) {
  for (int c : {0, 1, 2}) {
    std::string s = std::to_string(c);
    check_op(kFile, "var_a1_c" + s, un([c](T x) { return x.var(1, false, c); }), kSum, kSum);
    check_op(kFile, "std_a1_c" + s, un([c](T x) { return x.std(1, false, c); }), kSum, kSum);
  }
}

TEST(TorchVarStd, AxesAndPairs) {
  check_op(kFile, "var_all", un([](T x) { return x.var(); }), kSum, kSum);
  check_op(kFile, "std_all", un([](T x) { return x.std(); }), kSum, kSum);
  check_op(kFile, "var_negs_keep", un([](T x) { return x.var({-1, 0}, true); }), kSum, kSum);
  check_op(kFile, "std_negs_keep", un([](T x) { return x.std({-1, 0}, true); }), kSum, kSum);
  check_op(
      kFile, "var_mean",
      [](const Ts& x) {
        auto [v, m] = x[0].var_mean(-1);
        return Ts{v, m};
      },
      kSum, kSum);
  check_op(
      kFile, "std_mean",
      [](const Ts& x) {
        auto [s, m] = x[0].std_mean({0, 1}, true, 0);
        return Ts{s, m};
      },
      kSum, kSum);
  check_op(kFile, "var_permuted", un([](T x) { return x.permute({1, 2, 0}).var(2); }), kSum, kSum);
}

// ------------------------------------------------------------------ any, all

TEST(TorchAnyAll, BoolAndFloat) {
  check_op(kFile, "any_all", un([](T x) { return x.any(); }), kExact);
  check_op(kFile, "any_neg1", un([](T x) { return x.any(-1); }), kExact);
  check_op(kFile, "any_a0_keep", un([](T x) { return x.any(0, true); }), kExact);
  check_op(kFile, "any_float", un([](T x) { return x.any(1); }), kExact);
  check_op(kFile, "all_all", un([](T x) { return x.all(); }), kExact);
  check_op(kFile, "all_neg1", un([](T x) { return x.all(-1); }), kExact);
  check_op(kFile, "all_a0_keep", un([](T x) { return x.all(0, true); }), kExact);
  check_op(kFile, "all_float", un([](T x) { return x.all(1); }), kExact);
}

// ------------------------------------------------------------------ softmax family

TEST(TorchSoftmax, Softmax) {
  check_op(kFile, "softmax_neg1", un([](T x) { return x.softmax(); }), kMath, kMath);
  check_op(kFile, "softmax_a0", un([](T x) { return x.softmax(0); }), kMath, kMath);
  check_op(kFile, "softmax_3d", un([](T x) { return x.softmax(1); }), kMath, kMath);
  check_op(kFile, "softmax_f64", un([](T x) { return x.softmax(-1, dt::float64); }), kMath, kMath);
}

TEST(TorchSoftmax, LogSoftmax) {
  check_op(kFile, "log_softmax_neg1", un([](T x) { return x.log_softmax(); }), kMath, kMath);
  check_op(kFile, "log_softmax_a0", un([](T x) { return x.log_softmax(0); }), kMath, kMath);
  check_op(kFile, "log_softmax_3d_t", un([](T x) {
             return x.permute({1, 2, 0}).log_softmax(-2);
           }),
           kMath, kMath);
}

TEST(TorchSoftmax, Logsumexp) {
  check_op(kFile, "logsumexp_neg1", un([](T x) { return x.logsumexp(-1); }), kMath, kMath);
  check_op(kFile, "logsumexp_a0_keep", un([](T x) { return x.logsumexp(0, true); }), kMath, kMath);
  check_op(kFile, "logsumexp_all", un([](T x) { return x.logsumexp(); }), kMath, kMath);
  check_op(kFile, "logsumexp_a02", un([](T x) { return x.logsumexp({0, 2}); }), kMath, kMath);
}

// ------------------------------------------------------------------ argmax, argmin

TEST(TorchArg, ArgmaxArgmin) {
  // int32 in tinygrad (torch: int64): values only
  struct C {
    const char* name;
    std::function<Tensor(T, std::optional<int>, bool)> op;
  };
  for (const C& c :
       {C{"argmax", [](T x, std::optional<int> a, bool k) { return x.argmax(a, k); }},
        C{"argmin", [](T x, std::optional<int> a, bool k) { return x.argmin(a, k); }}}) {
    std::string n = c.name;
    check_op(kFile, n + "_flat", un([&](T x) { return c.op(x, {}, false); }), kExact, {}, false);
    check_op(kFile, n + "_neg1", un([&](T x) { return c.op(x, -1, false); }), kExact, {}, false);
    check_op(kFile, n + "_a1_keep", un([&](T x) { return c.op(x, 1, true); }), kExact, {}, false);
    check_op(kFile, n + "_ties", un([&](T x) { return c.op(x, -1, false); }), kExact, {}, false);
    check_op(kFile, n + "_ties_flat", un([&](T x) { return c.op(x, {}, false); }), kExact, {},
             false);
    check_op(kFile, n + "_permuted", un([&](T x) {
               return c.op(x.permute({1, 2, 0}), 0, false);
             }),
             kExact, {}, false);
    EXPECT_EQ(c.op(tcfix::fixture(kFile, n + "_flat")["in0"].tensor(), {}, false).dtype(),
              dt::int32);
  }
}

// ------------------------------------------------------------------ cumsum, cummax

TEST(TorchScan, Cumsum) {
  check_op(kFile, "cumsum_a0", un([](T x) { return x.cumsum(0); }), kSum, kSum);
  check_op(kFile, "cumsum_neg1", un([](T x) { return x.cumsum(-1); }), kSum, kSum);
  check_op(kFile, "cumsum_a1", un([](T x) { return x.cumsum(1); }), kSum, kSum);
  check_op(kFile, "cumsum_permuted", un([](T x) {
             return x.permute({1, 2, 0}).cumsum(2);
           }),
           kSum, kSum);
  check_op(kFile, "cumsum_int", un([](T x) { return x.cumsum(1); }), kExact, {}, false);
  check_op(kFile, "cumsum_long", un([](T x) { return x.cumsum(0); }), kSum, kSum);
}

TEST(TorchScan, Cummax) {
  check_op(kFile, "cummax_a0", un([](T x) { return x.cummax(0); }), kExact, kExact);
  check_op(kFile, "cummax_neg1", un([](T x) { return x.cummax(-1); }), kExact, kExact);
  check_op(kFile, "cummax_a1", un([](T x) { return x.cummax(1); }), kExact, kExact);
  check_op(kFile, "cummax_int", un([](T x) { return x.cummax(-1); }), kExact);
}

// ------------------------------------------------------------------ products

TEST(TorchProducts, DotMatmul) {
  auto mm = bin([](T a, T b) { return a.matmul(b); });
  check_op(kFile, "dot_1d", bin([](T a, T b) { return a.dot(b); }), kSum, kSum);
  check_op(kFile, "matmul_2d", mm, kSum, kSum);
  check_op(kFile, "matmul_batched", mm, kSum, kSum);
  check_op(kFile, "matmul_batch_broadcast", mm, kSum, kSum);
  check_op(kFile, "matmul_vec_mat", mm, kSum, kSum);
  check_op(kFile, "matmul_mat_vec", mm, kSum, kSum);
  check_op(kFile, "matmul_transposed",
           bin([](T a, T b) { return a.transpose().matmul(b.transpose()); }), kSum, kSum);
  check_op(kFile, "matmul_int", mm, kExact);
  // reverse: b.matmul(a, true) is a @ b
  check_op(kFile, "matmul_2d", bin([](T a, T b) { return b.matmul(a, true); }), kSum, kSum);
}

TEST(TorchProducts, Linear) {
  check_op(
      kFile, "linear", [](const Ts& x) { return Ts{x[0].linear(x[1], x[2])}; }, kSum, kSum);
  check_op(kFile, "linear_nobias", bin([](T x, T w) { return x.linear(w); }), kSum, kSum);
  check_op(
      kFile, "linear_1d_weight", [](const Ts& x) { return Ts{x[0].linear(x[1], x[2])}; }, kSum,
      kSum);
}

}  // namespace
