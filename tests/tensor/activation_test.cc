// The activations and extra elementwise ops of tinycore/tensor/activation.cc and math.cc (sign,
// isclose, clamp, lerp, pow ...) against a naive double-precision reference
// (tests/tensor/reference.h), also on non-contiguous views, with special values and integer inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tests/tensor/reference.h"
#include "tinycore/dtype.h"
#include "tinycore/error.h"
#include "tinycore/tensor.h"

namespace {

namespace ref = tcref;
namespace dt = tc::dtypes;
using ref::NDArray;
using tc::Tensor;

using ref::kF32, ref::kTrans, ref::kInf, ref::kNaN, ref::vals;

// x (with a non-contiguous view of it) against f applied to the reference.
void check_unary(const char* name, const std::function<Tensor(const Tensor&)>& op,
                 const std::function<double(double)>& f, double rtol, double atol, double lo = -4,
                 double hi = 4) {
  NDArray a = ref::random({3, 5}, 21, lo, hi);
  Tensor t = ref::tensor(a);
  ref::expect_close(op(t), ref::map(a, f), rtol, atol, name);
  NDArray va = ref::flip(ref::transpose(a, 0, 1), {1});
  ref::expect_close(op(t.transpose().flip({1})), ref::map(va, f), rtol, atol,
                    std::string(name) + " view");
  EXPECT_EQ(op(t).dtype(), dt::float32) << name;
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double softplus(double x, double beta = 1) { return std::log1p(std::exp(beta * x)) / beta; }

TEST(Activation2, Hyperbolic) {
  check_unary(
      "tanh", [](const Tensor& t) { return t.tanh(); }, [](double x) { return std::tanh(x); },
      kTrans, 1e-6);
  check_unary(
      "sinh", [](const Tensor& t) { return t.sinh(); }, [](double x) { return std::sinh(x); },
      kTrans, 1e-5);
  check_unary(
      "cosh", [](const Tensor& t) { return t.cosh(); }, [](double x) { return std::cosh(x); },
      kTrans, 1e-5);
  check_unary(
      "tan", [](const Tensor& t) { return t.tan(); }, [](double x) { return std::tan(x); }, kTrans,
      1e-5, -1.4, 1.4);
  ref::expect_close(ref::tensor(vals({4}, {kInf, -kInf, 50, -50})).tanh(),
                    vals({4}, {1, -1, 1, -1}), kF32);
  ref::expect_exact(ref::tensor(vals({3}, {0, 1, -2}), dt::int32).tanh().isnan(),
                    vals({3}, {0, 0, 0}));
  EXPECT_EQ(ref::tensor(vals({3}, {0, 1, -2}), dt::int32).tanh().dtype(), dt::float32);
}

TEST(Activation2, Smooth) {
  const double c = std::sqrt(2 / M_PI);
  check_unary(
      "gelu", [](const Tensor& t) { return t.gelu(); },
      [c](double x) { return 0.5 * x * (1 + std::tanh(c * (x + 0.044715 * x * x * x))); }, kTrans,
      1e-5);
  check_unary(
      "quick_gelu", [](const Tensor& t) { return t.quick_gelu(); },
      [](double x) { return x * sigmoid(1.702 * x); }, kTrans, 1e-6);
  check_unary(
      "silu", [](const Tensor& t) { return t.silu(); }, [](double x) { return x * sigmoid(x); },
      kTrans, 1e-6);
  check_unary(
      "swish", [](const Tensor& t) { return t.swish(); }, [](double x) { return x * sigmoid(x); },
      kTrans, 1e-6);
  check_unary(
      "elu", [](const Tensor& t) { return t.elu(); },
      [](double x) { return x > 0 ? x : std::exp(x) - 1; }, kTrans, 1e-6);
  check_unary(
      "elu 0.5", [](const Tensor& t) { return t.elu(0.5); },
      [](double x) { return x > 0 ? x : 0.5 * (std::exp(x) - 1); }, kTrans, 1e-6);
  check_unary(
      "celu 2", [](const Tensor& t) { return t.celu(2.0); },
      [](double x) { return std::max(0.0, x) + std::min(0.0, 2 * (std::exp(x / 2) - 1)); }, kTrans,
      1e-6);
  check_unary(
      "selu", [](const Tensor& t) { return t.selu(); },
      [](double x) { return 1.0507 * (x >= 0 ? x : 1.67326 * (std::exp(x) - 1)); }, kTrans, 1e-6);
  check_unary(
      "softplus", [](const Tensor& t) { return t.softplus(); },
      [](double x) { return softplus(x); }, kTrans, 1e-6);
  check_unary(
      "softplus 2", [](const Tensor& t) { return t.softplus(2); },
      [](double x) { return softplus(x, 2); }, kTrans, 1e-6);
  check_unary(
      "softsign", [](const Tensor& t) { return t.softsign(); },
      [](double x) { return x / (1 + std::fabs(x)); }, kF32, 1e-6);
  check_unary(
      "mish", [](const Tensor& t) { return t.mish(); },
      [](double x) { return x * std::tanh(softplus(x)); }, kTrans, 1e-6);
}

TEST(Activation2, GeluApproximate) {
  auto exact = [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); };
  check_unary(
      "gelu none", [](const Tensor& t) { return t.gelu("none"); }, exact, 1e-5, 1e-6);
  const double c = std::sqrt(2 / M_PI);
  check_unary(
      "gelu tanh", [](const Tensor& t) { return t.gelu("tanh"); },
      [c](double x) { return 0.5 * x * (1 + std::tanh(c * (x + 0.044715 * x * x * x))); }, kTrans,
      1e-5);
  // far tails: x itself above, 0 below (no overflow into NaN)
  for (const char* mode : {"none", "tanh"}) {
    check_unary(
        mode, [mode](const Tensor& t) { return t.gelu(mode); }, [](double x) { return x; }, 1e-6, 0,
        300, 400);
    check_unary(
        mode, [mode](const Tensor& t) { return t.gelu(mode); }, [](double) { return 0.0; }, 0, 0,
        -400, -300);
  }
  try {
    Tensor::zeros({2}).gelu("fast");
    FAIL() << "no error";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Tensor.gelu"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fast"), std::string::npos) << e.what();
  }
}

