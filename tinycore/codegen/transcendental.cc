#include "tinycore/codegen/transcendental.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "tinycore/helpers.h"

namespace tc::codegen {
namespace {

constexpr DType f32 = dtypes::float32, f64 = dtypes::float64, i64 = dtypes::int64,
                u64 = dtypes::uint64, u32 = dtypes::uint32;

// Small builders: no simplification here, the kernel's symbolic pass folds what it can.
UOpRef cf(DType d, double v) { return UOp::const_(d, v); }
UOpRef ci(DType d, int64_t v) { return UOp::const_int(d, v); }
UOpRef bin(Ops op, const UOpRef& a, const UOpRef& b) {
  return UOp::make(op, group::is_comparison(op) ? dtypes::bool_ : a->dtype, {a, b});
}
UOpRef add(const UOpRef& a, const UOpRef& b) { return bin(Ops::ADD, a, b); }
UOpRef sub(const UOpRef& a, const UOpRef& b) { return bin(Ops::SUB, a, b); }
UOpRef mul(const UOpRef& a, const UOpRef& b) { return bin(Ops::MUL, a, b); }
UOpRef add(const UOpRef& a, double b) { return add(a, cf(a->dtype, b)); }
UOpRef mul(const UOpRef& a, double b) { return mul(a, cf(a->dtype, b)); }
UOpRef iadd(const UOpRef& a, int64_t b) { return add(a, ci(a->dtype, b)); }
UOpRef band(const UOpRef& a, int64_t b) { return bin(Ops::AND, a, ci(a->dtype, b)); }
UOpRef bor(const UOpRef& a, const UOpRef& b) { return bin(Ops::OR, a, b); }
UOpRef shl(const UOpRef& a, const UOpRef& b) { return bin(Ops::SHL, a, b); }
UOpRef shr(const UOpRef& a, const UOpRef& b) { return bin(Ops::SHR, a, b); }
UOpRef shl(const UOpRef& a, int64_t b) { return shl(a, ci(a->dtype, b)); }
UOpRef shr(const UOpRef& a, int64_t b) { return shr(a, ci(a->dtype, b)); }
UOpRef neg(const UOpRef& a) { return UOp::make(Ops::NEG, a->dtype, {a}); }
UOpRef cast(DType d, const UOpRef& a) { return UOp::make(Ops::CAST, d, {a}); }
UOpRef bitcast(DType d, const UOpRef& a) { return UOp::make(Ops::BITCAST, d, {a}); }
UOpRef sel(const UOpRef& c, const UOpRef& t, const UOpRef& f) {
  return UOp::make(Ops::WHERE, t->dtype, {c, t, f});
}
UOpRef sel(const UOpRef& c, double t, const UOpRef& f) { return sel(c, cf(f->dtype, t), f); }
UOpRef is_set(const UOpRef& a, int64_t mask) {  // (a & mask) != 0
  return bin(Ops::CMPNE, band(a, mask), ci(a->dtype, 0));
}

// Horner: coeffs from the highest degree down to the constant term.
UOpRef poly(const UOpRef& x, std::initializer_list<double> coeffs) {
  UOpRef acc;
  for (double c : coeffs) acc = acc ? add(mul(acc, x), c) : cf(x->dtype, c);
  return acc;
}

// -------------------------------------------------------------------------------------------
// exp2

// A float format for the exponentials: the integer type of its width, its exponent bias and
// mantissa bits, the |x| of exp2 beyond which the result is 0 or inf anyway, the polynomial's
// degree, and ln 2 split for Cody-Waite: hi has few enough mantissa bits that k * hi is exact.
struct ExpFormat {
  DType bits;
  int bias, mantissa;
  double limit;
  int degree;
  double ln2_hi, ln2_lo;
};
const ExpFormat kExp32{dtypes::int32, 127, 23, 160, 7, 0x1.62e4p-1, 0x1.7f7d1cf79abcap-20};
const ExpFormat kExp64{i64, 1023, 52, 1100, 13, 0x1.62e42feep-1, 0x1.a39ef35793c76p-33};

// 2^x (natural false) or e^x (natural true) = 2^k e^r with k the integer nearest x (x / ln 2),
// r = (x - k) ln 2 or x - k ln 2 in [-ln2/2, ln2/2], e^r = sum r^n / n! up to the degree, and 2^k
// in two normal factors: p * 2^k1 is exact, * 2^k2 rounds once (a denormal result). For exp2 the
// remainder x - k is exact and ln 2 goes into the coefficients; for exp, x - k ln 2 is taken by
// fused multiply-adds with hi then lo (Cody-Waite), which the renderer's reassociation of plain
// adds cannot undo. x is first clamped to where the result is 0 or inf anyway (NaN stays NaN: its
// k is meaningless, and p is NaN).
UOpRef exp_reduced(const UOpRef& x, const ExpFormat& f, bool natural) {
  DType dt = x->dtype;
  double limit = natural ? f.limit * M_LN2 : f.limit;
  UOpRef d = bin(Ops::MAX, x, cf(dt, -limit));
  d = neg(bin(Ops::MAX, neg(d), cf(dt, -limit)));
  UOpRef t = natural ? mul(d, M_LOG2E) : d;
  // k = t rounded to the nearest integer: t + 1.5 * 2^mantissa holds it in its low mantissa bits
  // (|t| < 2^(mantissa-1)), read through a bitcast, which no float reassociation can undo. Three
  // vector ops, where a rounding and a saturating cast took eleven.
  const int64_t magic_bits =
      (int64_t{f.bias + f.mantissa} << f.mantissa) | (int64_t{1} << (f.mantissa - 1));
  UOpRef ki = sub(bitcast(f.bits, add(t, std::ldexp(1.5, f.mantissa))), ci(f.bits, magic_bits));
  UOpRef k = cast(dt, ki);
  UOpRef r = sub(d, k);
  if (natural) {
    UOpRef nk = neg(k);
    r = UOp::make(Ops::MULACC, dt, {nk, cf(dt, f.ln2_hi), d});
    r = UOp::make(Ops::MULACC, dt, {nk, cf(dt, f.ln2_lo), r});
  }
  const long double scale = natural ? 1.0L : 0.693147180559945309417232121458176568L;
  std::vector<long double> c = {1};
  for (int n = 1; n <= f.degree; n++) c.push_back(c.back() * scale / n);
  UOpRef p = cf(dt, static_cast<double>(c.back()));
  for (int n = f.degree - 1; n >= 0; n--) p = add(mul(p, r), static_cast<double>(c[n]));
  UOpRef k1 = shr(ki, 1), k2 = sub(ki, k1);
  UOpRef s1 = bitcast(dt, shl(iadd(k1, f.bias), f.mantissa)),
         s2 = bitcast(dt, shl(iadd(k2, f.bias), f.mantissa));
  return mul(mul(p, s1), s2);
}

// In float32 throughout (vectors twice as wide as float64, and no conversions): truncation of
// the degree-7 polynomial is below 1e-8 relative.
UOpRef exp2_f32(const UOpRef& x) { return exp_reduced(x, kExp32, false); }
UOpRef exp_f32(const UOpRef& x) { return exp_reduced(x, kExp32, true); }

// -------------------------------------------------------------------------------------------
// log2

UOpRef log2_f32(const UOpRef& x) {
  UOpRef d = cast(f64, x);  // float32 denormals are normal float64 numbers
  UOpRef bits = bitcast(i64, d);
  UOpRef mant = band(bits, (int64_t{1} << 52) - 1);
  UOpRef big = bin(Ops::CMPLT, ci(i64, 0x6A09E667F3BCCLL), mant);  // mantissa > sqrt(2)
  UOpRef e = add(iadd(shr(bits, 52), -1023), sel(big, ci(i64, 1), ci(i64, 0)));
  UOpRef m = bitcast(
      f64, bor(mant, sel(big, ci(i64, 0x3FE0000000000000LL), ci(i64, 0x3FF0000000000000LL))));
  // log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.1716
  UOpRef s = bin(Ops::FDIV, add(m, -1.0), add(m, 1.0));
  UOpRef s2 = mul(s, s);
  UOpRef ln =
      mul(mul(s, 2.0),
          poly(s2, {1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1.0}));
  UOpRef res = cast(f32, add(cast(f64, e), mul(ln, 1.0 / M_LN2)));
  const double inf = INFINITY, nan = NAN;
  res = sel(bin(Ops::CMPEQ, x, cf(f32, inf)), inf, res);
  res = sel(bin(Ops::CMPEQ, x, cf(f32, 0)), -inf, res);
  res = sel(bin(Ops::CMPLT, x, cf(f32, 0)), nan, res);
  return sel(bin(Ops::CMPNE, x, x), nan, res);
}

// float64: the same reductions with float64 polynomials of higher degree.

UOpRef exp2_f64(const UOpRef& x) { return exp_reduced(x, kExp64, false); }
UOpRef exp_f64(const UOpRef& x) { return exp_reduced(x, kExp64, true); }

UOpRef log2_f64(const UOpRef& x) {
  UOpRef tiny = bin(Ops::CMPLT, x, cf(f64, 0x1p-1022));  // denormals: scale up by 2^54
  UOpRef xs = sel(tiny, mul(x, 0x1p54), x);
  UOpRef bits = bitcast(i64, xs);
  UOpRef mant = band(bits, (int64_t{1} << 52) - 1);
  UOpRef big = bin(Ops::CMPLT, ci(i64, 0x6A09E667F3BCCLL), mant);  // mantissa > sqrt(2)
  UOpRef e = add(add(iadd(shr(bits, 52), -1023), sel(big, ci(i64, 1), ci(i64, 0))),
                 sel(tiny, ci(i64, -54), ci(i64, 0)));
  UOpRef m = bitcast(
      f64, bor(mant, sel(big, ci(i64, 0x3FE0000000000000LL), ci(i64, 0x3FF0000000000000LL))));
  // log(1 + f) = 2 atanh(s) = f - s (f - 2R), s = f / (2 + f), R = s^2 (1/3 + s^2/5 + ...)
  UOpRef f = add(m, -1.0);
  UOpRef s = bin(Ops::FDIV, f, add(f, 2.0));
  UOpRef s2 = mul(s, s);
  UOpRef R = mul(s2, poly(s2, {1.0 / 23, 1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13, 1.0 / 11,
                               1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3}));
  UOpRef ln = sub(f, mul(s, sub(f, mul(R, 2.0))));
  // log2(e) split so that ln * log2(e) rounds about once
  const double l2e_hi = 1.4426950408889634, l2e_lo = 2.0355273740931033e-17;
  UOpRef res = add(cast(f64, e), add(mul(ln, l2e_hi), mul(ln, l2e_lo)));
  const double inf = INFINITY, nan = NAN;
  res = sel(bin(Ops::CMPEQ, x, cf(f64, inf)), inf, res);
  res = sel(bin(Ops::CMPEQ, x, cf(f64, 0)), -inf, res);
  res = sel(bin(Ops::CMPLT, x, cf(f64, 0)), nan, res);
  return sel(bin(Ops::CMPNE, x, x), nan, res);
}

// -------------------------------------------------------------------------------------------
// sin

// Bits 1..224 of 2/pi after the binary point, 32 per word, behind one word of zeros (so the
// window of small exponents starts inside the table).
constexpr uint32_t kTwoOverPi[8] = {0,          0xA2F9836E, 0x4E441529, 0xFC2757D1,
                                    0xF534DDC0, 0xDB629599, 0x3C439041, 0xFE5163AB};

// kTwoOverPi[w + j] for w in [0, 4].
UOpRef table_word(const UOpRef& w, int j) {
  UOpRef out = ci(u64, kTwoOverPi[4 + j]);
  for (int i = 3; i >= 0; i--)
    out = sel(bin(Ops::CMPEQ, w, ci(u64, i)), ci(u64, kTwoOverPi[i + j]), out);
  return out;
}

UOpRef sin_f32(const UOpRef& x) {
  UOpRef u = bitcast(u32, x);
  UOpRef negative = is_set(u, int64_t{1} << 31);
  UOpRef ub = cast(u64, band(u, 0x7FFFFFFF));
  UOpRef ax = bitcast(f32, band(u, 0x7FFFFFFF));
  UOpRef exponent = shr(ub, 23);
  UOpRef m = bor(band(ub, 0x7FFFFF), ci(u64, 0x800000));  // |x| = m * 2^(exponent - 150)

  // Payne-Hanek: with k = exponent - 150, the bits of 2/pi before position k-1 contribute
  // multiples of 4 to m * 2^k * 2/pi; the 96 bits from there give it mod 4 as a fixed-point
  // number with 2 integer bits (the low 96 bits of m * window), to ~2^-62.
  UOpRef p0 = iadd(bin(Ops::MAX, exponent, ci(u64, 126)), -120);  // bit position in the table
  UOpRef w = shr(p0, 5), s = band(p0, 31), rs = sub(ci(u64, 32), s);
  UOpRef t0 = table_word(w, 0), t1 = table_word(w, 1), t2 = table_word(w, 2), t3 = table_word(w, 3);
  auto window = [&](const UOpRef& a, const UOpRef& b) {
    return band(bor(shl(a, s), shr(b, rs)), 0xFFFFFFFF);
  };
  UOpRef hi_word = window(t0, t1), mid_word = window(t1, t2), lo_word = window(t2, t3);
  UOpRef p1 = mul(m, lo_word), p2 = mul(m, mid_word), p3 = mul(m, hi_word);
  UOpRef fixed = add(add(shl(p3, 32), p2), shr(p1, 32));  // 2.62 fixed point, mod 4
  UOpRef t = iadd(fixed, int64_t{1} << 61);
  UOpRef q = shr(t, 62);  // the nearest quadrant
  UOpRef frac = iadd(cast(i64, band(t, (int64_t{1} << 62) - 1)), -(int64_t{1} << 61));
  UOpRef r = mul(mul(cast(f64, frac), std::ldexp(1.0, -62)), M_PI / 2);

  // |x| < 0.5 needs no reduction
  UOpRef small = bin(Ops::CMPLT, exponent, ci(u64, 126));
  r = sel(small, cast(f64, ax), r);
  q = sel(small, ci(u64, 0), q);

  UOpRef r2 = mul(r, r);
  UOpRef sin_r = add(
      r, mul(mul(r, r2), poly(r2, {-1.0 / 1307674368000.0, 1.0 / 6227020800.0, -1.0 / 39916800.0,
                                   1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0})));
  UOpRef cos_r = poly(r2, {-1.0 / 87178291200.0, 1.0 / 479001600.0, -1.0 / 3628800.0, 1.0 / 40320.0,
                           -1.0 / 720.0, 1.0 / 24.0, -1.0 / 2.0, 1.0});
  UOpRef v = sel(is_set(q, 1), cos_r, sin_r);
  v = sel(is_set(q, 2), neg(v), v);
  UOpRef res = cast(f32, v);
  res = sel(negative, neg(res), res);
  // inf and NaN: NaN
  return sel(bin(Ops::CMPLT, ax, cf(f32, INFINITY)), res, cf(f32, NAN));
}

// fn32 for float32, fn64 (when there is one) for float64; other dtypes keep the op.
UOpRef expand(const UOpRef& x, UOpRef (*fn32)(const UOpRef&), UOpRef (*fn64)(const UOpRef&)) {
  if (x->dtype == dtypes::float32) return fn32(x->src[0]);
  if (x->dtype == dtypes::float64 && fn64) return fn64(x->src[0]);
  return nullptr;
}

PatternMatcher make_rules() {
  if (getenv_int("TRANSCENDENTAL", 1) == 0) return PatternMatcher({});
  using C = const Captures&;
  return PatternMatcher({
      {UPat::op(Ops::EXP2).no_src_check().named("x"),
       [](C c) { return expand(c["x"], exp2_f32, exp2_f64); }},
      {UPat::op(Ops::EXP).no_src_check().named("x"),
       [](C c) { return expand(c["x"], exp_f32, exp_f64); }},
      {UPat::op(Ops::LOG2).no_src_check().named("x"),
       [](C c) { return expand(c["x"], log2_f32, log2_f64); }},
      {UPat::op(Ops::SIN).no_src_check().named("x"),
       [](C c) { return expand(c["x"], sin_f32, nullptr); }},
  });
}

}  // namespace

UOpRef xexp2(const UOpRef& x) { return exp2_f32(x); }
UOpRef xlog2(const UOpRef& x) { return log2_f32(x); }
UOpRef xsin(const UOpRef& x) { return sin_f32(x); }

const PatternMatcher& transcendental_rules() {
  static const PatternMatcher pm = make_rules();
  return pm;
}

}  // namespace tc::codegen
