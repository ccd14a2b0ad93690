// Tensor math methods of tensor_math.cc (inverse trig and hyperbolic functions, erf, bitwise not,
// shifts, rounding division) against double-precision libm, with their domain edges, integer
// inputs and gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tests/tensor/gradcheck.h"
#include "tinycore/error.h"
#include "tinycore/tensor.h"

namespace tc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

using Op = std::function<Tensor(const Tensor&)>;

std::vector<float> to_f32(const std::vector<double>& v) { return {v.begin(), v.end()}; }

std::vector<double> grid(double lo, double hi, int n) {
  std::vector<double> v;
  for (int i = 0; i <= n; i++) v.push_back(lo + (hi - lo) * i / n);
  return v;
}

// op over float32 values vs ref in double: |got - want| <= atol + rtol |want|; NaN and infinities
// must match exactly.
void expect_matches(const char* name, const Op& op, double (*ref)(double),
                    const std::vector<double>& xs, double atol, double rtol) {
  std::vector<float> in = to_f32(xs);
  Tensor out = op(Tensor(in));
  ASSERT_EQ(out.dtype(), dtypes::float32) << name;
  std::vector<float> got = out.data<float>();
  double worst = 0;
  for (size_t i = 0; i < in.size(); i++) {
    double want = ref(in[i]);
    if (std::isnan(want) || std::isinf(want)) {
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got[i])) << name << "(" << in[i] << ") = " << got[i];
      else
        EXPECT_EQ(got[i], want) << name << "(" << in[i] << ")";
      continue;
    }
    double err = std::abs(got[i] - want), bound = atol + rtol * std::abs(want);
    worst = std::max(worst, err / bound);
    EXPECT_LE(err, bound) << name << "(" << in[i] << ") = " << got[i] << ", want " << want;
    if (err > bound) return;  // one message is enough
  }
  ::testing::Test::RecordProperty(name, std::to_string(worst));
}

TEST(Math, InverseTrig) {
  std::vector<double> unit = grid(-1, 1, 20000);
  // the polynomial of A&S 4.4.46 is good to 2e-8 absolute (plus float32 rounding)
  expect_matches(
      "asin", [](const Tensor& t) { return t.asin(); }, std::asin, unit, 3e-7, 0);
  expect_matches(
      "acos", [](const Tensor& t) { return t.acos(); }, std::acos, unit, 3e-7, 2e-7);
  std::vector<double> wide = grid(-50, 50, 20001);
  for (double v : {1e10, -1e10, 1e30, -3e38, kInf, -kInf, kNan, 1e-30, -1e-30}) wide.push_back(v);
  expect_matches(
      "atan", [](const Tensor& t) { return t.atan(); }, std::atan, wide, 3e-7, 0);
}

TEST(Math, InverseHyperbolic) {
  std::vector<double> wide = grid(-200, 200, 20001);
  for (double v : {1e10, -1e10, 1e30, -3e38, kInf, -kInf, kNan, 1e-3, -1e-3}) wide.push_back(v);
  expect_matches(
      "asinh", [](const Tensor& t) { return t.asinh(); }, std::asinh, wide, 2e-7, 2e-6);
  std::vector<double> ge1 = grid(1, 300, 20000);
  for (double v : {1e10, 1e30, 3e38, kInf, kNan}) ge1.push_back(v);
  expect_matches(
      "acosh", [](const Tensor& t) { return t.acosh(); }, std::acosh, ge1, 1e-6, 2e-6);
  std::vector<double> open = grid(-0.999, 0.999, 20000);
  expect_matches(
      "atanh", [](const Tensor& t) { return t.atanh(); }, std::atanh, open, 2e-7, 2e-6);
}

TEST(Math, Erf) {
  std::vector<double> xs = grid(-6, 6, 24001);
  for (double v : {kInf, -kInf, kNan, 30.0, -30.0}) xs.push_back(v);
  // A&S 7.1.26 is good to 1.5e-7 absolute; its float32 evaluation (1 - t p(t) e^-x^2) adds ~4 ulp
  expect_matches(
      "erf", [](const Tensor& t) { return t.erf(); }, std::erf, xs, 6e-7, 0);
}

