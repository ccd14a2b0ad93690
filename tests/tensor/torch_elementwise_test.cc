// Elementwise Tensor ops against PyTorch (tests/fixtures/gen_elementwise.py): forward values,
// output dtypes and the gradients of sum(out * w), on contiguous and transposed inputs, with
// broadcasting, integer dtype rules and special values (NaN, +-inf, +-0, halves).
//
// Tolerances (|ours - torch| <= atol + rtol * |torch|), float32:
//   kExact   0                 integer and bool results, and float ops that round exactly
//   kTight   1e-6, 1e-7        +, -, *, /, max/min, clamp, where, movement of values
//   kMath    1e-5, 1e-6        exp/log/sin/sqrt/pow... (our polynomial approximations vs libm)
//   kChain   5e-5, 5e-6        activations composed of several transcendental steps
// Deviations from torch (tinygrad's definitions win): selu's constants (1.67326, 1.0507) and
// quick_gelu (no torch op) are computed from tinygrad's formula on the torch side; so are
// sign(NaN) = NaN (torch: 0), relu(NaN) = 0 (torch: NaN), and a <= b as !(a > b), a >= b as
// !(a < b), which are true when an operand is NaN (torch: false). round(-0.5) and round(-0.0)
// are +0 in tinygrad's formula (torch: -0); the comparison does not look at the sign of zeros.
#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/tensor/fixture.h"
#include "tinycore/tensor.h"

namespace {

using tc::Tensor;
using tcfix::bin;
using tcfix::check_op;
using tcfix::one;
using tcfix::Tol;
using tcfix::un;
namespace dt = tc::dtypes;
using T = const Tensor&;

constexpr Tol kExact{0, 0};
constexpr Tol kTight{1e-6, 1e-7};
constexpr Tol kMath{1e-5, 1e-6};
constexpr Tol kChain{5e-5, 5e-6};

const char* kFile = "elementwise";

TEST(TorchFixture, RoundTrip) {
  const tcfix::Case& c = tcfix::fixture("elementwise", "roundtrip");
  struct Want {
    const char* label;
    tc::DType dtype;
  };
  for (Want w : {Want{"f32", dt::float32}, Want{"f64", dt::float64}, Want{"f16", dt::float16},
                 Want{"bf16", dt::bfloat16}, Want{"i64", dt::int64}, Want{"i32", dt::int32},
                 Want{"u8", dt::uint8}, Want{"b", dt::bool_}, Want{"empty", dt::float32}}) {
    Tensor t = c[w.label].tensor();
    EXPECT_EQ(t.dtype(), w.dtype) << w.label;
    tcfix::expect_matches(t, c[w.label], 0, 0);
  }
  EXPECT_EQ(c["f32"].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(std::isnan(c["f32"].values[2]));
  EXPECT_EQ(c["f32"].values[3], INFINITY);
  EXPECT_EQ(c["f32"].values[0], static_cast<double>(0.1f));
  EXPECT_EQ(c["f64"].values[0], 1.0 / 3);
  EXPECT_TRUE(std::signbit(c["f64"].values[1]));
  EXPECT_EQ(c["i64"].values[0], -1099511627776.0);
  EXPECT_EQ(c["empty"].shape, (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(c.scalar("s_int"), 3);
  EXPECT_EQ(c["s_int"].tensor().dtype(), dt::int32);
  EXPECT_EQ(c.scalar("s_float"), 0.1);
  EXPECT_EQ(c["s_float"].tensor().dtype(), dt::float32);
  EXPECT_EQ(c.scalar("s_bool"), 1);
  EXPECT_TRUE(c.has("b"));
  EXPECT_FALSE(c.has("nope"));
  EXPECT_THROW(c["nope"], std::runtime_error);
  EXPECT_THROW(tcfix::fixture("elementwise", "no_such_case"), std::runtime_error);
  EXPECT_THROW(tcfix::fixture("no_such_file", "x"), std::runtime_error);
  EXPECT_EQ(c["i32"].tensor(dt::float32).dtype(), dt::float32);
  EXPECT_EQ(c["f32"].array().shape, (std::vector<int64_t>{2, 3}));
}

// Malformed files are reported with the file, line and reason.
TEST(TorchFixture, MalformedFilesThrow) {
  struct Bad {
    const char* text;
    const char* why;
  };
  std::string path = ::testing::TempDir() + "tc_bad.fixture";
  for (const Bad& b : {Bad{"case a\ntensor x float32 1 3\n1 2\nend\n", "2 values for 3"},
                       Bad{"case a\ntensor x float32 1 2\n1 zz\nend\n", "bad value"},
                       Bad{"case a\ntensor x float32 1 2\n1 2\n", "missing end"},
                       Bad{"tensor x float32 0\n1\n", "outside a case"},
                       Bad{"case a\nend\ncase a\nend\n", "duplicate case"},
                       Bad{"case a\nbogus\nend\n", "unexpected"}}) {
    {
      std::ofstream f(path);
      f << b.text;
    }
    try {
      tcfix::detail::parse_file("tc_bad", path);
      ADD_FAILURE() << "no error for: " << b.text;
    } catch (const std::runtime_error& e) {
      EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr(b.why));
      EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("tc_bad.fixture:"));
    }
  }
  std::remove(path.c_str());
}

// check_op itself: a wrong value, a wrong gradient and a wrong dtype are each caught.
void wrong_value() {
  check_op("elementwise", "exp", un([](T x) { return x.exp().mul(1.001); }), kMath, kMath);
}
void wrong_grad() {
  check_op("elementwise", "exp", un([](T x) { return x.detach().exp(); }), kMath, kMath);
}
void wrong_dtype() {
  check_op("elementwise", "exp", un([](T x) { return x.cast(dt::float64).exp(); }), kMath, kMath);
}
void wrong_shape() {
  check_op("elementwise", "exp", un([](T x) { return x.exp().reshape({4, 3}); }), kMath, kMath);
}
// The failure messages `f` reports (all of them, fatal or not), without failing this test.
std::string failures_of(void (*f)()) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    f();
  }
  std::string all;
  for (int i = 0; i < results.size(); i++)
    all += std::string(results.GetTestPartResult(i).message()) + "\n";
  return all;
}

