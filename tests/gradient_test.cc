// Autograd's rules: every differentiable op's gradient against central finite differences in
// float64, and some against the known closed form. (The Tensor API around them: autograd_test.cc.)
#include "tinycore/gradient.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tests/tensor/gradcheck.h"
#include "tinycore/error.h"
#include "tinycore/tensor.h"

namespace {

using tc::Tensor;
using ::testing::HasSubstr;
namespace dt = tc::dtypes;
using S = std::vector<int64_t>;
using V = std::vector<double>;

using tcgrad::binary;
using tcgrad::check_grad;
using tcgrad::Fn;
using tcgrad::Input;
using tcgrad::mixed;
using tcgrad::ramp;
using tcgrad::unary;

using tcgrad::expect_near_all;
using tcgrad::f64;
using tcgrad::matmul_by_sum;

// ================================================================== unary ops

TEST(GradUnary, Neg) {
  check_grad(unary([](auto& x) { return x.neg(); }), {{{2, 3}, mixed(6)}});
}
TEST(GradUnary, Reciprocal) {
  check_grad(unary([](auto& x) { return x.reciprocal(); }), {{{2, 3}, mixed(6)}});
}
TEST(GradUnary, Sqrt) {
  check_grad(unary([](auto& x) { return x.sqrt(); }), {{{5}, ramp(5)}});
}
TEST(GradUnary, Rsqrt) {
  check_grad(unary([](auto& x) { return x.rsqrt(); }), {{{5}, ramp(5)}});
}
TEST(GradUnary, Exp) {
  check_grad(unary([](auto& x) { return x.exp(); }), {{{2, 3}, mixed(6)}});
}
TEST(GradUnary, Exp2) {
  check_grad(unary([](auto& x) { return x.exp2(); }), {{{6}, mixed(6)}});
}
TEST(GradUnary, Log) {
  check_grad(unary([](auto& x) { return x.log(); }), {{{2, 2}, ramp(4)}});
}
TEST(GradUnary, Log2) {
  check_grad(unary([](auto& x) { return x.log2(); }), {{{4}, ramp(4)}});
}
TEST(GradUnary, Sin) {
  check_grad(unary([](auto& x) { return x.sin(); }), {{{2, 3}, mixed(6)}});
}
TEST(GradUnary, Cos) {
  check_grad(unary([](auto& x) { return x.cos(); }), {{{2, 3}, mixed(6)}});
}
TEST(GradUnary, Relu) {
  check_grad(unary([](auto& x) { return x.relu(); }), {{{2, 3}, mixed(6)}});
}
TEST(GradUnary, Sigmoid) {
  check_grad(unary([](auto& x) { return x.sigmoid(); }), {{{2, 3}, mixed(6)}});
}
TEST(GradUnary, Abs) {
  check_grad(unary([](auto& x) { return x.abs(); }), {{{2, 3}, mixed(6)}});
}
TEST(GradUnary, Square) {
  check_grad(unary([](auto& x) { return x.square(); }), {{{2, 3}, mixed(6)}});
}
TEST(GradUnary, Contiguous) {
  check_grad(unary([](auto& x) {
               return x.permute({1, 0}).contiguous().mul(x.permute({1, 0}));
             }),
             {{{2, 3}, mixed(6)}});
}

TEST(GradUnary, ClosedForms) {
  V xv = ramp(4);
  Tensor x = f64(xv, {4}).requires_grad_();
  // d/dx sum(x^2 + 3x) = 2x + 3; d/dx sum(exp x) = exp x; d/dx sum(log x) = 1/x
  std::vector<Tensor> g = x.square().add(x.mul(3.0)).sum().gradient({x});
  std::vector<Tensor> ge = x.exp().sum().gradient({x});
  std::vector<Tensor> gl = x.log().sum().gradient({x});
  V want, want_e, want_l;
  for (double v : xv) {
    want.push_back(2 * v + 3);
    want_e.push_back(std::exp(v));
    want_l.push_back(1 / v);
  }
  expect_near_all(g[0].data<double>(), want, "x^2 + 3x");
  expect_near_all(ge[0].data<double>(), want_e, "exp");
  expect_near_all(gl[0].data<double>(), want_l, "log");
}

// The gradient of a sum is a where(x >= 0, k, 0) of float constants, which an integer rule of
// the simplifier read as ints (tinygrad's test_selu: "std::get: wrong index for variant").
TEST(GradUnary, SeluOfASumInFloat32AndFloat64) {
  const double alpha = 1.67326, scale = 1.0507;
  V xv = {1.0, -2.0, 3.0, -0.5, 0.0, 2.5};
  V want;
  for (double v : xv) want.push_back(v >= 0 ? scale : scale * alpha * std::exp(v));  // x >= 0: x
  for (tc::DType dtype : {dt::float32, dt::float64}) {
    Tensor x = f64(xv, {2, 3}).cast(dtype).realize().requires_grad_();
    Tensor g = x.selu().sum().gradient({x})[0].cast(dt::float64);
    tcgrad::detail::expect_near_all(g.data<double>(), want, dtype == dt::float32 ? 1e-6 : 1e-12,
                                    "selu in " + std::string(dtype.name()));
  }
}

TEST(GradUnary, TruncAndComparisonsHaveNoGradient) {
  Tensor x = f64({0.5, 1.5, -2.5}, {3}).requires_grad_();
  Tensor loss = x.trunc().add(x.gt(0.0).cast(dt::float64)).sum();
  loss.backward();
  ASSERT_TRUE(x.grad().has_value());
  EXPECT_EQ(x.grad()->data<double>(), (V{0, 0, 0}));
}

// ================================================================== binary ops

struct BinCase {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
};

class GradBinary : public ::testing::TestWithParam<BinCase> {};

TEST_P(GradBinary, SameShape) {
  check_grad(binary(GetParam().op), {{{2, 3}, mixed(6)}, {{2, 3}, ramp(6, -1.1, 0.47)}});
}
TEST_P(GradBinary, BroadcastRow) {
  check_grad(binary(GetParam().op), {{{2, 3}, mixed(6)}, {{3}, ramp(3, 0.6, 0.5)}});
}
TEST_P(GradBinary, BroadcastBoth) {
  check_grad(binary(GetParam().op), {{{2, 1}, V{0.7, -1.3}}, {{1, 3}, V{-0.45, 1.9, 0.2}}});
}
TEST_P(GradBinary, ScalarTensor) {
  check_grad(binary(GetParam().op), {{{2, 3}, mixed(6)}, {{}, V{0.65}}});
}

INSTANTIATE_TEST_SUITE_P(
    Ops, GradBinary,
    ::testing::Values(BinCase{"add", [](auto& a, auto& b) { return a.add(b); }},
                      BinCase{"sub", [](auto& a, auto& b) { return a.sub(b); }},
                      BinCase{"mul", [](auto& a, auto& b) { return a.mul(b); }},
                      BinCase{"div", [](auto& a, auto& b) { return a.div(b); }},
                      BinCase{"maximum", [](auto& a, auto& b) { return a.maximum(b); }},
                      BinCase{"minimum", [](auto& a, auto& b) { return a.minimum(b); }}),
    [](const ::testing::TestParamInfo<BinCase>& i) { return std::string(i.param.name); });

TEST(GradBinaryConst, WithPythonScalars) {
  check_grad(unary([](auto& x) { return x.mul(2.5).sub(1.0).div(3.0); }), {{{4}, mixed(4)}});
  check_grad(unary([](auto& x) { return tc::operator/(2.0, x).add(1.0); }), {{{4}, mixed(4)}});
  check_grad(unary([](auto& x) { return tc::operator-(1.0, x).maximum(0.1); }), {{{4}, mixed(4)}});
}

TEST(GradBinaryConst, SameTensorBothSides) {
  check_grad(unary([](auto& x) { return x.mul(x).add(x).div(x.add(5.0)); }), {{{3}, mixed(3)}});
}

TEST(GradBinaryClosedForm, MaximumTieSplitsInHalf) {
  Tensor a = f64({1, 2, 5}, {3}).requires_grad_();
  Tensor b = f64({1, 3, 4}, {3}).requires_grad_();
  a.maximum(b).sum().backward();
  EXPECT_EQ(a.grad()->data<double>(), (V{0.5, 0, 1}));
  EXPECT_EQ(b.grad()->data<double>(), (V{0.5, 1, 0}));
  Tensor c = f64({1, 2, 5}, {3}).requires_grad_();
  c.minimum(f64({1, 3, 4}, {3})).sum().backward();
  EXPECT_EQ(c.grad()->data<double>(), (V{0.5, 1, 0}));
}

TEST(GradBinaryClosedForm, MulAndDiv) {
  Tensor a = f64({1, 2, 3}, {3}).requires_grad_();
  Tensor b = f64({4, 5, 8}, {3}).requires_grad_();
  a.div(b).sum().backward();
  expect_near_all(a.grad()->data<double>(), {0.25, 0.2, 0.125}, "d(a/b)/da");
  expect_near_all(b.grad()->data<double>(), {-1.0 / 16, -2.0 / 25, -3.0 / 64}, "d(a/b)/db");
}

// ================================================================== where, cast

TEST(GradWhere, ToBranchesOnly) {
  check_grad([](const std::vector<Tensor>& x) { return x[0].gt(x[2]).where(x[0].mul(x[1]), x[1]); },
             {{{2, 3}, mixed(6)}, {{2, 3}, ramp(6, -0.9, 0.33)}, {{3}, V{0.1, -0.2, 0.3}}});
  // broadcast branch and a constant branch
  check_grad([](const std::vector<Tensor>& x) { return x[0].lt(0.0).where(x[1], 2.0); },
             {{{2, 3}, mixed(6)}, {{3}, V{0.4, 0.5, 0.6}}});
}

TEST(GradWhere, ClosedForm) {
  Tensor c = Tensor::from_vector<bool>({true, false, true}, S{3});
  Tensor x = f64({1, 2, 3}, {3}).requires_grad_();
  Tensor y = f64({4, 5, 6}, {3}).requires_grad_();
  c.where(x, y).mul(f64({10, 20, 30}, {3})).sum().backward();
  EXPECT_EQ(x.grad()->data<double>(), (V{10, 0, 30}));
  EXPECT_EQ(y.grad()->data<double>(), (V{0, 20, 0}));
}

TEST(GradCast, GradientHasTheSourceDtype) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3}, S{3}).requires_grad_();
  Tensor y = f64({1, 2, 3}, {3}).requires_grad_();
  x.cast(dt::float64).mul(y).sum().backward();
  ASSERT_TRUE(x.grad().has_value());
  EXPECT_EQ(x.grad()->dtype(), dt::float32);
  EXPECT_EQ(x.grad()->data<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(y.grad()->dtype(), dt::float64);
  EXPECT_EQ(y.grad()->data<double>(), (V{1, 2, 3}));
}

