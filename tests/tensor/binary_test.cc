// Binary ops against a naive double-precision reference: arithmetic, comparisons, idiv, Python's
// mod, bitwise ops, broadcasting and scalar operands, for float, int and unsigned dtypes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/tensor/reference.h"
#include "tinycore/dtype.h"
#include "tinycore/error.h"
#include "tinycore/runtime/device.h"
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

// ================================================================== binary

struct BinaryCase {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<double(double, double)> ref;
  bool boolean;  // result is bool
  double rtol;
};

std::vector<BinaryCase> float_binary_cases() {
  return {
      {"add", [](const Tensor& a, const Tensor& b) { return a.add(b); },
       [](double a, double b) { return a + b; }, false, kF32},
      {"+", [](const Tensor& a, const Tensor& b) { return a + b; },
       [](double a, double b) { return a + b; }, false, kF32},
      {"sub", [](const Tensor& a, const Tensor& b) { return a.sub(b); },
       [](double a, double b) { return a - b; }, false, kF32},
      {"-", [](const Tensor& a, const Tensor& b) { return a - b; },
       [](double a, double b) { return a - b; }, false, kF32},
      {"mul", [](const Tensor& a, const Tensor& b) { return a * b; },
       [](double a, double b) { return a * b; }, false, kF32},
      {"div", [](const Tensor& a, const Tensor& b) { return a.div(b); },
       [](double a, double b) { return a / b; }, false, kF32},
      {"/", [](const Tensor& a, const Tensor& b) { return a / b; },
       [](double a, double b) { return a / b; }, false, kF32},
      {"maximum", [](const Tensor& a, const Tensor& b) { return a.maximum(b); },
       [](double a, double b) { return std::max(a, b); }, false, 0},
      {"minimum", [](const Tensor& a, const Tensor& b) { return a.minimum(b); },
       [](double a, double b) { return std::min(a, b); }, false, 0},
      {"mod", [](const Tensor& a, const Tensor& b) { return a.mod(b); }, ref::py_mod, false, kF32},
  };
}

std::vector<BinaryCase> comparison_cases() {
  return {
      {"lt", [](const Tensor& a, const Tensor& b) { return a.lt(b); },
       [](double a, double b) { return a < b ? 1. : 0.; }, true, 0},
      {"gt", [](const Tensor& a, const Tensor& b) { return a.gt(b); },
       [](double a, double b) { return a > b ? 1. : 0.; }, true, 0},
      {"le", [](const Tensor& a, const Tensor& b) { return a.le(b); },
       [](double a, double b) { return a <= b ? 1. : 0.; }, true, 0},
      {"ge", [](const Tensor& a, const Tensor& b) { return a.ge(b); },
       [](double a, double b) { return a >= b ? 1. : 0.; }, true, 0},
      {"eq", [](const Tensor& a, const Tensor& b) { return a.eq(b); },
       [](double a, double b) { return a == b ? 1. : 0.; }, true, 0},
      {"ne", [](const Tensor& a, const Tensor& b) { return a.ne(b); },
       [](double a, double b) { return a != b ? 1. : 0.; }, true, 0},
  };
}

// divisors bounded away from zero: |b| in [0.5, 2]
NDArray divisors(const S& shape, uint64_t seed) {
  return ref::map(ref::random(shape, seed, -1.5, 1.5), [](double v) {
    return static_cast<double>(static_cast<float>(v < 0 ? v - 0.5 : v + 0.5));
  });
}

TEST(Binary, Float32SameShape) {
  NDArray a = ref::random({4, 5}, 11, -3, 3), b = divisors({4, 5}, 12);
  for (const BinaryCase& c : float_binary_cases()) {
    Tensor out = c.op(ref::tensor(a), ref::tensor(b));
    EXPECT_EQ(out.dtype(), dt::float32) << c.name;
    ref::expect_close(out, ref::zip(a, b, c.ref), c.rtol, c.rtol, c.name);
  }
}