TEST(TorchFixture, CheckOpCatchesMistakes) {
  using ::testing::HasSubstr;
  EXPECT_THAT(failures_of(wrong_value), HasSubstr("case exp, \"out0\": element 0 [0, 0]"));
  EXPECT_THAT(failures_of(wrong_grad), HasSubstr("case exp, \"grad0\": element 0"));
  EXPECT_THAT(failures_of(wrong_dtype), HasSubstr("torch float32"));
  EXPECT_THAT(failures_of(wrong_shape), HasSubstr("shape (4, 3), torch (3, 4)"));
  EXPECT_THAT(failures_of(wrong_grad), HasSubstr("12 elements differ in all"));
}

// ------------------------------------------------------------------ unary, on (3, 4) and x.T

struct UnaryCase {
  const char* name;
  std::function<Tensor(T)> op;
  Tol fwd;
  Tol grad;
};

class TorchUnary : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(TorchUnary, ContiguousAndTransposed) {
  const UnaryCase& p = GetParam();
  check_op(kFile, p.name, un(p.op), p.fwd, p.grad);
  check_op(kFile, std::string(p.name) + "_t", un([&p](T x) { return p.op(x.transpose()); }), p.fwd,
           p.grad);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, TorchUnary,
    ::testing::Values(
        UnaryCase{"neg", [](T x) { return x.neg(); }, kExact, kExact},
        UnaryCase{"reciprocal", [](T x) { return x.reciprocal(); }, kTight, kTight},
        UnaryCase{"sqrt", [](T x) { return x.sqrt(); }, kMath, kMath},
        UnaryCase{"rsqrt", [](T x) { return x.rsqrt(); }, kMath, kMath},
        UnaryCase{"exp", [](T x) { return x.exp(); }, kMath, kMath},
        UnaryCase{"exp2", [](T x) { return x.exp2(); }, kMath, kMath},
        UnaryCase{"log", [](T x) { return x.log(); }, kMath, kMath},
        UnaryCase{"log2", [](T x) { return x.log2(); }, kMath, kMath},
        UnaryCase{"sin", [](T x) { return x.sin(); }, kMath, kMath},
        UnaryCase{"cos", [](T x) { return x.cos(); }, kMath, kMath},
        UnaryCase{"tan", [](T x) { return x.tan(); }, kMath, kMath},
        UnaryCase{"tanh", [](T x) { return x.tanh(); }, kMath, kMath},
        UnaryCase{"sinh", [](T x) { return x.sinh(); }, kMath, kMath},
        UnaryCase{"cosh", [](T x) { return x.cosh(); }, kMath, kMath},
        UnaryCase{"trunc", [](T x) { return x.trunc(); }, kExact, kExact},
        UnaryCase{"ceil", [](T x) { return x.ceil(); }, kExact, kExact},
        UnaryCase{"floor", [](T x) { return x.floor(); }, kExact, kExact},
        UnaryCase{"round", [](T x) { return x.round(); }, kExact, kExact},
        UnaryCase{"relu", [](T x) { return x.relu(); }, kExact, kExact},
        UnaryCase{"abs", [](T x) { return x.abs(); }, kExact, kExact},
        UnaryCase{"sigmoid", [](T x) { return x.sigmoid(); }, kMath, kMath},
        UnaryCase{"square", [](T x) { return x.square(); }, kTight, kTight},
        UnaryCase{"sign", [](T x) { return x.sign(); }, kExact, kExact},
        UnaryCase{"gelu", [](T x) { return x.gelu(); }, kChain, kChain},
        UnaryCase{"quick_gelu", [](T x) { return x.quick_gelu(); }, kChain, kChain},
        UnaryCase{"silu", [](T x) { return x.silu(); }, kMath, kMath},
        UnaryCase{"swish", [](T x) { return x.swish(); }, kMath, kMath},
        UnaryCase{"relu6", [](T x) { return x.relu6(); }, kExact, kExact},
        UnaryCase{"hardsigmoid", [](T x) { return x.hardsigmoid(); }, kTight, kTight},
        UnaryCase{"hardswish", [](T x) { return x.hardswish(); }, kTight, kTight},
        UnaryCase{"hardtanh", [](T x) { return x.hardtanh(); }, kExact, kExact},
        UnaryCase{"hardtanh_args", [](T x) { return x.hardtanh(-2.0, 0.5); }, kExact, kExact},
        UnaryCase{"elu", [](T x) { return x.elu(); }, kMath, kMath},
        UnaryCase{"elu_alpha", [](T x) { return x.elu(0.5); }, kMath, kMath},
        UnaryCase{"celu", [](T x) { return x.celu(); }, kMath, kMath},
        UnaryCase{"celu_alpha", [](T x) { return x.celu(2.0); }, kMath, kMath},
        UnaryCase{"selu", [](T x) { return x.selu(); }, kMath, kMath},
        UnaryCase{"leaky_relu", [](T x) { return x.leaky_relu(); }, kTight, kTight},
        UnaryCase{"leaky_relu_slope", [](T x) { return x.leaky_relu(0.2); }, kTight, kTight},
        UnaryCase{"softplus", [](T x) { return x.softplus(); }, kMath, kMath},
        UnaryCase{"softplus_beta", [](T x) { return x.softplus(2.0); }, kMath, kMath},
        UnaryCase{"softsign", [](T x) { return x.softsign(); }, kTight, kTight},
        UnaryCase{"mish", [](T x) { return x.mish(); }, kChain, kChain},
        UnaryCase{"clamp", [](T x) { return x.clamp(-0.5, 0.7); }, kExact, kExact},
        UnaryCase{"clamp_min", [](T x) { return x.clamp(-0.3); }, kExact, kExact},
        UnaryCase{"clamp_max", [](T x) { return x.clamp({}, 0.4); }, kExact, kExact},
        UnaryCase{"clip", [](T x) { return x.clip(-1.0, 1.0); }, kExact, kExact},
        UnaryCase{"add_scalar", [](T x) { return x.add(2.5); }, kTight, kExact},
        UnaryCase{"rsub_scalar", [](T x) { return x.sub(1.5, true); }, kTight, kExact},
        UnaryCase{"mul_scalar", [](T x) { return x * -3.0; }, kTight, kTight},
        UnaryCase{"rdiv_scalar", [](T x) { return 2.0 / x; }, kTight, kTight},
        UnaryCase{"div_scalar", [](T x) { return x / 4.0; }, kTight, kTight},
        UnaryCase{"maximum_scalar", [](T x) { return x.maximum(0.25); }, kExact, kExact},
        UnaryCase{"minimum_scalar", [](T x) { return x.minimum(-0.25); }, kExact, kExact},
        UnaryCase{"pow_2", [](T x) { return x.pow(2.0); }, kMath, kMath},
        UnaryCase{"pow_3", [](T x) { return x.pow(3.0); }, kMath, kMath},
        UnaryCase{"pow_half", [](T x) { return x.pow(0.5); }, kMath, kMath},
        UnaryCase{"pow_neg", [](T x) { return x.pow(-1.5); }, kMath, kMath},
        UnaryCase{"rpow", [](T x) { return x.pow(2.0, true); }, kMath, kMath},
        UnaryCase{"copysign_scalar", [](T x) { return x.copysign(-1.0); }, kExact, kExact},
        UnaryCase{"lerp_scalar_w", [](T x) { return x.lerp(Tensor::full_like(x, 2.0), 0.3); },
                  kTight, kTight}),
    [](const ::testing::TestParamInfo<UnaryCase>& i) { return std::string(i.param.name); });