TEST(Activation2, PiecewiseLinear) {
  check_unary(
      "relu6", [](const Tensor& t) { return t.relu6(); },
      [](double x) { return std::min(6.0, std::max(0.0, x)); }, kF32, 1e-6, -9, 9);
  check_unary(
      "hardsigmoid", [](const Tensor& t) { return t.hardsigmoid(); },
      [](double x) { return std::min(1.0, std::max(0.0, x / 6 + 0.5)); }, kF32, 1e-6, -5, 5);
  check_unary(
      "hardsigmoid 0.2", [](const Tensor& t) { return t.hardsigmoid(0.2, 0.3); },
      [](double x) { return std::min(1.0, std::max(0.0, 0.2 * x + 0.3)); }, kF32, 1e-6);
  check_unary(
      "hardswish", [](const Tensor& t) { return t.hardswish(); },
      [](double x) { return x * std::min(6.0, std::max(0.0, x + 3)) / 6; }, kF32, 1e-6);
  check_unary(
      "hardtanh", [](const Tensor& t) { return t.hardtanh(); },
      [](double x) { return std::min(1.0, std::max(-1.0, x)); }, kF32, 0);
  check_unary(
      "hardtanh -2 0.5", [](const Tensor& t) { return t.hardtanh(-2, 0.5); },
      [](double x) { return std::min(0.5, std::max(-2.0, x)); }, kF32, 0);
  check_unary(
      "leaky_relu", [](const Tensor& t) { return t.leaky_relu(); },
      [](double x) { return x < 0 ? 0.01 * x : x; }, kF32, 1e-7);
  check_unary(
      "leaky_relu 0.2", [](const Tensor& t) { return t.leaky_relu(0.2); },
      [](double x) { return x < 0 ? 0.2 * x : x; }, kF32, 1e-7);
}