TEST(Binary, Comparisons) {
  // small integers stored as float32 and int32 so that equal elements occur
  NDArray a = ref::random_int({4, 6}, 21, -2, 2), b = ref::random_int({4, 6}, 22, -2, 2);
  for (DType d : {dt::float32, dt::int32, dt::uint8, dt::float16}) {
    NDArray ad = d == dt::uint8 ? ref::map(a, [](double v) { return v + 2; }) : a;
    NDArray bd = d == dt::uint8 ? ref::map(b, [](double v) { return v + 2; }) : b;
    for (const BinaryCase& c : comparison_cases()) {
      std::string what = std::string(c.name) + " " + d.name();
      Tensor out = c.op(ref::tensor(ad, d), ref::tensor(bd, d));
      EXPECT_EQ(out.dtype(), dt::bool_) << what;
      ref::expect_exact(out, ref::zip(ad, bd, c.ref), what);
    }
  }
  // bool comparisons
  NDArray p = vals({4}, {0, 0, 1, 1}), q = vals({4}, {0, 1, 0, 1});
  Tensor tp = ref::tensor(p, dt::bool_), tq = ref::tensor(q, dt::bool_);
  ref::expect_exact(tp.lt(tq), vals({4}, {0, 1, 0, 0}), "lt bool");
  ref::expect_exact(tp.eq(tq), vals({4}, {1, 0, 0, 1}), "eq bool");
  ref::expect_exact(tp.ne(tq), vals({4}, {0, 1, 1, 0}), "ne bool");
  ref::expect_exact(tp.ge(tq), vals({4}, {1, 0, 1, 1}), "ge bool");
}

TEST(Binary, IntegerArithmetic) {
  NDArray a = ref::random_int({5, 6}, 31, -50, 50), b = ref::random_int({5, 6}, 32, -50, 50);
  for (DType d : {dt::int32, dt::int64, dt::int16}) {
    Tensor x = ref::tensor(a, d), y = ref::tensor(b, d);
    std::string n = d.name();
    EXPECT_EQ((x + y).dtype(), d);
    ref::expect_exact(x + y, ref::zip(a, b, [](double p, double q) { return p + q; }), "add " + n);
    ref::expect_exact(x - y, ref::zip(a, b, [](double p, double q) { return p - q; }), "sub " + n);
    ref::expect_exact(x * y, ref::zip(a, b, [](double p, double q) { return p * q; }), "mul " + n);
    ref::expect_exact(x.maximum(y),
                      ref::zip(a, b, [](double p, double q) { return std::max(p, q); }),
                      "max " + n);
    ref::expect_exact(x.minimum(y),
                      ref::zip(a, b, [](double p, double q) { return std::min(p, q); }),
                      "min " + n);
    EXPECT_EQ(x.minimum(y).dtype(), d);
  }
  // unsigned: minimum / maximum / add
  NDArray u = ref::random_int({12}, 33, 0, 255), v = ref::random_int({12}, 34, 0, 255);
  Tensor x = ref::tensor(u, dt::uint8), y = ref::tensor(v, dt::uint8);
  ref::expect_exact(x.minimum(y), ref::zip(u, v, [](double p, double q) { return std::min(p, q); }),
                    "min uint8");
  ref::expect_exact(x.maximum(y), ref::zip(u, v, [](double p, double q) { return std::max(p, q); }),
                    "max uint8");
  ref::expect_exact(x + y, ref::zip(u, v, [](double p, double q) { return std::fmod(p + q, 256); }),
                    "add uint8 wraps");
}

// A bool operand is promoted before minimum negates it (-true is not `not true`).
TEST(Binary, MinimumOfBoolAndFloatPromotesFirst) {
  Tensor m = Tensor::from_vector<bool>({true, false, false}).minimum(Tensor::full({}, 1.2));
  EXPECT_EQ(m.dtype(), dt::float32);
  EXPECT_EQ(m.data<float>(), (std::vector<float>{1.0f, 0.0f, 0.0f}));
}

TEST(Binary, IdivTruncatesTowardZero) {
  NDArray a = ref::random_int({6, 7}, 41, -40, 40);
  NDArray b =
      ref::map(ref::random_int({6, 7}, 42, -6, 6), [](double v) { return v == 0 ? 3.0 : v; });
  for (DType d : {dt::int32, dt::int64, dt::int16}) {
    Tensor out = ref::tensor(a, d).idiv(ref::tensor(b, d));
    EXPECT_EQ(out.dtype(), d);
    ref::expect_exact(out, ref::zip(a, b, [](double p, double q) { return std::trunc(p / q); }),
                      "idiv " + d.name());
  }
  NDArray ua = ref::random_int({10}, 43, 0, 255), ub = ref::random_int({10}, 44, 1, 17);
  ref::expect_exact(ref::tensor(ua, dt::uint8).idiv(ref::tensor(ub, dt::uint8)),
                    ref::zip(ua, ub, [](double p, double q) { return std::trunc(p / q); }),
                    "idiv uint8");
  ref::expect_exact(ref::tensor(vals({4}, {7, -7, 7, -7}), dt::int32)
                        .idiv(ref::tensor(vals({4}, {2, 2, -2, -2}), dt::int32)),
                    vals({4}, {3, -3, -3, 3}), "idiv signs");
}