// ------------------------------------------------------------------ special values

TEST(TorchSpecial, NanInfZeroHalves) {
  struct C {
    const char* name;
    std::function<Tensor(T)> op;
  };
  for (const C& c : std::vector<C>{
           {"neg", [](T x) { return x.neg(); }},
           {"abs", [](T x) { return x.abs(); }},
           {"sign", [](T x) { return x.sign(); }},
           {"relu", [](T x) { return x.relu(); }},
           {"round", [](T x) { return x.round(); }},
           {"floor", [](T x) { return x.floor(); }},
           {"ceil", [](T x) { return x.ceil(); }},
           {"trunc", [](T x) { return x.trunc(); }},
           {"exp", [](T x) { return x.exp(); }},
           {"log", [](T x) { return x.log(); }},
           {"sqrt", [](T x) { return x.sqrt(); }},
           {"sigmoid", [](T x) { return x.sigmoid(); }},
           {"tanh", [](T x) { return x.tanh(); }},
           {"isnan", [](T x) { return x.isnan(); }},
           {"isinf", [](T x) { return x.isinf(); }},
           {"isposinf", [](T x) { return x.isinf(true, false); }},
           {"isneginf", [](T x) { return x.isinf(false, true); }},
           {"isfinite", [](T x) { return x.isfinite(); }},
           {"clamp", [](T x) { return x.clamp(-1.0, 1.0); }},
           {"reciprocal", [](T x) { return x.reciprocal(); }},
       }) {
    check_op(kFile, std::string("special_") + c.name, un(c.op), kMath);
  }
}

