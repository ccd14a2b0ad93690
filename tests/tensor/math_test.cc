// Tensor math methods of tensor/math.cc (inverse trig and hyperbolic functions, erf, bitwise not,
// shifts, rounding division, fmod, log10, logaddexp) against double-precision libm, with their
// domain edges, integer inputs and gradients.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
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

// torch's shifts of a `bits`-wide integer: a count outside [0, bits) gives 0 for <<, and the sign
// fill for >> (what an arithmetic shift by bits - 1 leaves).
int64_t ref_shl(int64_t x, int64_t n, int bits) {
  if (n < 0 || n >= bits) return 0;
  uint64_t r = static_cast<uint64_t>(x) << n;
  if (bits == 64) return static_cast<int64_t>(r);
  uint64_t mask = (uint64_t{1} << bits) - 1;
  r &= mask;
  return r >> (bits - 1) ? static_cast<int64_t>(r) - static_cast<int64_t>(mask) - 1
                         : static_cast<int64_t>(r);  // as the signed `bits`-wide value
}
int64_t ref_shr(int64_t x, int64_t n, int bits) { return x >> (n < 0 || n >= bits ? bits - 1 : n); }

TEST(Math, Shifts) {
  Tensor u = Tensor::from_vector<uint8_t>({1, 3, 31, 200});
  EXPECT_EQ(u.lshift(2).data<uint8_t>(), (std::vector<uint8_t>{4, 12, 124, 32}));  // wraps
  EXPECT_EQ((u << 2).dtype(), dtypes::uint8);
  EXPECT_EQ(Tensor::from_vector<uint8_t>({4, 13, 125, 255}).rshift(2).data<uint8_t>(),
            (std::vector<uint8_t>{1, 3, 31, 63}));
  EXPECT_EQ((u >> 0).data<uint8_t>(), (std::vector<uint8_t>{1, 3, 31, 200}));
  EXPECT_EQ((u >> 8).data<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ((u << 9).data<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ((u >> -1).data<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 0}));
  Tensor big = Tensor::from_vector<uint64_t>({uint64_t{1} << 63, 12345});
  EXPECT_EQ(big.rshift(63).data<uint64_t>(), (std::vector<uint64_t>{1, 0}));
  EXPECT_EQ(big.lshift(63).data<uint64_t>(), (std::vector<uint64_t>{0, uint64_t{1} << 63}));

  // signed: << wraps, >> is arithmetic; constant counts in and out of range
  std::vector<int32_t> xs = {-1, -3, 1, 7, 0, INT32_MIN, INT32_MAX, -1000000};
  Tensor s = Tensor::from_vector<int32_t>(xs);
  for (int64_t n : {0, 1, 2, 8, 31, 32, 40, -1}) {
    std::vector<int32_t> shl, shr;
    for (int32_t x : xs) {
      shl.push_back(static_cast<int32_t>(ref_shl(x, n, 32)));
      shr.push_back(static_cast<int32_t>(ref_shr(x, n, 32)));
    }
    EXPECT_EQ((s << n).data<int32_t>(), shl) << "int32 << " << n;
    EXPECT_EQ((s >> n).data<int32_t>(), shr) << "int32 >> " << n;
    EXPECT_EQ((s << n).dtype(), dtypes::int32);
  }

  // tensor counts, broadcast (4, 1) x (6,), in and out of range, for each integer width
  std::vector<int64_t> counts = {0, 3, 7, 63, 64, -2};
  std::vector<int64_t> values = {-5, 100, -128, 127};
  for (DType d :
       {dtypes::int8, dtypes::int16, dtypes::int32, dtypes::int64, dtypes::uint8, dtypes::uint32}) {
    int bits = 8 * d.itemsize();
    Tensor x = Tensor::from_vector<int64_t>(values, Shape{4, 1}).cast(d);
    Tensor c = Tensor::from_vector<int64_t>(counts).cast(d);
    Tensor l = x << c, r = x >> c;
    ASSERT_EQ(l.dtype(), d);
    ASSERT_EQ(l.shape(), (Shape{4, 6}));
    std::vector<int64_t> got_l = l.cast(dtypes::int64).data<int64_t>();
    std::vector<int64_t> got_r = r.cast(dtypes::int64).data<int64_t>();
    for (size_t i = 0; i < values.size(); i++) {
      for (size_t j = 0; j < counts.size(); j++) {
        // the operands as d holds them (a negative count of an unsigned d is a huge one)
        int64_t xv = cast_int(values[i], d), cv = cast_int(counts[j], d);
        int64_t want_l =
            dtypes::is_unsigned(d) ? cast_int(ref_shl(xv, cv, 64), d) : ref_shl(xv, cv, bits);
        int64_t want_r =
            dtypes::is_unsigned(d) ? (cv < 0 || cv >= bits ? 0 : xv >> cv) : ref_shr(xv, cv, bits);
        if (dtypes::is_unsigned(d) && (cv < 0 || cv >= bits)) want_l = 0;
        EXPECT_EQ(got_l[i * counts.size() + j], want_l) << d.name() << " " << xv << " << " << cv;
        EXPECT_EQ(got_r[i * counts.size() + j], want_r) << d.name() << " " << xv << " >> " << cv;
      }
    }
  }
  // operands promote as in a binary op: uint8 with int32 counts shifts in int32
  Tensor p = Tensor::from_vector<uint8_t>({200}).lshift(Tensor::from_vector<int32_t>({4}));
  EXPECT_EQ(p.dtype(), dtypes::int32);
  EXPECT_EQ(p.data<int32_t>(), (std::vector<int32_t>{3200}));
  // both operands constants (folded at compile time)
  EXPECT_EQ(
      (Tensor::full({2}, -8, dtypes::int32) >> Tensor::full({2}, 1, dtypes::int32)).data<int32_t>(),
      (std::vector<int32_t>{-4, -4}));

  auto expect_error = [](const std::function<void()>& f, const std::string& part) {
    try {
      f();
      ADD_FAILURE() << "no tc::Error, expected one mentioning " << part;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  Tensor f = Tensor(std::vector<float>{1.0f});
  expect_error([&] { f >> 1; }, "Tensor.rshift: needs integer tensors, got float");
  expect_error([&] { s << f; }, "Tensor.lshift: needs integer tensors, got int and float");
  expect_error([&] { Tensor::from_vector<bool>({true}) << Tensor::from_vector<bool>({true}); },
               "Tensor.lshift: needs integer tensors, got bool and bool");
  expect_error([&] { s << Tensor::from_vector<int32_t>({1, 2}); }, "(8,) and (2,)");
}

TEST(Math, Fmod) {
  // tinygrad's test values: every sign combination, as ints and floats
  std::vector<int32_t> a = {-4, 7, 5, 4, -7, 8, -9}, b = {2, -3, 8, -2, 3, 5, -5};
  Tensor ia = Tensor::from_vector<int32_t>(a), ib = Tensor::from_vector<int32_t>(b);
  std::vector<int32_t> want_int;
  for (size_t i = 0; i < a.size(); i++) want_int.push_back(a[i] % b[i]);  // C's %
  EXPECT_EQ(ia.fmod(ib).dtype(), dtypes::int32);
  EXPECT_EQ(ia.fmod(ib).data<int32_t>(), want_int);
  for (const auto& [x, y] : {std::pair{ia.float_(), ib}, std::pair{ia, ib.float_()},
                             std::pair{ia.float_(), ib.float_()}}) {
    Tensor r = x.fmod(y);
    EXPECT_EQ(r.dtype(), dtypes::float32);
    std::vector<float> got = r.data<float>();
    for (size_t i = 0; i < a.size(); i++) EXPECT_EQ(got[i], std::fmod(a[i], b[i])) << a[i];
  }
  // scalars: an int keeps the int dtype, a float makes it float
  std::vector<int32_t> want2;
  for (int32_t x : a) want2.push_back(x % 2);
  EXPECT_EQ(ia.fmod(2).data<int32_t>(), want2);
  Tensor r35 = ia.fmod(3.5);
  EXPECT_EQ(r35.dtype(), dtypes::float32);
  std::vector<float> got35 = r35.data<float>();
  for (size_t i = 0; i < a.size(); i++) EXPECT_EQ(got35[i], std::fmod(a[i], 3.5)) << a[i];
  // float values against libm, broadcast (5, 1) x (4,)
  std::vector<float> fx = {-7.5f, 5.25f, 0.0f, 100.0f, -1e-3f}, fy = {2.0f, -0.75f, 3.5f, 1.5f};
  std::vector<float> got = Tensor(fx, Shape{5, 1}).fmod(Tensor(fy)).data<float>();
  for (size_t i = 0; i < fx.size(); i++)
    for (size_t j = 0; j < fy.size(); j++)
      EXPECT_NEAR(got[i * fy.size() + j], std::fmod(fx[i], fy[j]), 1e-6) << fx[i] << " " << fy[j];
  EXPECT_THROW(Tensor::from_vector<bool>({true}).fmod(Tensor::from_vector<bool>({true})), Error);
}

TEST(Math, Log10) {
  std::vector<double> xs = grid(1e-3, 1e4, 20000);
  for (double v : {0.0, -1.0, kInf, -kInf, kNan, 1e-30, 1e30}) xs.push_back(v);
  expect_matches(
      "log10", [](const Tensor& t) { return t.log10(); }, std::log10, xs, 1e-7, 1e-6);
  Tensor i = Tensor::from_vector<int32_t>({1, 10, 1000});
  EXPECT_EQ(i.log10().dtype(), dtypes::float32);
  std::vector<float> got = i.log10().data<float>(), want = {0, 1, 3};
  for (size_t k = 0; k < got.size(); k++) EXPECT_NEAR(got[k], want[k], 1e-6) << k;
}

// log(e^a + e^b) in double, written as max + log1p(e^-|a - b|).
double ref_logaddexp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNan;
  double m = std::max(a, b);
  if (std::isinf(m)) return m;
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

TEST(Math, Logaddexp) {
  std::vector<double> as = {-1, -100, -200, -300, 1, 2000, 30000, 0, -kInf, -kInf, kInf, kNan, 5};
  std::vector<double> bs = {-1, -1, 2, 3, -1, 2, 3, 0, -kInf, 1, 1, 1, 88};
  Tensor r = Tensor(to_f32(as)).logaddexp(Tensor(to_f32(bs)));
  EXPECT_EQ(r.dtype(), dtypes::float32);
  std::vector<float> got = r.data<float>();
  for (size_t i = 0; i < as.size(); i++) {
    double want = ref_logaddexp(as[i], bs[i]);
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got[i])) << as[i] << " " << bs[i];
    else if (std::isinf(want))
      EXPECT_EQ(got[i], want) << as[i] << " " << bs[i];
    else
      EXPECT_NEAR(got[i], want, 1e-6 + 1e-6 * std::fabs(want)) << as[i] << " " << bs[i];
  }
  // broadcast with a scalar, integer inputs become float32
  Tensor s = Tensor::from_vector<int32_t>({0, 1, 2}).logaddexp(1);
  EXPECT_EQ(s.dtype(), dtypes::float32);
  std::vector<float> gs = s.data<float>();
  for (int k = 0; k < 3; k++) EXPECT_NEAR(gs[k], ref_logaddexp(k, 1), 1e-6);
  EXPECT_EQ(Tensor::zeros({2, 1}).logaddexp(Tensor::zeros({3})).shape(), (Shape{2, 3}));
  // d/da = sigmoid(a - b)
  tcgrad::check_grad(
      tcgrad::binary([](const Tensor& x, const Tensor& y) { return x.logaddexp(y); }),
      {{{2, 3}, tcgrad::mixed(6)}, {{3}, {0.5, -2.0, 40.0}}});
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
  // a float divisor: float division, rounded, in the promoted float dtype (torch, tinygrad)
  Tensor g = Tensor::from_vector<int32_t>({7, -7}).div(2.5, "floor");
  EXPECT_EQ(g.dtype(), dtypes::float32);
  EXPECT_EQ(g.data<float>(), (std::vector<float>{2, -3}));
  // integers of two widths: the promoted dtype; uint64 beyond 2^63 divides exactly
  Tensor w =
      Tensor::from_vector<int8_t>({-7, 7}).div(Tensor::from_vector<int32_t>({2, 2}), "floor");
  EXPECT_EQ(w.dtype(), dtypes::int32);
  EXPECT_EQ(w.data<int32_t>(), (std::vector<int32_t>{-4, 3}));
  const uint64_t top = ~uint64_t{0};
  Tensor u = Tensor::from_vector<uint64_t>({top, top - 1, uint64_t{1} << 63});
  EXPECT_EQ(u.div(1, "trunc").data<uint64_t>(),
            (std::vector<uint64_t>{top, top - 1, uint64_t{1} << 63}));
  EXPECT_EQ(u.div(2, "floor").data<uint64_t>(),
            (std::vector<uint64_t>{top / 2, (top - 1) / 2, uint64_t{1} << 62}));
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