TEST(GradCast, ThroughFloat32AndBack) {
  Tensor x = f64({0.5, -1.5}, {2}).requires_grad_();
  x.cast(dt::float32).square().cast(dt::float64).sum().backward();
  expect_near_all(x.grad()->data<double>(), {1.0, -3.0}, "d/dx x^2 through float32");
}

// ================================================================== movement

TEST(GradMovement, Reshape) {
  check_grad(unary([](auto& x) {
               return x.reshape({3, 2}).mul(x.reshape({3, 2}).exp());
             }),
             {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.reshape({-1}); }), {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.reshape({}); }), {{{1, 1}, V{0.7}}});
}
TEST(GradMovement, Permute) {
  check_grad(unary([](auto& x) { return x.permute({2, 0, 1}); }), {{{2, 3, 2}, mixed(12)}});
  check_grad(unary([](auto& x) { return x.transpose(); }), {{{2, 3}, mixed(6)}});
}
TEST(GradMovement, Expand) {
  check_grad(unary([](auto& x) { return x.expand({2, 3, 4}); }), {{{3, 1}, mixed(3)}});
  check_grad(unary([](auto& x) {
               return x.reshape({1, 3}).expand({4, 3}).square();
             }),
             {{{3}, mixed(3)}});
}
TEST(GradMovement, Pad) {
  check_grad(unary([](auto& x) { return x.pad({{1, 2}, {0, 1}}); }), {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) {
               return x.pad({{1, 0}, {2, 1}}, 1.5).exp();
             }),
             {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.pad({{-1, 1}, {1, -1}}); }), {{{2, 3}, mixed(6)}});
}
TEST(GradMovement, Shrink) {
  check_grad(unary([](auto& x) { return x.shrink({{1, 3}, {0, 2}}); }), {{{3, 3}, mixed(9)}});
}
TEST(GradMovement, Flip) {
  check_grad(unary([](auto& x) { return x.flip({0}).mul(x); }), {{{3, 2}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.flip({0, 1}); }), {{{3, 2}, mixed(6)}});
}
TEST(GradMovement, FlattenAndChains) {
  check_grad(
      unary([](auto& x) {
        return x.permute({1, 0}).pad({{1, 1}, {0, 0}}).flip({1}).shrink({{0, 3}, {1, 2}}).flatten();
      }),
      {{{2, 3}, mixed(6)}});
}
TEST(GradMovement, ClosedForms) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  Tensor w = f64({1, 10, 100}, {3});
  // shrink: only the kept elements get a gradient
  x.shrink({{0, 2}, {1, 3}}).sum().backward();
  EXPECT_EQ(x.grad()->data<double>(), (V{0, 1, 1, 0, 1, 1}));
  // expand: the gradient sums the copies
  Tensor y = f64({1, 2, 3}, {3}).requires_grad_();
  y.reshape({1, 3}).expand({4, 3}).mul(w).sum().backward();
  EXPECT_EQ(y.grad()->data<double>(), (V{4, 40, 400}));
  // flip: the gradient is flipped back
  Tensor z = f64({1, 2, 3}, {3}).requires_grad_();
  z.flip({0}).mul(w).sum().backward();
  EXPECT_EQ(z.grad()->data<double>(), (V{100, 10, 1}));
}