// ------------------------------------------------------------------ integer dtype rules

TEST(TorchInt, Arithmetic) {
  check_op(kFile, "int_add", bin([](T a, T b) { return a + b; }), kExact);
  check_op(kFile, "int_mul", bin([](T a, T b) { return a * b; }), kExact);
  check_op(kFile, "int_sub", bin([](T a, T b) { return a - b; }), kExact);
  check_op(kFile, "int_div", bin([](T a, T b) { return a / b; }), kTight);
  check_op(kFile, "int_idiv", bin([](T a, T b) { return a.idiv(b); }), kExact);
  check_op(kFile, "int_mod", bin([](T a, T b) { return a.mod(b); }), kExact);
  check_op(kFile, "int_maximum", bin([](T a, T b) { return a.maximum(b); }), kExact);
  check_op(kFile, "int_add_float_scalar", un([](T a) { return a + 1.5; }), kExact);
  check_op(kFile, "int_mul_int_scalar", un([](T a) { return a * 3; }), kExact);
  check_op(kFile, "int_pow_3", un([](T a) { return a.pow(3); }), kExact);
  check_op(kFile, "int_neg_abs_sign", un([](T a) { return a.neg().abs().mul(a.sign()); }), kExact);
  check_op(kFile, "int_clamp", un([](T a) { return a.clamp(-2, 3); }), kExact);
  check_op(
      kFile, "int_ceil_floor_round",
      [](const std::vector<Tensor>& a) {
        return std::vector<Tensor>{a[0].ceil(), a[0].floor(), a[0].round(), a[0].trunc()};
      },
      kExact);
}