TEST(Math, DomainEdges) {
  auto eval = [](const Op& op, std::vector<float> xs) { return op(Tensor(xs)).data<float>(); };
  std::vector<float> as = eval([](const Tensor& t) { return t.asin(); }, {1, -1, 1.5f, -2, 0});
  EXPECT_FLOAT_EQ(as[0], M_PI / 2);
  EXPECT_FLOAT_EQ(as[1], -M_PI / 2);
  EXPECT_TRUE(std::isnan(as[2]));
  EXPECT_TRUE(std::isnan(as[3]));
  EXPECT_EQ(as[4], 0.0f);
  std::vector<float> ac = eval([](const Tensor& t) { return t.acos(); }, {1, -1, 1.01f});
  EXPECT_NEAR(ac[0], 0.0f, 1e-7);
  EXPECT_FLOAT_EQ(ac[1], M_PI);
  EXPECT_TRUE(std::isnan(ac[2]));
  std::vector<float> ah = eval([](const Tensor& t) { return t.acosh(); }, {1, 0.5f, -3});
  EXPECT_EQ(ah[0], 0.0f);
  EXPECT_TRUE(std::isnan(ah[1]));
  EXPECT_TRUE(std::isnan(ah[2]));
  std::vector<float> th = eval([](const Tensor& t) { return t.atanh(); }, {1, -1, 2, -1.5f, 0});
  EXPECT_EQ(th[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(th[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(th[2]));
  EXPECT_TRUE(std::isnan(th[3]));
  EXPECT_EQ(th[4], 0.0f);
  std::vector<float> at = eval([](const Tensor& t) { return t.atan(); },
                               {std::numeric_limits<float>::infinity(), 1e38f});
  EXPECT_FLOAT_EQ(at[0], M_PI / 2);
  EXPECT_FLOAT_EQ(at[1], M_PI / 2);
}

// Integer and bool inputs give float32 results; float64 stays float64 (and is more accurate
// where the formula allows).
TEST(Math, Dtypes) {
  Tensor i = Tensor::from_vector<int32_t>({-1, 0, 1, 2});
  for (const auto& [name, op] :
       std::vector<std::pair<const char*, Op>>{{"asin", [](const Tensor& t) { return t.asin(); }},
                                               {"acos", [](const Tensor& t) { return t.acos(); }},
                                               {"atan", [](const Tensor& t) { return t.atan(); }},
                                               {"asinh", [](const Tensor& t) { return t.asinh(); }},
                                               {"acosh", [](const Tensor& t) { return t.acosh(); }},
                                               {"atanh", [](const Tensor& t) { return t.atanh(); }},
                                               {"erf", [](const Tensor& t) { return t.erf(); }}}) {
    EXPECT_EQ(op(i).dtype(), dtypes::float32) << name;
    EXPECT_EQ(op(i.cast(dtypes::bool_)).dtype(), dtypes::float32) << name;
    EXPECT_EQ(op(i.cast(dtypes::float64)).dtype(), dtypes::float64) << name;
    EXPECT_EQ(op(i.cast(dtypes::float16)).dtype(), dtypes::float16) << name;
  }
  std::vector<float> at = i.atan().data<float>();
  std::vector<float> er = i.erf().data<float>();
  std::vector<float> ash = i.asinh().data<float>();
  for (int k = 0; k < 4; k++) {
    EXPECT_NEAR(at[k], std::atan(k - 1.0), 3e-7);
    EXPECT_NEAR(er[k], std::erf(k - 1.0), 3e-7);
    EXPECT_NEAR(ash[k], std::asinh(k - 1.0), 3e-7);
  }
  std::vector<double> x64 = grid(-0.99, 0.99, 199);
  std::vector<double> th = Tensor::from_vector<double>(x64).atanh().data<double>();
  std::vector<double> sh = Tensor::from_vector<double>(x64).asinh().data<double>();
  for (size_t k = 0; k < x64.size(); k++) {
    EXPECT_NEAR(th[k], std::atanh(x64[k]), 1e-13 * (1 + std::abs(th[k])));
    EXPECT_NEAR(sh[k], std::asinh(x64[k]), 1e-14);
  }
  std::vector<float> h = Tensor(std::vector<float>{0.5f, -0.25f})
                             .cast(dtypes::float16)
                             .asin()
                             .cast(dtypes::float32)
                             .data<float>();
  EXPECT_NEAR(h[0], std::asin(0.5), 1e-3);
  EXPECT_NEAR(h[1], std::asin(-0.25), 1e-3);
}

TEST(Math, Gradients) {
  using tcgrad::check_grad;
  using tcgrad::Input;
  using tcgrad::unary;
  // 0 is left out where sign() makes the composed derivative 0 there (as in tinygrad)
  std::vector<double> unit = {-0.9, -0.55, -0.2, 0.15, 0.45, 0.8};
  check_grad(unary([](const Tensor& t) { return t.asin(); }), {Input{{2, 3}, unit}}, 1e-4);
  check_grad(unary([](const Tensor& t) { return t.acos(); }), {Input{{2, 3}, unit}}, 1e-4);
  check_grad(unary([](const Tensor& t) { return t.atanh(); }), {Input{{6}, unit}});
  std::vector<double> wide = {-3.5, -1.2, -0.4, 0.3, 0.9, 2.7};
  check_grad(unary([](const Tensor& t) { return t.atan(); }), {Input{{6}, wide}}, 1e-4);
  check_grad(unary([](const Tensor& t) { return t.asinh(); }), {Input{{6}, wide}});
  check_grad(unary([](const Tensor& t) { return t.erf(); }), {Input{{6}, wide}}, 1e-4);
  check_grad(unary([](const Tensor& t) { return t.acosh(); }),
             {Input{{5}, {1.1, 1.5, 2.0, 3.3, 10.0}}});
}

TEST(Math, BitwiseNot) {
  EXPECT_EQ((Tensor::from_vector<int8_t>({0, 2, 5, 127, -128}).bitwise_not().data<int8_t>()),
            (std::vector<int8_t>{-1, -3, -6, -128, 127}));
  EXPECT_EQ((~Tensor::from_vector<uint8_t>({0, 2, 255})).data<uint8_t>(),
            (std::vector<uint8_t>{255, 253, 0}));
  Tensor b = Tensor::from_vector<bool>({true, false}).bitwise_not();
  EXPECT_EQ(b.dtype(), dtypes::bool_);
  EXPECT_EQ(b.data<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ((Tensor::from_vector<int64_t>({0, -1, int64_t{1} << 40}).bitwise_not().data<int64_t>()),
            (std::vector<int64_t>{-1, 0, -(int64_t{1} << 40) - 1}));
  EXPECT_THROW(Tensor(std::vector<float>{1.0f}).bitwise_not(), Error);
}

TEST(Math, Shifts) {
  Tensor u = Tensor::from_vector<uint8_t>({1, 3, 31, 200});
  EXPECT_EQ(u.lshift(2).data<uint8_t>(), (std::vector<uint8_t>{4, 12, 124, 32}));  // wraps
  EXPECT_EQ((u << 2).dtype(), dtypes::uint8);
  EXPECT_EQ(Tensor::from_vector<uint8_t>({4, 13, 125, 255}).rshift(2).data<uint8_t>(),
            (std::vector<uint8_t>{1, 3, 31, 63}));
  EXPECT_EQ((u >> 0).data<uint8_t>(), (std::vector<uint8_t>{1, 3, 31, 200}));
  EXPECT_EQ((u >> 8).data<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ((u << 9).data<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 0}));
  Tensor big = Tensor::from_vector<uint64_t>({uint64_t{1} << 63, 12345});
  EXPECT_EQ(big.rshift(63).data<uint64_t>(), (std::vector<uint64_t>{1, 0}));
  EXPECT_EQ(big.lshift(63).data<uint64_t>(), (std::vector<uint64_t>{0, uint64_t{1} << 63}));
  EXPECT_THROW(Tensor::from_vector<int32_t>({1}).lshift(1), Error);
  EXPECT_THROW(u.rshift(-1), Error);
  EXPECT_THROW(Tensor(std::vector<float>{1.0f}) >> 1, Error);
}

TEST(Math, DivRoundingMode) {
  Tensor a = Tensor::from_vector<int32_t>({-7, 7, -8, 8, 2000000001, -5});
  Tensor b = Tensor::from_vector<int32_t>({2, -2, 3, 3, 2, 5});
  Tensor t = a.div(b, "trunc"), f = a.div(b, "floor");
  EXPECT_EQ(t.dtype(), dtypes::int32);
  EXPECT_EQ(t.data<int32_t>(), (std::vector<int32_t>{-3, -3, -2, 2, 1000000000, -1}));
  EXPECT_EQ(f.data<int32_t>(), (std::vector<int32_t>{-4, -4, -3, 2, 1000000000, -1}));
  EXPECT_EQ(a.div(3, "floor").data<int32_t>(), (std::vector<int32_t>{-3, 2, -3, 2, 666666667, -2}));
  EXPECT_EQ(a.div(100, "floor", true).data<int32_t>(),
            (std::vector<int32_t>{-15, 14, -13, 12, 0, -20}));
  // a float divisor: float division, rounded, in the integer numerator's dtype (as tinygrad)
  Tensor g = Tensor::from_vector<int32_t>({7, -7}).div(2.5, "floor");
  EXPECT_EQ(g.dtype(), dtypes::int32);
  EXPECT_EQ(g.data<int32_t>(), (std::vector<int32_t>{2, -3}));
  Tensor x = Tensor(std::vector<float>{7.5f, -7.5f, 1.0f, -0.5f});
  Tensor y = Tensor(std::vector<float>{-2.0f, 2.0f, 3.0f, 4.0f});
  EXPECT_EQ(x.div(y, "trunc").data<float>(), (std::vector<float>{-3, -3, 0, 0}));
  EXPECT_EQ(x.div(y, "floor").data<float>(), (std::vector<float>{-4, -4, 0, -1}));
  EXPECT_EQ(x.div(y, nullptr).data<float>(), (x / y).data<float>());
  EXPECT_EQ(x.div(2, "floor").dtype(), dtypes::float32);
  // broadcasting
  EXPECT_EQ(Tensor::from_vector<int32_t>({9, -9}, Shape{2, 1})
                .div(Tensor::from_vector<int32_t>({2, 4}), "floor")
                .data<int32_t>(),
            (std::vector<int32_t>{4, 2, -5, -3}));
  EXPECT_THROW(a.div(b, "round"), Error);
}

}  // namespace
}  // namespace tc