TEST(Activation2, SpecialValues) {
  Tensor t = ref::tensor(vals({3}, {kInf, -kInf, 0}));
  ref::expect_close(t.relu6(), vals({3}, {6, 0, 0}), 0, 0, "relu6");
  ref::expect_close(t.hardsigmoid(), vals({3}, {1, 0, 0.5}), 0, 0, "hardsigmoid");
  ref::expect_close(t.hardtanh(), vals({3}, {1, -1, 0}), 0, 0, "hardtanh");
  ref::expect_close(t.leaky_relu(), vals({3}, {kInf, -kInf, 0}), 0, 0, "leaky_relu");
  ref::expect_close(t.elu(), vals({3}, {kInf, -1, 0}), 0, 0, "elu");
  ref::expect_close(t.selu(), vals({3}, {kInf, -1.0507 * 1.67326, 0}), kF32, 0, "selu");
  ref::expect_close(t.silu(), vals({3}, {kInf, kNaN, 0}), 0, 0, "silu");  // -inf * 0, as tinygrad
  ref::expect_close(t.gelu(), vals({3}, {kInf, kNaN, 0}), 0, 0, "gelu");  // as tinygrad
  // integer inputs become float32
  Tensor ti = ref::tensor(vals({3}, {-2, 0, 7}), dt::int32);
  EXPECT_EQ(ti.gelu().dtype(), dt::float32);
  ref::expect_close(ti.relu6(), vals({3}, {0, 0, 6}), 0, 0, "relu6 int");
  EXPECT_EQ(ti.relu6().dtype(), dt::int32);
  ref::expect_close(ti.elu(), vals({3}, {std::exp(-2.0) - 1, 0, 7}), kTrans, 1e-6, "elu int");
}

TEST(Elementwise2, SignCeilFloorRound) {
  NDArray a = vals({2, 6}, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -3.7, 0, -0.2, 2.2, 4194305.5});
  Tensor t = ref::tensor(a);
  ref::expect_exact(t.sign(), ref::map(a, [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0; }));
  ref::expect_exact(t.ceil(), ref::map(a, [](double x) { return std::ceil(x); }));
  ref::expect_exact(t.floor(), ref::map(a, [](double x) { return std::floor(x); }));
  ref::expect_exact(t.round(), ref::map(a, [](double x) { return std::nearbyint(x); }));
  NDArray va = ref::flip(ref::transpose(a, 0, 1), {0});
  Tensor vt = t.transpose().flip({0});
  ref::expect_exact(vt.round(), ref::map(va, [](double x) { return std::nearbyint(x); }),
                    "round v");
  ref::expect_exact(vt.floor(), ref::map(va, [](double x) { return std::floor(x); }), "floor v");
  ref::expect_exact(vt.ceil(), ref::map(va, [](double x) { return std::ceil(x); }), "ceil v");
  NDArray big = ref::represent(vals({4}, {3e9, -3e9, 1e20, -1e20}), dt::float32);
  ref::expect_exact(ref::tensor(big).round(), big, "round big");
  ref::expect_exact(ref::tensor(big).floor(), big, "floor big");
  // special values
  NDArray sp = vals({3}, {kInf, -kInf, kNaN});
  ref::expect_close(ref::tensor(sp).sign(), vals({3}, {1, -1, kNaN}), 0);
  ref::expect_close(ref::tensor(sp).ceil(), sp, 0);
  ref::expect_close(ref::tensor(sp).floor(), sp, 0);
  // integers keep their dtype and values
  NDArray ia = vals({5}, {-7, -1, 0, 1, 9});
  for (tc::DType d : {dt::int32, dt::int8, dt::int64}) {
    Tensor ti = ref::tensor(ia, d);
    EXPECT_EQ(ti.sign().dtype(), d);
    ref::expect_exact(ti.sign(), vals({5}, {-1, -1, 0, 1, 1}), "sign int");
    ref::expect_exact(ti.ceil(), ia, "ceil int");
    ref::expect_exact(ti.floor(), ia, "floor int");
    ref::expect_exact(ti.round(), ia, "round int");
    EXPECT_EQ(ti.round().dtype(), d);
  }
  ref::expect_exact(ref::tensor(vals({3}, {0, 5, 200}), dt::uint8).sign(), vals({3}, {0, 1, 1}));
}