// ================================================================== reductions

TEST(GradReduce, Sum) {
  for (bool keepdim : {false, true}) {
    check_grad(unary([keepdim](auto& x) { return x.sum(1, keepdim); }), {{{2, 3, 2}, mixed(12)}});
    check_grad(unary([keepdim](auto& x) {
                 return x.sum({0, 2}, keepdim);
               }),
               {{{2, 3, 2}, mixed(12)}});
    check_grad(unary([keepdim](auto& x) { return x.sum({}, keepdim); }), {{{2, 3}, mixed(6)}});
  }
  check_grad(unary([](auto& x) { return x.sum(-1).square(); }), {{{2, 3}, mixed(6)}});
}
TEST(GradReduce, Max) {
  for (bool keepdim : {false, true}) {
    check_grad(unary([keepdim](auto& x) { return x.max(1, keepdim); }), {{{2, 3, 2}, mixed(12)}});
    check_grad(unary([keepdim](auto& x) {
                 return x.max({0, 2}, keepdim);
               }),
               {{{2, 3, 2}, mixed(12)}});
    check_grad(unary([keepdim](auto& x) { return x.max({}, keepdim); }), {{{2, 3}, mixed(6)}});
    check_grad(unary([keepdim](auto& x) { return x.min(0, keepdim); }), {{{2, 3}, mixed(6)}});
  }
}
TEST(GradReduce, MaxTiesShareTheGradient) {
  Tensor x = f64({1, 3, 3, 2, 7, 7, 7, 0}, {2, 4}).requires_grad_();
  x.max(1).mul(f64({1, 6}, {2})).sum().backward();
  EXPECT_EQ(x.grad()->data<double>(), (V{0, 0.5, 0.5, 0, 2, 2, 2, 0}));
}
TEST(GradReduce, SumClosedForm) {
  Tensor x = f64(mixed(6), {2, 3}).requires_grad_();
  x.sum(0).mul(f64({1, 2, 3}, {3})).sum().backward();
  EXPECT_EQ(x.grad()->data<double>(), (V{1, 2, 3, 1, 2, 3}));
}