TEST(Binary, ModHasSignOfDivisor) {
  NDArray a = ref::random_int({6, 7}, 51, -40, 40);
  NDArray b =
      ref::map(ref::random_int({6, 7}, 52, -6, 6), [](double v) { return v == 0 ? -4.0 : v; });
  for (DType d : {dt::int32, dt::int64, dt::int8}) {
    Tensor out = ref::tensor(a, d).mod(ref::tensor(b, d));
    EXPECT_EQ(out.dtype(), d);
    ref::expect_exact(out, ref::zip(a, b, ref::py_mod), "mod " + d.name());
  }
  ref::expect_exact(ref::tensor(vals({6}, {7, -7, 7, -7, 6, -6}), dt::int32)
                        .mod(ref::tensor(vals({6}, {3, 3, -3, -3, -3, 3}), dt::int32)),
                    vals({6}, {1, 2, -2, -1, 0, 0}), "mod signs");
  NDArray ua = ref::random_int({10}, 53, 0, 255), ub = ref::random_int({10}, 54, 1, 17);
  ref::expect_exact(ref::tensor(ua, dt::uint8).mod(ref::tensor(ub, dt::uint8)),
                    ref::zip(ua, ub, ref::py_mod), "mod uint8");
  // floats
  NDArray fa = ref::random({5, 5}, 55, -10, 10), fb = divisors({5, 5}, 56);
  ref::expect_close(ref::tensor(fa).mod(ref::tensor(fb)), ref::zip(fa, fb, ref::py_mod), kF32, 1e-5,
                    "mod float32");
  ref::expect_close(
      ref::tensor(vals({4}, {5.5, -5.5, 5.5, -5.5})).mod(ref::tensor(vals({4}, {2, 2, -2, -2}))),
      vals({4}, {1.5, 0.5, -0.5, -1.5}), kF32, 0, "mod float signs");
}

TEST(Binary, Bitwise) {
  NDArray a = ref::random_int({4, 5}, 61, -100, 100), b = ref::random_int({4, 5}, 62, -100, 100);
  auto as_int = [](double v) { return static_cast<int64_t>(v); };
  for (DType d : {dt::int32, dt::int64, dt::int16}) {
    Tensor x = ref::tensor(a, d), y = ref::tensor(b, d);
    ref::expect_exact(
        x.bitwise_and(y),
        ref::zip(a, b,
                 [&](double p, double q) { return static_cast<double>(as_int(p) & as_int(q)); }),
        "and " + d.name());
    ref::expect_exact(
        x.bitwise_or(y),
        ref::zip(a, b,
                 [&](double p, double q) { return static_cast<double>(as_int(p) | as_int(q)); }),
        "or " + d.name());
    ref::expect_exact(
        x.bitwise_xor(y),
        ref::zip(a, b,
                 [&](double p, double q) { return static_cast<double>(as_int(p) ^ as_int(q)); }),
        "xor " + d.name());
  }
  NDArray u = ref::random_int({8}, 63, 0, 255), v = ref::random_int({8}, 64, 0, 255);
  ref::expect_exact(
      ref::tensor(u, dt::uint8).bitwise_xor(ref::tensor(v, dt::uint8)),
      ref::zip(u, v,
               [&](double p, double q) { return static_cast<double>(as_int(p) ^ as_int(q)); }),
      "xor uint8");
  NDArray p = vals({4}, {0, 0, 1, 1}), q = vals({4}, {0, 1, 0, 1});
  Tensor tp = ref::tensor(p, dt::bool_), tq = ref::tensor(q, dt::bool_);
  EXPECT_EQ(tp.bitwise_and(tq).dtype(), dt::bool_);
  ref::expect_exact(tp.bitwise_and(tq), vals({4}, {0, 0, 0, 1}), "and bool");
  ref::expect_exact(tp.bitwise_or(tq), vals({4}, {0, 1, 1, 1}), "or bool");
  ref::expect_exact(tp.bitwise_xor(tq), vals({4}, {0, 1, 1, 0}), "xor bool");
  // bool + bool is logical or, bool * bool logical and
  EXPECT_EQ((tp + tq).dtype(), dt::bool_);
  ref::expect_exact(tp + tq, vals({4}, {0, 1, 1, 1}), "bool add");
  ref::expect_exact(tp * tq, vals({4}, {0, 0, 0, 1}), "bool mul");
}