TEST(Elementwise2, IsinfIsnanIsfiniteIsclose) {
  NDArray a = vals({6}, {kInf, -kInf, kNaN, 0, -1.5, 3e38});
  Tensor t = ref::tensor(a);
  EXPECT_EQ(t.isinf().dtype(), dt::bool_);
  ref::expect_exact(t.isinf(), vals({6}, {1, 1, 0, 0, 0, 0}), "isinf");
  ref::expect_exact(t.isinf(true, false), vals({6}, {1, 0, 0, 0, 0, 0}), "isinf pos");
  ref::expect_exact(t.isinf(false, true), vals({6}, {0, 1, 0, 0, 0, 0}), "isinf neg");
  ref::expect_exact(t.isinf(false, false), vals({6}, {0, 0, 0, 0, 0, 0}), "isinf none");
  ref::expect_exact(t.isnan(), vals({6}, {0, 0, 1, 0, 0, 0}), "isnan");
  ref::expect_exact(t.isfinite(), vals({6}, {0, 0, 0, 1, 1, 1}), "isfinite");
  ref::expect_exact(t.flip({0}).isfinite(), vals({6}, {1, 1, 1, 0, 0, 0}), "isfinite flip");
  Tensor ti = ref::tensor(vals({2}, {1, -5}), dt::int32);
  ref::expect_exact(ti.isinf(), vals({2}, {0, 0}));
  ref::expect_exact(ti.isnan(), vals({2}, {0, 0}));
  ref::expect_exact(ti.isfinite(), vals({2}, {1, 1}));

  NDArray x = vals({7}, {1.0, 1.0, kInf, kInf, kNaN, 100.0, 0.0});
  NDArray y = vals({7}, {1.0 + 1e-6, 1.1, kInf, -kInf, kNaN, 100.001, 1e-9});
  Tensor tx = ref::tensor(x), ty = ref::tensor(y);
  EXPECT_EQ(tx.isclose(ty).dtype(), dt::bool_);
  ref::expect_exact(tx.isclose(ty), vals({7}, {1, 0, 1, 0, 0, 1, 1}), "isclose");
  ref::expect_exact(tx.isclose(ty, 1e-5, 1e-8, true), vals({7}, {1, 0, 1, 0, 1, 1, 1}),
                    "isclose equal_nan");
  ref::expect_exact(tx.isclose(ty, 0, 0), vals({7}, {0, 0, 1, 0, 0, 0, 0}), "isclose exact");
  ref::expect_exact(tx.isclose(ty, 0.2, 0), vals({7}, {1, 1, 1, 0, 0, 1, 0}), "isclose rtol");
  // broadcasting
  Tensor bc = ref::tensor(vals({2, 1}, {1, 2})).isclose(ref::tensor(vals({3}, {1, 2, 2.0000001})));
  ref::expect_exact(bc, vals({2, 3}, {1, 0, 0, 0, 1, 1}), "isclose broadcast");
  EXPECT_THROW(tx.isclose(Tensor::zeros({3})), tc::Error);
}