// ================================================================== more elementwise math

// x scaled so that values span the interesting part of an activation (no kinks within 1e-6)
V spread(int64_t n, double scale) {
  V v = mixed(n);
  for (double& x : v) x *= scale;
  return v;
}

struct UnaryGrad {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  V values;
};

class GradMath : public ::testing::TestWithParam<UnaryGrad> {};

TEST_P(GradMath, CentralDifferences) {
  const UnaryGrad& p = GetParam();
  int64_t n = static_cast<int64_t>(p.values.size());
  check_grad(unary(p.op), {{{2, n / 2}, p.values}});
}

INSTANTIATE_TEST_SUITE_P(
    Ops, GradMath,
    ::testing::Values(
        UnaryGrad{"tan", [](auto& x) { return x.tan(); }, mixed(6)},
        UnaryGrad{"tanh", [](auto& x) { return x.tanh(); }, spread(6, 1.5)},
        UnaryGrad{"sinh", [](auto& x) { return x.sinh(); }, mixed(6)},
        UnaryGrad{"cosh", [](auto& x) { return x.cosh(); }, mixed(6)},
        // piecewise constant: zero gradient (as the central differences away from the steps)
        UnaryGrad{"sign", [](auto& x) { return x.sign(); }, mixed(6)},
        UnaryGrad{"ceil", [](auto& x) { return x.ceil(); }, mixed(6)},
        UnaryGrad{"floor", [](auto& x) { return x.floor(); }, mixed(6)},
        UnaryGrad{"round", [](auto& x) { return x.round(); }, spread(6, 1.1)},
        UnaryGrad{"gelu", [](auto& x) { return x.gelu(); }, spread(8, 1.3)},
        UnaryGrad{"quick_gelu", [](auto& x) { return x.quick_gelu(); }, spread(8, 1.3)},
        UnaryGrad{"silu", [](auto& x) { return x.silu(); }, spread(8, 1.3)},
        UnaryGrad{"swish", [](auto& x) { return x.swish(); }, spread(8, 1.3)},
        UnaryGrad{"relu6", [](auto& x) { return x.relu6(); }, spread(8, 3.1)},
        UnaryGrad{"hardsigmoid", [](auto& x) { return x.hardsigmoid(); }, spread(8, 1.9)},
        UnaryGrad{"hardsigmoid_args", [](auto& x) { return x.hardsigmoid(0.3, 0.4); },
                  spread(8, 1.9)},
        UnaryGrad{"hardswish", [](auto& x) { return x.hardswish(); }, spread(8, 1.9)},
        UnaryGrad{"hardtanh", [](auto& x) { return x.hardtanh(); }, spread(8, 0.7)},
        UnaryGrad{"hardtanh_args", [](auto& x) { return x.hardtanh(-2.0, 0.5); }, spread(8, 1.1)},
        UnaryGrad{"elu", [](auto& x) { return x.elu(); }, spread(8, 0.9)},
        UnaryGrad{"elu_alpha", [](auto& x) { return x.elu(0.3); }, spread(8, 0.9)},
        UnaryGrad{"celu", [](auto& x) { return x.celu(); }, spread(8, 0.9)},
        UnaryGrad{"celu_alpha", [](auto& x) { return x.celu(2.5); }, spread(8, 0.9)},
        UnaryGrad{"selu", [](auto& x) { return x.selu(); }, spread(8, 0.9)},
        UnaryGrad{"leaky_relu", [](auto& x) { return x.leaky_relu(); }, mixed(8)},
        UnaryGrad{"leaky_relu_slope", [](auto& x) { return x.leaky_relu(0.3); }, mixed(8)},
        UnaryGrad{"softplus", [](auto& x) { return x.softplus(); }, spread(8, 1.5)},
        UnaryGrad{"softplus_beta", [](auto& x) { return x.softplus(0.5); }, spread(8, 1.5)},
        UnaryGrad{"softsign", [](auto& x) { return x.softsign(); }, spread(8, 1.5)},
        UnaryGrad{"mish", [](auto& x) { return x.mish(); }, spread(8, 1.5)},
        UnaryGrad{"clamp", [](auto& x) { return x.clamp(-0.6, 1.0); }, mixed(8)},
        UnaryGrad{"clamp_min", [](auto& x) { return x.clamp(-0.6); }, mixed(8)},
        UnaryGrad{"clamp_max", [](auto& x) { return x.clamp({}, 0.5); }, mixed(8)},
        UnaryGrad{"clip", [](auto& x) { return x.clip(-1.0, 0.5); }, mixed(8)},
        UnaryGrad{"pow_const_2", [](auto& x) { return x.pow(2.0); }, mixed(6)},
        UnaryGrad{"pow_const_3_negative_base", [](auto& x) { return x.pow(3.0); }, mixed(6)},
        UnaryGrad{"pow_const_int", [](auto& x) { return x.pow(4); }, mixed(6)},
        UnaryGrad{"pow_const_frac", [](auto& x) { return x.pow(1.7); }, ramp(6)},
        UnaryGrad{"pow_const_neg", [](auto& x) { return x.pow(-0.5); }, ramp(6)},
        UnaryGrad{"pow_reverse", [](auto& x) { return x.pow(1.8, true); }, mixed(6)},
        UnaryGrad{"copysign_const", [](auto& x) { return x.copysign(-2.0); }, mixed(6)},
        UnaryGrad{"lerp_const_weight", [](auto& x) { return x.lerp(x.square(), 0.3); }, mixed(6)}),
    [](const ::testing::TestParamInfo<UnaryGrad>& i) { return std::string(i.param.name); });