// Tensor.dot4 (Ops::DOT4) against bytes multiplied one by one: every byte value on both sides,
// sums that wrap, vectors and a scalar tail, broadcasting; on the CPU with vpdpbusd where it has
// it and with the generic IR (CPU_BYTE_DOT=0), and in the C-style renderer on the CL device.
TEST(Binary, Dot4AddsTheProductsOfUnsignedBytesWithSignedOnes) {
  std::mt19937 rng(65);
  std::vector<int32_t> a(67 * 16), b(a.size()), c(a.size());
  for (size_t i = 0; i < a.size(); i++)
    a[i] = static_cast<int32_t>(rng()), b[i] = static_cast<int32_t>(rng()),
    c[i] = static_cast<int32_t>(rng());
  a[0] = -1, b[0] = static_cast<int32_t>(0x80808080u), c[0] = INT32_MIN;  // 255 * -128, wrapping
  auto reference = [&](size_t n, bool broadcast_b) {
    std::vector<int32_t> r(n);
    for (size_t i = 0; i < n; i++) {
      uint32_t wa = static_cast<uint32_t>(a[i]), wb = static_cast<uint32_t>(b[broadcast_b ? 0 : i]);
      int64_t sum = c[i];
      for (int k = 0; k < 32; k += 8)
        sum += static_cast<int64_t>((wa >> k) & 255) * static_cast<int8_t>((wb >> k) & 255);
      r[i] = static_cast<int32_t>(static_cast<uint32_t>(sum));
    }
    return r;
  };
  auto names = tc::runtime::available_devices();
  bool cl = std::find(names.begin(), names.end(), "CL") != names.end();
  for (const char* device : {"CPU", "CPU_BYTE_DOT=0", "CL"}) {
    if (std::string(device) == "CL" && !cl) continue;
    bool generic = std::string(device) == "CPU_BYTE_DOT=0";
    if (generic) setenv("CPU_BYTE_DOT", "0", 1);
    std::string on = generic ? "CPU" : device;
    for (int64_t n : {int64_t{67} * 16 - (generic ? 16 : 0), int64_t{37}}) {  // shapes unseen
      auto t = [&](const std::vector<int32_t>& v) {
        return Tensor::from_vector<int32_t>({v.begin(), v.begin() + n}).to(on);
      };
      EXPECT_EQ(t(a).dot4(t(b), t(c)).data<int32_t>(), reference(n, false)) << device << " " << n;
      Tensor one = Tensor::from_vector<int32_t>({b[0]}).to(on);
      EXPECT_EQ(t(a).dot4(one, t(c)).data<int32_t>(), reference(n, true)) << device << " " << n;
    }
    if (generic) unsetenv("CPU_BYTE_DOT");
  }
  EXPECT_THROW(Tensor::from_vector<float>({1.0f}).dot4(Tensor::from_vector<int32_t>({1}),
                                                       Tensor::from_vector<int32_t>({1})),
               tc::Error);
}

struct Shapes {
  S a, b;
};

TEST(Binary, Broadcasting) {
  std::vector<Shapes> shapes = {
      {{3, 1}, {1, 4}}, {{2, 3, 4}, {4}},      {{4}, {2, 3, 4}}, {{2, 1, 4}, {3, 1}},
      {{}, {2, 3}},     {{2, 3}, {}},          {{1}, {5}},       {{5, 1, 1}, {1, 1, 2}},
      {{2, 3}, {2, 3}}, {{1, 3, 1}, {2, 1, 2}}};
  uint64_t seed = 100;
  for (const Shapes& s : shapes) {
    NDArray a = ref::random(s.a, seed++, -3, 3), b = divisors(s.b, seed++);
    for (const BinaryCase& c : float_binary_cases()) {
      std::string what =
          std::string(c.name) + " " + ref::shape_str(s.a) + " " + ref::shape_str(s.b);
      Tensor out = c.op(ref::tensor(a), ref::tensor(b));
      ref::expect_close(out, ref::zip(a, b, c.ref), c.rtol, c.rtol, what);
    }
    NDArray ia = ref::random_int(s.a, seed++, -2, 2), ib = ref::random_int(s.b, seed++, -2, 2);
    for (const BinaryCase& c : comparison_cases()) {
      std::string what =
          std::string(c.name) + " " + ref::shape_str(s.a) + " " + ref::shape_str(s.b);
      ref::expect_exact(c.op(ref::tensor(ia, dt::int32), ref::tensor(ib, dt::int32)),
                        ref::zip(ia, ib, c.ref), what);
    }
  }
}