TEST(Elementwise2, IscloseScalar) {
  // |x - 1| <= atol + rtol * |1|, with infinities and NaN never close to 1
  NDArray x = vals({7}, {1.0, 1.0 + 1e-7, 1.00002, 2.0, kInf, -kInf, kNaN});
  Tensor t = ref::tensor(x);
  NDArray want = ref::map(x, [](double a) { return std::fabs(a - 1) <= 1e-8 + 1e-5 ? 1.0 : 0.0; });
  EXPECT_EQ(t.isclose(1.0).dtype(), dt::bool_);
  ref::expect_exact(t.isclose(1.0), want, "isclose 1.0");
  ref::expect_exact(t.isclose(1.0, 1.0), vals({7}, {1, 1, 1, 1, 0, 0, 0}), "isclose rtol");
  ref::expect_exact(t.isclose(kInf), vals({7}, {0, 0, 0, 0, 1, 0, 0}), "isclose inf");
  ref::expect_exact(t.isclose(kNaN, 1e-5, 1e-8, true), vals({7}, {0, 0, 0, 0, 0, 0, 1}),
                    "isclose nan equal_nan");
  // an int tensor against an int scalar
  ref::expect_exact(ref::tensor(vals({3}, {2, 3, 4}), dt::int32).isclose(3), vals({3}, {0, 1, 0}),
                    "isclose int");
}

TEST(Elementwise2, ClampClip) {
  NDArray a = ref::random({4, 3}, 31, -5, 5);
  Tensor t = ref::tensor(a);
  ref::expect_exact(t.clamp(-1.0, 2.0),
                    ref::map(a, [](double x) { return std::clamp(x, -1.0, 2.0); }));
  ref::expect_exact(t.clip(tc::ConstValue(0.5)),
                    ref::map(a, [](double x) { return std::max(x, 0.5); }));
  ref::expect_exact(t.transpose().clip({}, tc::ConstValue(1)),
                    ref::map(ref::transpose(a, 0, 1), [](double x) { return std::min(x, 1.0); }));
  Tensor ti = ref::tensor(vals({5}, {-10, -2, 0, 3, 100}), dt::int32);
  Tensor ci = ti.clamp(-3, 5);
  EXPECT_EQ(ci.dtype(), dt::int32);
  ref::expect_exact(ci, vals({5}, {-3, -2, 0, 3, 5}));
  EXPECT_EQ(ti.clamp(-3.5, 5).dtype(), dt::float32);
  ref::expect_close(ref::tensor(vals({3}, {kInf, -kInf, kNaN})).clamp(-1.0, 1.0),
                    vals({3}, {1, -1, kNaN}), 0);
  EXPECT_THROW(t.clamp(), tc::Error);
  try {
    t.clip();
    FAIL() << "no error";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Tensor.clip"), std::string::npos) << e.what();
  }
}

TEST(Elementwise2, LerpCopysign) {
  NDArray a = ref::random({2, 3}, 41), b = ref::random({3}, 42), w = ref::random({2, 1}, 43, 0, 1);
  Tensor ta = ref::tensor(a), tb = ref::tensor(b), tw = ref::tensor(w);
  auto lerp = [](double s, double e, double wt) { return s + (e - s) * wt; };
  NDArray expect = ref::generate({2, 3}, [&](int64_t i) {
    return lerp(a.v[static_cast<size_t>(i)], b.v[static_cast<size_t>(i % 3)],
                w.v[static_cast<size_t>(i / 3)]);
  });
  ref::expect_close(ta.lerp(tb, tw), expect, kF32, 1e-6, "lerp tensor weight");
  ref::expect_close(ta.lerp(tb, 0.25),
                    ref::zip(a, b, [&](double s, double e) { return lerp(s, e, 0.25); }), kF32,
                    1e-6, "lerp scalar weight");
  ref::expect_close(ta.transpose().lerp(tb.reshape({3, 1}), 1.0),
                    ref::expand(ref::reshape(b, {3, 1}), {3, 2}), kF32, 1e-6, "lerp view");
  EXPECT_THROW(ta.lerp(Tensor::zeros({4}), 0.5), tc::Error);

  NDArray m = vals({6}, {1.5, -2, 0, 3, -kInf, kNaN}), s = vals({6}, {-1, 2, -3, 0, 1, -1});
  ref::expect_close(ref::tensor(m).copysign(ref::tensor(s)),
                    ref::zip(m, s, [](double x, double y) { return std::copysign(x, y); }), 0, 0,
                    "copysign");
  ref::expect_close(ref::tensor(m).copysign(-1.0),
                    ref::map(m, [](double x) { return std::copysign(x, -1.0); }), 0, 0,
                    "copysign scalar");
  ref::expect_close(ref::tensor(vals({2}, {1, 2})).copysign(ref::tensor(vals({2}, {kNaN, -kInf}))),
                    vals({2}, {1, -2}), 0, 0, "copysign nan sign source");
  Tensor ci = ref::tensor(vals({3}, {-4, 5, 6}), dt::int32)
                  .copysign(ref::tensor(vals({3}, {1, -1, 0}), dt::int32));
  EXPECT_EQ(ci.dtype(), dt::int32);
  ref::expect_exact(ci, vals({3}, {4, -5, 6}), "copysign int");
  EXPECT_THROW(ref::tensor(m).copysign(Tensor::zeros({4})), tc::Error);
}