TEST(GradMath, Relu6AboveTheCap) {
  check_grad(unary([](auto& x) { return x.relu6(); }), {{{4}, V{-1.0, 2.0, 6.5, 8.0}}});
}

TEST(GradMath, PowTensorExponent) {
  // positive base, any exponent; broadcast exponent; a negative base with integer exponents
  check_grad(binary([](auto& b, auto& e) { return b.pow(e); }),
             {{{2, 3}, ramp(6)}, {{2, 3}, mixed(6)}});
  check_grad(binary([](auto& b, auto& e) { return b.pow(e); }),
             {{{2, 3}, ramp(6, 0.5, 0.3)}, {{3}, V{1.5, -0.7, 2.2}}});
  // the exponent is also differentiated: keep it away from integers the sign fix looks at
  check_grad(unary([](auto& b) {
               return b.pow(Tensor::from_vector<double>({3, 2, 5}, S{3}));
             }),
             {{{2, 3}, mixed(6)}});
}

TEST(GradMath, Lerp) {
  check_grad([](const std::vector<Tensor>& x) { return x[0].lerp(x[1], x[2]); },
             {{{2, 3}, mixed(6)}, {{2, 3}, ramp(6, -1.0, 0.3)}, {{3}, V{0.2, 0.5, 0.9}}});
  check_grad(binary([](auto& a, auto& b) { return a.lerp(b, 0.25); }),
             {{{2, 3}, mixed(6)}, {{1, 3}, V{0.4, -0.1, 2.0}}});
}

