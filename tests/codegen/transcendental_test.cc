// The transcendental approximations of codegen (transcendental.h), run through Tensor on sweeps
// of the whole float32 range (by bit pattern: every exponent, both signs, denormals) and on the
// IEEE special values, measured in ulps against double-precision libm.
#include "tinycore/codegen/transcendental.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tinycore/tensor.h"

namespace tc::codegen {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// 2^20 float32 values spread over every bit pattern (so over every exponent and both signs), NaNs
// included, plus the special values.
std::vector<float> sweep() {
  std::vector<float> v;
  const uint32_t n = 1u << 20;
  v.reserve(n + 16);
  for (uint32_t i = 0; i < n; i++) v.push_back(from_bits((i << 12) | ((i * 2654435761u) >> 20)));
  for (float f : {0.0f, -0.0f, kInf, -kInf, kNan, 1.0f, -1.0f, std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
                  -std::numeric_limits<float>::max()})
    v.push_back(f);
  return v;
}

// Distance from `got` to the exact value `want` in units of the float32 spacing at `want`
// (denormal spacing below the normal range). NaN must match NaN; infinities must match exactly
// what rounding `want` to float32 gives.
double ulp_error(float got, double want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0 : 1e30;
  float rounded = static_cast<float>(want);
  if (std::isinf(rounded) || std::isinf(got)) return rounded == got ? 0 : 1e30;
  double a = std::abs(want);
  int e = a < std::numeric_limits<float>::min() ? -126 : std::ilogb(a);
  double ulp = std::ldexp(1.0, e - 23);
  return std::abs(static_cast<double>(got) - want) / ulp;
}

struct Worst {
  double ulp = 0;
  float x = 0;
  float got = 0;
  double want = 0;
};

Worst measure(const std::vector<float>& xs, const std::function<Tensor(const Tensor&)>& op,
              double (*ref)(double), const std::function<bool(float)>& in_range = nullptr) {
  std::vector<float> got = op(Tensor(xs)).data<float>();
  Worst w;
  EXPECT_EQ(got.size(), xs.size());
  for (size_t i = 0; i < xs.size() && i < got.size(); i++) {
    if (in_range && !in_range(xs[i])) continue;
    double want = ref(static_cast<double>(xs[i]));
    double e = ulp_error(got[i], want);
    if (e > w.ulp) w = {e, xs[i], got[i], want};
  }
  return w;
}

std::string describe(const char* name, const Worst& w) {
  char buf[200];
  std::snprintf(buf, sizeof(buf), "%s: max %.3f ulp at x=%a (got %a, want %a)", name, w.ulp, w.x,
                w.got, w.want);
  return buf;
}

TEST(Transcendental, Exp2SweepWithin2Ulp) {
  Worst w = measure(
      sweep(), [](const Tensor& t) { return t.exp2(); }, [](double x) { return std::exp2(x); });
  RecordProperty("max_ulp", std::to_string(w.ulp));
  std::printf("%s\n", describe("exp2", w).c_str());
  EXPECT_LE(w.ulp, 2) << describe("exp2", w);
}

TEST(Transcendental, Log2SweepWithin2Ulp) {
  Worst w = measure(
      sweep(), [](const Tensor& t) { return t.log2(); }, [](double x) { return std::log2(x); });
  std::printf("%s\n", describe("log2", w).c_str());
  EXPECT_LE(w.ulp, 2) << describe("log2", w);
}

TEST(Transcendental, SinSweepWithin2Ulp) {
  Worst w = measure(
      sweep(), [](const Tensor& t) { return t.sin(); }, [](double x) { return std::sin(x); });
  std::printf("%s\n", describe("sin", w).c_str());
  EXPECT_LE(w.ulp, 2) << describe("sin", w);
}

// Dense sweeps where the functions are hardest: near the zeros of sin (multiples of pi), around
// log2(1), and over exp2's whole finite range.
TEST(Transcendental, DenseRanges) {
  std::vector<float> near_pi, near_one, exp_range;
  for (int k = -2000; k <= 2000; k++) {
    if (k == 0) continue;
    float c = static_cast<float>(k * M_PI);
    uint32_t b;
    std::memcpy(&b, &c, 4);
    for (int d = -8; d <= 8; d++) near_pi.push_back(from_bits(b + static_cast<uint32_t>(d)));
  }
  for (int i = -20000; i <= 20000; i++) near_one.push_back(1.0f + static_cast<float>(i) * 1e-6f);
  for (int i = 0; i <= 300000; i++) exp_range.push_back(-155.0f + static_cast<float>(i) * 0.001f);
  Worst s = measure(
      near_pi, [](const Tensor& t) { return t.sin(); }, [](double x) { return std::sin(x); });
  Worst l = measure(
      near_one, [](const Tensor& t) { return t.log2(); }, [](double x) { return std::log2(x); });
  Worst e = measure(
      exp_range, [](const Tensor& t) { return t.exp2(); }, [](double x) { return std::exp2(x); });
  std::printf("%s\n%s\n%s\n", describe("sin near k*pi", s).c_str(),
              describe("log2 near 1", l).c_str(), describe("exp2 [-155, 145]", e).c_str());
  EXPECT_LE(s.ulp, 2) << describe("sin", s);
  EXPECT_LE(l.ulp, 2) << describe("log2", l);
  EXPECT_LE(e.ulp, 2) << describe("exp2", e);
}

TEST(Transcendental, SpecialValues) {
  auto run = [](const std::vector<float>& xs, const std::function<Tensor(const Tensor&)>& op) {
    return op(Tensor(xs)).data<float>();
  };
  float dmin = std::numeric_limits<float>::denorm_min();
  std::vector<float> e = run(
      {kInf, -kInf, kNan, 128.0f, 127.0f, -126.0f, -149.0f, -150.0f, -160.0f, 0.0f, -0.0f, -140.5f},
      [](const Tensor& t) { return t.exp2(); });
  EXPECT_EQ(e[0], kInf);
  EXPECT_EQ(e[1], 0.0f);
  EXPECT_TRUE(std::isnan(e[2]));
  EXPECT_EQ(e[3], kInf);  // overflow
  EXPECT_EQ(e[4], std::ldexp(1.0f, 127));
  EXPECT_EQ(e[5], std::numeric_limits<float>::min());
  EXPECT_EQ(e[6], dmin);  // gradual underflow
  EXPECT_EQ(e[7], 0.0f);  // 2^-150 is a tie: rounds to even (0)
  EXPECT_EQ(e[8], 0.0f);
  EXPECT_EQ(e[9], 1.0f);
  EXPECT_EQ(e[10], 1.0f);
  EXPECT_EQ(e[11], static_cast<float>(std::exp2(-140.5)));  // a denormal

  std::vector<float> l =
      run({0.0f, -0.0f, -1.0f, -kInf, kInf, kNan, dmin, 3 * dmin, 1.0f, 2.0f, 0.5f, 1024.0f},
          [](const Tensor& t) { return t.log2(); });
  EXPECT_EQ(l[0], -kInf);
  EXPECT_EQ(l[1], -kInf);
  EXPECT_TRUE(std::isnan(l[2]));
  EXPECT_TRUE(std::isnan(l[3]));
  EXPECT_EQ(l[4], kInf);
  EXPECT_TRUE(std::isnan(l[5]));
  EXPECT_EQ(l[6], -149.0f);  // denormals
  EXPECT_EQ(l[7], static_cast<float>(std::log2(3.0) - 149));
  EXPECT_EQ(l[8], 0.0f);
  EXPECT_EQ(l[9], 1.0f);
  EXPECT_EQ(l[10], -1.0f);
  EXPECT_EQ(l[11], 10.0f);

  std::vector<float> s = run({kInf, -kInf, kNan, 0.0f, -0.0f, dmin, -dmin, 1e30f, -1e30f,
                              std::numeric_limits<float>::max()},
                             [](const Tensor& t) { return t.sin(); });
  EXPECT_TRUE(std::isnan(s[0]));
  EXPECT_TRUE(std::isnan(s[1]));
  EXPECT_TRUE(std::isnan(s[2]));
  EXPECT_EQ(s[3], 0.0f);
  EXPECT_EQ(s[4], 0.0f);
  EXPECT_EQ(s[5], dmin);  // sin(x) = x for tiny x
  EXPECT_EQ(s[6], -dmin);
  EXPECT_EQ(s[7], static_cast<float>(
                      std::sin(static_cast<double>(1e30f))));  // huge arguments are reduced exactly
  EXPECT_EQ(s[8], static_cast<float>(std::sin(static_cast<double>(-1e30f))));
  EXPECT_LE(ulp_error(s[9], std::sin(static_cast<double>(std::numeric_limits<float>::max()))), 1);
}

// exp has an op of its own (Cody-Waite reduced, in float32); log, cos and tan are built on
// log2/sin by Tensor, cos transforming its argument in float64 (pi/2 - x): all four stay within
// 2 ulp in float32.
TEST(Transcendental, DerivedFunctions) {
  std::vector<float> xs = sweep();
  Worst ex = measure(
      xs, [](const Tensor& t) { return t.exp(); }, [](double x) { return std::exp(x); });
  Worst lg = measure(
      xs, [](const Tensor& t) { return t.log(); }, [](double x) { return std::log(x); });
  std::printf("%s\n%s\n", describe("exp", ex).c_str(), describe("log", lg).c_str());
  EXPECT_LE(ex.ulp, 2) << describe("exp", ex);
  EXPECT_LE(lg.ulp, 2) << describe("log", lg);

  // cos(x) = sin(pi/2 - x) and tan = sin/cos: absolute error within the rounding of pi/2 - x
  std::vector<float> mid;
  for (int i = -200000; i <= 200000; i++) mid.push_back(static_cast<float>(i) * 1e-4f);
  std::vector<float> c = Tensor(mid).cos().data<float>();
  std::vector<float> t = Tensor(mid).tan().data<float>();
  double worst_cos = 0, worst_tan = 0;
  for (size_t i = 0; i < mid.size(); i++) {
    double x = mid[i];
    double slack = std::ldexp(1.0, -24) * std::max(1.0, std::abs(x) + M_PI / 2);
    worst_cos = std::max(worst_cos, std::abs(c[i] - std::cos(x)) / slack);
    double tx = std::tan(x), dt = 1 + tx * tx;  // d tan / dx
    worst_tan = std::max(worst_tan, std::abs(t[i] - tx) / (slack * dt + 4e-7 * std::abs(tx)));
  }
  std::printf(
      "cos: max %.3f x 2^-24 max(1, |x| + pi/2) absolute\ntan: max %.3f (relative to "
      "the same slack through tan')\n",
      worst_cos, worst_tan);
  EXPECT_LE(worst_cos, 2);
  EXPECT_LE(worst_tan, 2);
}

// Unvectorized kernels (NOOPT=1) give the same accuracy as the SIMD ones above, and float16
// goes through float32.
TEST(Transcendental, ScalarKernelsAndHalf) {
  std::vector<float> xs = sweep();
  xs.resize(100003);  // not a multiple of any lane count
  const char* old = std::getenv("NOOPT");
  std::string saved = old ? old : "";
  setenv("NOOPT", "1", 1);
  Worst e = measure(
      xs, [](const Tensor& t) { return t.exp2(); }, [](double x) { return std::exp2(x); });
  Worst l = measure(
      xs, [](const Tensor& t) { return t.log2(); }, [](double x) { return std::log2(x); });
  Worst s = measure(
      xs, [](const Tensor& t) { return t.sin(); }, [](double x) { return std::sin(x); });
  if (old)
    setenv("NOOPT", saved.c_str(), 1);
  else
    unsetenv("NOOPT");
  EXPECT_LE(e.ulp, 2) << describe("exp2 NOOPT", e);
  EXPECT_LE(l.ulp, 2) << describe("log2 NOOPT", l);
  EXPECT_LE(s.ulp, 2) << describe("sin NOOPT", s);

  std::vector<float> hx;
  for (int i = -3000; i <= 3000; i++) hx.push_back(static_cast<float>(i) * 0.01f);
  Tensor h = Tensor(hx).cast(dtypes::float16);
  std::vector<float> hv = h.cast(dtypes::float32).data<float>();
  std::vector<float> e2 = h.exp2().cast(dtypes::float32).data<float>();
  std::vector<float> s2 = h.sin().cast(dtypes::float32).data<float>();
  std::vector<float> l2 = h.abs().log2().cast(dtypes::float32).data<float>();
  for (size_t i = 0; i < hv.size(); i++) {
    auto half_round = [](double v) {
      return static_cast<float>(static_cast<_Float16>(static_cast<float>(v)));
    };
    ASSERT_EQ(e2[i], half_round(std::exp2(hv[i]))) << hv[i];
    ASSERT_EQ(s2[i], half_round(std::sin(hv[i]))) << hv[i];
    ASSERT_EQ(l2[i], half_round(std::log2(std::abs(hv[i])))) << hv[i];
  }
}

// The rewrite leaves no EXP2/EXP/LOG2/SIN behind for float32, none of EXP2/EXP/LOG2 for float64,
// and keeps float64 SIN for the intrinsic.
TEST(Transcendental, RewriteRemovesOps) {
  for (DType d : {dtypes::float32, dtypes::float64}) {
    UOpRef leaf = UOp::make(Ops::NOOP, d);
    for (Ops op : {Ops::EXP2, Ops::EXP, Ops::LOG2, Ops::SIN}) {
      UOpRef u = UOp::make(op, d, {leaf});
      UOpRef g = graph_rewrite(u, transcendental_rules(), "transcendental");
      if (d == dtypes::float64 && op == Ops::SIN) {
        EXPECT_EQ(g, u);
        continue;
      }
      for (const UOp* n : g->toposort())
        EXPECT_TRUE(n->op != Ops::EXP2 && n->op != Ops::EXP && n->op != Ops::LOG2 &&
                    n->op != Ops::SIN)
            << d.name() << " " << op_name(op) << " left " << op_name(n->op);
    }
  }
}

double from_bits64(uint64_t b) {
  double f;
  std::memcpy(&f, &b, 8);
  return f;
}

// float64 exp2/log2 against long double libm, in float64 ulps.
double ulp_error64(double got, long double want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0 : 1e30;
  double rounded = static_cast<double>(want);
  if (std::isinf(rounded) || std::isinf(got)) return rounded == got ? 0 : 1e30;
  long double a = std::abs(want);
  int e = a < std::numeric_limits<double>::min() ? -1022 : std::ilogb(a);
  return static_cast<double>(std::abs(static_cast<long double>(got) - want) /
                             std::ldexp(1.0L, e - 52));
}

TEST(Transcendental, Float64Exp2Log2) {
  std::vector<double> xs;
  const uint64_t n = 1u << 19;
  for (uint64_t i = 0; i < n; i++)
    xs.push_back(from_bits64((i << 45) | ((i * 0x9E3779B97F4A7C15ull) >> 19)));
  for (int i = -20000; i <= 20000; i++) xs.push_back(i * 0.0537);    // exp2's finite range
  for (int i = -20000; i <= 20000; i++) xs.push_back(1 + i * 1e-9);  // log2 near 1
  for (double v :
       {0.0, -0.0, 1.0, 1024.0, 1023.999, -1074.0, -1075.0, -1022.5, 4.9e-324,
        std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::quiet_NaN()})
    xs.push_back(v);
  Tensor t = Tensor::from_vector<double>(xs);
  std::vector<double> e = t.exp2().data<double>(), l = t.log2().data<double>();
  double we = 0, wl = 0;
  size_t ie = 0, il = 0;
  for (size_t i = 0; i < xs.size(); i++) {
    double ee = ulp_error64(e[i], exp2l(xs[i])), el = ulp_error64(l[i], log2l(xs[i]));
    if (ee > we) we = ee, ie = i;
    if (el > wl) wl = el, il = i;
  }
  std::printf("float64 exp2: max %.3f ulp at x=%a; log2: max %.3f ulp at x=%a\n", we, xs[ie], wl,
              xs[il]);
  EXPECT_LE(we, 2);
  EXPECT_LE(wl, 2);
  std::vector<double> sp =
      Tensor::from_vector<double>({-1075.0, -1074.0, 1024.0, 0.0, -1.0}).exp2().data<double>();
  EXPECT_EQ(sp[0], 0.0);  // a tie: rounds to even
  EXPECT_EQ(sp[1], 4.9e-324);
  EXPECT_EQ(sp[2], std::numeric_limits<double>::infinity());
  EXPECT_EQ(sp[3], 1.0);
  EXPECT_EQ(sp[4], 0.5);
  std::vector<double> lp =
      Tensor::from_vector<double>({0.0, -0.0, -2.0, 4.9e-324, 0.25}).log2().data<double>();
  EXPECT_EQ(lp[0], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(lp[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(lp[2]));
  EXPECT_EQ(lp[3], -1074.0);
  EXPECT_EQ(lp[4], -2.0);
}

// e^x is its own op, reduced by Cody-Waite (x - k ln 2 in two fused steps): float64 within 2 ulp
// over its whole finite range and beyond, against long double libm
TEST(Transcendental, Float64Exp) {
  std::vector<double> xs;
  for (int i = -40000; i <= 40000; i++) xs.push_back(i * 0.01869);  // about (-748, 748)
  for (double v :
       {0.0, 709.78, 709.79, -745.1, -745.2, -708.4, 1e-300, -1e-17,
        std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()})
    xs.push_back(v);
  std::vector<double> e = Tensor::from_vector<double>(xs).exp().data<double>();
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < xs.size(); i++)
    if (double u = ulp_error64(e[i], expl(xs[i])); u > worst) worst = u, at = i;
  std::printf("float64 exp: max %.3f ulp at x=%a\n", worst, xs[at]);
  EXPECT_LE(worst, 2);
  EXPECT_TRUE(std::isnan(Tensor::from_vector<double>({NAN}).exp().item<double>()));
}

}  // namespace
}  // namespace tc::codegen