TEST(TorchInt, Promotion) {
  check_op(kFile, "int_plus_float", bin([](T a, T b) { return a + b; }), kExact);
  check_op(kFile, "int8_plus_int32", bin([](T a, T b) { return a + b; }), kExact);
  check_op(kFile, "uint8_plus_int8", bin([](T a, T b) { return a + b; }), kExact);
}

TEST(TorchInt, Bitwise) {
  for (const char* kind : {"int_", "bool_"}) {
    std::string k(kind);
    check_op(kFile, k + "bitwise_and", bin([](T a, T b) { return a.bitwise_and(b); }), kExact);
    check_op(kFile, k + "bitwise_or", bin([](T a, T b) { return a.bitwise_or(b); }), kExact);
    check_op(kFile, k + "bitwise_xor", bin([](T a, T b) { return a.bitwise_xor(b); }), kExact);
  }
  check_op(kFile, "logical_not", un([](T a) { return a.logical_not(); }), kExact);
  check_op(kFile, "logical_not_float", un([](T a) { return a.logical_not(); }), kExact);
}

// ------------------------------------------------------------------ binary float ops

struct BinaryCase {
  const char* name;
  std::function<Tensor(T, T)> op;
  Tol fwd;
  Tol grad;
};

class TorchBinary : public ::testing::TestWithParam<BinaryCase> {};

// (3, 4) with (4,); (3, 1) with (1, 4); a transposed (3, 4) view with a flipped (4,)
TEST_P(TorchBinary, BroadcastAndNonContiguous) {
  const BinaryCase& p = GetParam();
  std::string n = p.name;
  check_op(kFile, n, bin(p.op), p.fwd, p.grad);
  check_op(kFile, n + "_outer", bin(p.op), p.fwd, p.grad);
  check_op(kFile, n + "_t", bin([&p](T a, T b) { return p.op(a.transpose(), b.flip({0})); }), p.fwd,
           p.grad);
}

INSTANTIATE_TEST_SUITE_P(
    Ops, TorchBinary,
    ::testing::Values(BinaryCase{"add", [](T a, T b) { return a.add(b); }, kTight, kExact},
                      BinaryCase{"sub", [](T a, T b) { return a.sub(b); }, kTight, kExact},
                      BinaryCase{"mul", [](T a, T b) { return a.mul(b); }, kTight, kTight},
                      BinaryCase{"div", [](T a, T b) { return a.div(b); }, kTight, kMath},
                      BinaryCase{"maximum", [](T a, T b) { return a.maximum(b); }, kExact, kTight},
                      BinaryCase{"minimum", [](T a, T b) { return a.minimum(b); }, kExact, kTight},
                      BinaryCase{"copysign", [](T a, T b) { return a.copysign(b); }, kExact,
                                 kExact}),
    [](const ::testing::TestParamInfo<BinaryCase>& i) { return std::string(i.param.name); });

TEST(TorchBinaryMore, DivPowLerp) {
  check_op(kFile, "div_by_away", bin([](T a, T b) { return a / b; }), kTight, kMath);
  check_op(kFile, "float_mod", bin([](T a, T b) { return a.mod(b); }), kMath);
  check_op(kFile, "pow", bin([](T a, T b) { return a.pow(b); }), kMath, kMath);
  check_op(kFile, "pow_outer", bin([](T a, T b) { return a.pow(b); }), kMath, kMath);
  check_op(kFile, "pow_negative_base", bin([](T a, T b) { return a.pow(b); }), kMath);
  auto lerp = one([](const std::vector<Tensor>& x) { return x[0].lerp(x[1], x[2]); });
  check_op(kFile, "lerp", lerp, kTight, kTight);
  check_op(kFile, "lerp_outer", lerp, kTight, kTight);
}