TEST(GradMath, Copysign) {
  // only the magnitude carries a gradient; the sign source gets zeros (as torch)
  check_grad(binary([](auto& a, auto& b) { return a.copysign(b); }),
             {{{2, 3}, mixed(6)}, {{3}, V{0.4, -0.1, 2.0}}});
}

TEST(GradMath, WhereOfActivations) {
  check_grad(unary([](auto& x) { return x.gt(0.0).where(x.tanh(), x.sinh().mul(x.cosh())); }),
             {{{2, 3}, mixed(6)}});
}

// ================================================================== more reductions

TEST(GradReduce, Min) {
  for (bool keepdim : {false, true}) {
    check_grad(unary([keepdim](auto& x) { return x.min(-1, keepdim); }), {{{2, 3, 2}, mixed(12)}});
    check_grad(unary([keepdim](auto& x) {
                 return x.min({0, 2}, keepdim);
               }),
               {{{2, 3, 2}, mixed(12)}});
    check_grad(unary([keepdim](auto& x) { return x.min({}, keepdim); }), {{{2, 3}, mixed(6)}});
  }
}

TEST(GradReduce, Mean) {
  for (bool keepdim : {false, true}) {
    check_grad(unary([keepdim](auto& x) { return x.mean(1, keepdim); }), {{{2, 3, 2}, mixed(12)}});
    check_grad(unary([keepdim](auto& x) {
                 return x.mean({-1, 0}, keepdim);
               }),
               {{{2, 3, 2}, mixed(12)}});
  }
  check_grad(unary([](auto& x) { return x.mean(); }), {{{2, 3}, mixed(6)}});
}

TEST(GradReduce, VarStd) {
  for (double c : {0.0, 1.0, 2.0}) {
    check_grad(unary([c](auto& x) { return x.var(1, false, c); }), {{{2, 4}, mixed(8)}});
    check_grad(unary([c](auto& x) { return x.std(-1, true, c); }), {{{2, 4}, mixed(8)}});
  }
  check_grad(unary([](auto& x) { return x.var(); }), {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.std({0, 2}); }), {{{2, 3, 2}, mixed(12)}});
}

TEST(GradReduce, VarMeanStdMean) {
  check_grad(unary([](auto& x) {
               auto [v, m] = x.var_mean(1);
               return v.add(m.mul(3.0));
             }),
             {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) {
               auto [s, m] = x.std_mean(0, true, 0);
               return s.mul(m);
             }),
             {{{3, 2}, mixed(6)}});
}

TEST(GradReduce, SoftmaxFamily) {
  check_grad(unary([](auto& x) { return x.softmax(); }), {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.softmax(0); }), {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.log_softmax(); }), {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.log_softmax(-2); }), {{{2, 3, 2}, mixed(12)}});
  check_grad(unary([](auto& x) { return x.logsumexp(1); }), {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.logsumexp({0, 2}, true); }), {{{2, 3, 2}, mixed(12)}});
  check_grad(unary([](auto& x) { return x.logsumexp(); }), {{{2, 3}, mixed(6)}});
}

TEST(GradReduce, Prod) {
  check_grad(unary([](auto& x) { return x.prod(1); }), {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.prod({0, 2}, true); }), {{{2, 3, 2}, mixed(12)}});
  check_grad(unary([](auto& x) { return x.prod(); }), {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.permute({1, 0}).prod(-1); }), {{{2, 3}, mixed(6)}});
}

TEST(GradReduce, ProdWithZeros) {
  // the product is a polynomial: central differences are exact at zeros too. Rows: one zero,
  // two zeros, no zero; a column reduction with a zero.
  V v = {0.0, 1.5, -2.0, 0.0, 0.0, 3.0, 0.5, -1.25, 2.0};
  check_grad(unary([](auto& x) { return x.prod(1); }), {{{3, 3}, v}});
  check_grad(unary([](auto& x) { return x.prod(0); }), {{{3, 3}, v}});
  check_grad(unary([](auto& x) { return x.prod(); }), {{{3}, V{2.0, 0.0, -3.0}}});
}