TEST(Binary, ScalarOperands) {
  NDArray a = divisors({3, 4}, 71);
  Tensor x = ref::tensor(a);
  auto f = [&](const char* what, const Tensor& t, const std::function<double(double)>& r) {
    EXPECT_EQ(t.dtype(), dt::float32) << what;
    ref::expect_close(t, ref::map(a, r), kF32, kF32, what);
  };
  f("x + 2", x + 2, [](double v) { return v + 2; });
  f("2 + x", 2 + x, [](double v) { return 2 + v; });
  f("x - 2.5", x - 2.5, [](double v) { return v - 2.5; });
  f("2.5 - x", 2.5 - x, [](double v) { return 2.5 - v; });
  f("x * 3", x * 3, [](double v) { return v * 3; });
  f("-1.5 * x", -1.5 * x, [](double v) { return -1.5 * v; });
  f("x / 4", x / 4, [](double v) { return v / 4; });
  f("4 / x", 4 / x, [](double v) { return 4 / v; });
  f("x.sub(1, reverse)", x.sub(1, true), [](double v) { return 1 - v; });
  f("x.div(3.0, reverse)", x.div(3.0, true), [](double v) { return 3 / v; });
  f("x.maximum(0.5)", x.maximum(0.5), [](double v) { return std::max(v, 0.5); });
  f("x.minimum(-0.5)", x.minimum(-0.5), [](double v) { return std::min(v, -0.5); });
  f("x.maximum(0)", x.maximum(0), [](double v) { return std::max(v, 0.0); });
  auto cmp = [&](const char* what, const Tensor& t, const std::function<bool(double)>& r) {
    EXPECT_EQ(t.dtype(), dt::bool_) << what;
    ref::expect_exact(t, ref::map(a, [&](double v) { return r(v) ? 1.0 : 0.0; }), what);
  };
  cmp("x < 0", x.lt(0), [](double v) { return v < 0; });
  cmp("x > 0.75", x.gt(0.75), [](double v) { return v > 0.75; });
  cmp("x <= 1", x.le(1), [](double v) { return v <= 1; });
  cmp("x >= -1", x.ge(-1.0), [](double v) { return v >= -1; });
  cmp("x == x[0]", x.eq(static_cast<double>(a.v[0])), [&](double v) { return v == a.v[0]; });
  cmp("x != x[0]", x.ne(static_cast<double>(a.v[0])), [&](double v) { return v != a.v[0]; });

  // integer tensors: an int scalar keeps the dtype, a float one makes float32
  NDArray ia = ref::random_int({2, 5}, 72, -20, 20);
  Tensor xi = ref::tensor(ia, dt::int32);
  EXPECT_EQ((xi + 2).dtype(), dt::int32);
  ref::expect_exact(xi + 2, ref::map(ia, [](double v) { return v + 2; }), "int + 2");
  ref::expect_exact(7 - xi, ref::map(ia, [](double v) { return 7 - v; }), "7 - int");
  ref::expect_exact(xi * -3, ref::map(ia, [](double v) { return v * -3; }), "int * -3");
  EXPECT_EQ((xi + 2.5).dtype(), dt::float32);
  ref::expect_close(xi + 2.5, ref::map(ia, [](double v) { return v + 2.5; }), kF32, 0, "int + 2.5");
  EXPECT_EQ((xi / 2).dtype(), dt::float32);
  ref::expect_close(xi / 2, ref::map(ia, [](double v) { return v / 2; }), kF32, 0, "int / 2");
  ref::expect_exact(xi.maximum(3), ref::map(ia, [](double v) { return std::max(v, 3.0); }),
                    "int maximum 3");
  ref::expect_exact(xi.minimum(-4), ref::map(ia, [](double v) { return std::min(v, -4.0); }),
                    "int minimum -4");
  ref::expect_exact(xi.lt(1), ref::map(ia, [](double v) { return v < 1 ? 1.0 : 0.0; }), "int < 1");
  ref::expect_exact(xi.eq(0), ref::map(ia, [](double v) { return v == 0 ? 1.0 : 0.0; }),
                    "int == 0");
}

}  // namespace