TEST(TorchCompare, AllSixWithNanAndTies) {
  struct C {
    const char* name;
    std::function<Tensor(T, T)> op;
    std::function<Tensor(T)> scalar;
  };
  for (const C& c : std::vector<C>{
           {"lt", [](T a, T b) { return a.lt(b); }, [](T a) { return a.lt(2.0); }},
           {"gt", [](T a, T b) { return a.gt(b); }, [](T a) { return a.gt(2.0); }},
           {"le", [](T a, T b) { return a.le(b); }, [](T a) { return a.le(2.0); }},
           {"ge", [](T a, T b) { return a.ge(b); }, [](T a) { return a.ge(2.0); }},
           {"eq", [](T a, T b) { return a.eq(b); }, [](T a) { return a.eq(2.0); }},
           {"ne", [](T a, T b) { return a.ne(b); }, [](T a) { return a.ne(2.0); }},
       }) {
    std::string n = c.name;
    check_op(kFile, n, bin(c.op), kExact);
    check_op(kFile, n + "_scalar", un(c.scalar), kExact);
    check_op(kFile, "int_" + n, bin(c.op), kExact);
  }
}

TEST(TorchWhere, BranchesBroadcastAndScalars) {
  auto where = one([](const std::vector<Tensor>& x) { return x[0].where(x[1], x[2]); });
  check_op(kFile, "where", where, kExact, kExact);
  check_op(kFile, "where_outer", where, kExact, kExact);
  check_op(kFile, "where_scalar", bin([](T c, T a) { return c.where(a, 2.0); }), kExact, kExact);
  check_op(kFile, "where_both_scalars", un([](T c) { return c.where(1.5, -0.5); }), kExact);
}

TEST(TorchIsclose, DefaultsAndArgs) {
  check_op(kFile, "isclose", bin([](T a, T b) { return a.isclose(b); }), kExact);
  check_op(kFile, "isclose_args", bin([](T a, T b) { return a.isclose(b, 1e-3, 1e-7, true); }),
           kExact);
}

// ------------------------------------------------------------------ edges

// +-0, +-inf, the bounds of a clip and |x| where exp overflows float32: values and gradients as
// torch's (derived through exp, log2 or a maximum, a gradient would be NaN or split there).
TEST(TorchEdges, ZerosInfinitiesBoundsAndOverflow) {
  check_op(kFile, "edge_abs", un([](T x) { return x.abs(); }), kExact, kExact);
  check_op(kFile, "edge_copysign", bin([](T a, T b) { return a.copysign(b); }), kExact, kExact);
  check_op(kFile, "edge_clip", un([](T x) { return x.clip(-2.5, 1.5); }), kExact, kExact);
  check_op(kFile, "edge_clip_crossed", un([](T x) { return x.clip(3.0, 0.0); }), kExact, kExact);
  check_op(kFile, "edge_sigmoid", un([](T x) { return x.sigmoid(); }), kMath, kMath);
  check_op(kFile, "edge_tanh", un([](T x) { return x.tanh(); }), kMath, kMath);
  check_op(kFile, "edge_quick_gelu", un([](T x) { return x.quick_gelu(); }), kChain, kChain);
  check_op(kFile, "edge_softplus", un([](T x) { return x.softplus(); }), kMath, kMath);
  check_op(kFile, "edge_softplus_beta", un([](T x) { return x.softplus(3.0); }), kMath, kMath);
}

TEST(TorchEdges, PowAtZeroAndInfinity) {
  struct C {
    const char* name;
    double c;
  };
  for (C p : {C{"m1", -1.0}, C{"0", 0.0}, C{"0_3", 0.3}, C{"1", 1.0}, C{"2", 2.0}, C{"3_3", 3.3}})
    check_op(kFile, std::string("edge_pow_") + p.name, un([p](T x) { return x.pow(p.c); }), kMath,
             kMath);
  check_op(kFile, "edge_rpow_zero", un([](T x) { return x.pow(0.0, true); }), kMath, kMath);
  check_op(kFile, "edge_pow_zero_exponent", bin([](T b, T e) { return b.pow(e); }), kMath, kMath);
  check_op(kFile, "edge_pow_int_base", un([](T x) { return x.pow(0.5); }), kMath);
}

TEST(TorchEdges, RoundingDivisionOfIntsByFloats) {
  check_op(kFile, "edge_div_int_by_float_trunc", bin([](T a, T b) { return a.div(b, "trunc"); }),
           kExact);
  check_op(kFile, "edge_div_int_by_float_floor", bin([](T a, T b) { return a.div(b, "floor"); }),
           kExact);
}

}  // namespace