TEST(GradReduce, ProdClosedForm) {
  Tensor x = f64({2, 0, 3, 0, 0, 5, 1, 2, 4}, {3, 3}).requires_grad_();
  x.prod(1).sum().backward();
  // row 0 (one zero): only the zero gets the product of the others; row 1 (two zeros): all 0
  EXPECT_EQ(x.grad()->data<double>(), (V{0, 6, 0, 0, 0, 0, 8, 4, 2}));
}

TEST(GradReduce, Cumsum) {
  check_grad(unary([](auto& x) { return x.cumsum(0); }), {{{3, 2}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.cumsum(-1); }), {{{2, 4}, mixed(8)}});
  check_grad(unary([](auto& x) { return x.permute({1, 0}).cumsum(1); }), {{{2, 3}, mixed(6)}});
}

TEST(GradReduce, Cummax) {
  check_grad(unary([](auto& x) { return x.cummax(0); }), {{{4, 2}, mixed(8)}});
  check_grad(unary([](auto& x) { return x.cummax(-1); }), {{{2, 4}, mixed(8)}});
}

// ================================================================== more movement

TEST(GradMovement, CatStack) {
  check_grad(binary([](auto& a, auto& b) {
               return Tensor::cat(std::vector<Tensor>{a, b}, 1);
             }),
             {{{2, 3}, mixed(6)}, {{2, 1}, V{0.3, -0.8}}});
  check_grad(
      [](const std::vector<Tensor>& x) {
        return x[0].cat({x[1], x[2]}, -1);
      },
      {{{2, 1}, V{1.1, 0.2}}, {{2, 2}, mixed(4)}, {{2, 3}, ramp(6)}});
  check_grad(binary([](auto& a, auto& b) { return a.cat({b.transpose()}, 0).exp(); }),
             {{{1, 2}, V{0.3, -0.4}}, {{2, 3}, mixed(6)}});
  check_grad(binary([](auto& a, auto& b) {
               return Tensor::stack(std::vector<Tensor>{a, b}, 0);
             }),
             {{{2, 3}, mixed(6)}, {{2, 3}, ramp(6)}});
  check_grad(binary([](auto& a, auto& b) {
               return a.stack({b, a.square()}, -1);
             }),
             {{{2, 3}, mixed(6)}, {{2, 3}, ramp(6)}});
}

TEST(GradMovement, RepeatRoll) {
  check_grad(unary([](auto& x) { return x.repeat({2, 3}); }), {{{2, 2}, mixed(4)}});
  check_grad(unary([](auto& x) { return x.repeat({2, 1, 2}); }), {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.roll(1, 1); }), {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.roll({-1, 4}, {0, -1}).mul(x); }), {{{3, 3}, mixed(9)}});
}

TEST(GradMovement, PadModes) {
  for (const char* mode : {"reflect", "replicate", "circular"}) {
    std::string m = mode;
    check_grad(unary([m](auto& x) { return x.pad({{1, 2}, {2, 1}}, m); }), {{{3, 4}, mixed(12)}});
    check_grad(unary([m](auto& x) { return x.pad({{0, 0}, {0, 3}}, m); }), {{{2, 4}, mixed(8)}});
  }
  // negative entries cut after reflecting or replicating, before wrapping around (only the
  // replicated edge is left of the second)
  check_grad(unary([](auto& x) {
               return x.pad({{1, -3}, {2, -1}}, "reflect");
             }),
             {{{4, 5}, mixed(20)}});
  check_grad(unary([](auto& x) {
               return x.pad({{1, -4}, {3, -5}}, "replicate");
             }),
             {{{5, 5}, mixed(25)}});
  check_grad(unary([](auto& x) {
               return x.pad({{1, -3}, {-2, 2}}, "circular");
             }),
             {{{4, 5}, mixed(20)}});
  check_grad(unary([](auto& x) {
               return x.pad({{1, 0}, {0, 2}}, "constant", 2.0);
             }),
             {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.pad_to({3, 5}); }), {{{2, 3}, mixed(6)}});
}

TEST(GradMovement, Triangles) {
  for (int64_t d : {-1, 0, 1}) {
    check_grad(unary([d](auto& x) { return x.triu(d); }), {{{3, 4}, mixed(12)}});
    check_grad(unary([d](auto& x) { return x.tril(d); }), {{{2, 3, 2}, mixed(12)}});
  }
}