TEST(Elementwise2, Pow) {
  NDArray a = ref::random({3, 4}, 51, 0.1, 3), e = ref::random({4}, 52, -2, 2);
  Tensor ta = ref::tensor(a), te = ref::tensor(e);
  ref::expect_close(ta.pow(te), ref::zip(a, e, [](double x, double y) { return std::pow(x, y); }),
                    kTrans, 1e-6, "pow");
  ref::expect_close(ta.transpose().pow(2.5),
                    ref::map(ref::transpose(a, 0, 1), [](double x) { return std::pow(x, 2.5); }),
                    kTrans, 1e-6, "pow const view");
  ref::expect_close(ta.pow(2.0, true), ref::map(a, [](double x) { return std::pow(2.0, x); }),
                    kTrans, 1e-6, "rpow");
  // negative bases with integer exponents, NaN for fractional exponents, 0 ** x
  NDArray nb = vals({9}, {-2, -2, -3, -0.5, -2, 0, 0, 0, 2});
  NDArray ne = vals({9}, {2, 3, -1, 3, 0.5, 0, 2, -1, 0});
  ref::expect_close(ref::tensor(nb).pow(ref::tensor(ne)),
                    ref::zip(nb, ne, [](double x, double y) { return std::pow(x, y); }), kTrans,
                    1e-6, "pow special");
  ref::expect_close(ref::tensor(nb).pow(3), ref::map(nb, [](double x) { return std::pow(x, 3); }),
                    kTrans, 1e-6, "pow int const on float");
  // integer base: exact with a non-negative int constant, float with a float exponent
  NDArray ib = vals({6}, {-3, -2, 0, 1, 2, 7});
  Tensor ti = ref::tensor(ib, dt::int32);
  for (int k : {0, 1, 2, 3, 5, 10}) {
    Tensor p = ti.pow(k);
    EXPECT_EQ(p.dtype(), dt::int32);
    ref::expect_exact(p, ref::map(ib, [k](double x) { return std::pow(x, k); }),
                      "int pow " + std::to_string(k));
  }
  EXPECT_EQ(ref::tensor(vals({1}, {3}), dt::int64).pow(39).item<int64_t>(), 4052555153018976267LL);
  Tensor pf = ref::tensor(vals({3}, {4, 9, 2}), dt::int32).pow(0.5);
  EXPECT_EQ(pf.dtype(), dt::float32);  // as torch
  ref::expect_close(pf, vals({3}, {2, 3, std::sqrt(2.0)}), kTrans, 1e-6, "int ** float");
  EXPECT_EQ(ti.pow(2.0, true).dtype(), dt::float32);
  ref::expect_close(ti.pow(2.0, true), ref::map(ib, [](double x) { return std::pow(2, x); }),
                    kTrans, 1e-6, "float ** int tensor");
  EXPECT_THROW(ti.pow(ti), tc::Error);
  EXPECT_THROW(ti.pow(-1), tc::Error);
  EXPECT_THROW(ta.pow(Tensor::zeros({3})), tc::Error);
  try {
    ti.pow(ti);
    FAIL() << "no error";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Tensor.pow"), std::string::npos) << e.what();
  }
}

}  // namespace