TEST(GradMovement, ShapeHelpers) {
  check_grad(unary([](auto& x) {
               return x.unsqueeze(1).squeeze().unflatten(1, {3, 1});
             }),
             {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) { return x.flatten(0, 1).transpose(0, 1); }),
             {{{2, 3, 2}, mixed(12)}});
  check_grad(unary([](auto& x) { return x.t().mul(x.T()); }), {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) {
               std::vector<Tensor> p = x.split(std::vector<int64_t>{1, 2}, 1);
               return p[0].mul(p[1].sum(1, true));
             }),
             {{{2, 3}, mixed(6)}});
  check_grad(unary([](auto& x) {
               std::vector<Tensor> p = x.chunk(2, 0);
               return p[0].sub(p[1].square());
             }),
             {{{4, 2}, mixed(8)}});
  check_grad(binary([](auto& a, auto& b) {
               std::vector<Tensor> g = Tensor::meshgrid({a, b}, "xy");
               return g[0].mul(g[1]);
             }),
             {{{3}, mixed(3)}, {{2}, V{0.7, -1.2}}});
}

// ================================================================== products

TEST(GradProducts, DotMatmulLinear) {
  check_grad(binary([](auto& a, auto& b) { return a.dot(b); }), {{{4}, mixed(4)}, {{4}, ramp(4)}});
  check_grad(binary([](auto& a, auto& b) { return a.matmul(b); }),
             {{{2, 3}, mixed(6)}, {{3, 2}, ramp(6, -0.5, 0.3)}});
  check_grad(binary([](auto& a, auto& b) { return a.matmul(b); }),
             {{{2, 2, 3}, mixed(12)}, {{3, 2}, ramp(6, -0.5, 0.3)}});
  check_grad(binary([](auto& a, auto& b) { return a.matmul(b); }),
             {{{3}, mixed(3)}, {{3, 2}, ramp(6, -0.5, 0.3)}});
  check_grad(binary([](auto& a, auto& b) { return a.transpose().matmul(b, true); }),
             {{{3, 2}, mixed(6)}, {{2, 2}, ramp(4, -0.5, 0.3)}});
  check_grad([](const std::vector<Tensor>& x) { return x[0].linear(x[1], x[2]); },
             {{{2, 3}, mixed(6)}, {{3, 2}, ramp(6, -0.5, 0.3)}, {{2}, V{0.1, -0.2}}});
  check_grad([](const std::vector<Tensor>& x) { return x[0].linear(x[1], x[2]); },
             {{{2, 3}, mixed(6)}, {{3}, ramp(3)}, {{3}, V{0.1, -0.2, 0.3}}});
  check_grad(binary([](auto& x, auto& w) {
               return x.sequential({[&w](const Tensor& h) { return h.linear(w).tanh(); },
                                    [](const Tensor& h) { return h.sum(-1); }});
             }),
             {{{2, 3}, mixed(6)}, {{3, 3}, ramp(9, -0.8, 0.2)}});
}

// ================================================================== chains

TEST(GradChain, MlpLoss) {
  check_grad(
      [](const std::vector<Tensor>& p) {
        return matmul_by_sum(matmul_by_sum(p[0], p[1]).relu(), p[2]).sum();
      },
      {{{4, 3}, mixed(12)}, {{3, 5}, ramp(15, -1.0, 0.137)}, {{5, 2}, ramp(10, 0.9, -0.19)}});
}
TEST(GradChain, MlpWithBiasSigmoidAndMse) {
  check_grad(
      [](const std::vector<Tensor>& p) {
        Tensor h = matmul_by_sum(p[0], p[1]).add(p[2]).sigmoid();
        Tensor y = matmul_by_sum(h, p[3]);
        return y.sub(f64({1, 0, 0, 1, 0.5, 0.5}, {3, 2})).square().sum().div(6.0);
      },
      {{{3, 2}, mixed(6)},
       {{2, 4}, ramp(8, -0.8, 0.23)},
       {{4}, V{0.1, -0.1, 0.2, 0.05}},
       {{4, 2}, ramp(8, 0.7, -0.17)}});
}
TEST(GradChain, LogSoftmaxCrossEntropy) {
  check_grad(
      [](const std::vector<Tensor>& p) {
        const Tensor& x = p[0];
        Tensor m = x.max(1, true);
        Tensor lse = x.sub(m).exp().sum(1, true).log().add(m);
        Tensor logp = x.sub(lse);
        Tensor onehot = f64({0, 1, 0, 1, 0, 0}, {2, 3});
        return logp.mul(onehot).sum().neg();
      },
      {{{2, 3}, mixed(6)}});
}
TEST(GradChain, RealizedIntermediate) {
  // a contiguous() in the middle splits the forward into two kernels; gradients flow through
  check_grad(unary([](auto& x) { return x.exp().contiguous().mul(x).sum(0); }),
             {{{2, 3}, mixed(6)}});
}

}  // namespace
