#include "tinycore/uop/symbolic.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "tinycore/error.h"

namespace tc {

UOpRef fold_constants(Ops op, DType dtype, const std::vector<UOpRef>& src) {
  for (const UOpRef& s : src)
    if (s->op != Ops::CONST) return nullptr;
  DType in = src[0]->dtype;
  if (op == Ops::WHERE) return src[0]->const_value() != 0 ? src[1] : src[2];
  if (op == Ops::CAST) {
    if (dtypes::is_int(in) || dtypes::is_bool(in)) {
      if (dtypes::is_float(dtype)) return UOp::const_(dtype, src[0]->const_value());
      return UOp::const_int(dtype, src[0]->arg_int());
    }
    return UOp::const_(dtype, src[0]->const_value());
  }
  if (op == Ops::BITCAST || op == Ops::MULACC || op == Ops::DOT4) return nullptr;

  if (dtypes::is_float(in)) {
    double a = src[0]->const_value(), b = src.size() > 1 ? src[1]->const_value() : 0, r;
    switch (op) {
      case Ops::NEG:
        r = -a;
        break;
      case Ops::EXP2:
        r = std::exp2(a);
        break;
      case Ops::EXP:
        r = std::exp(a);
        break;
      case Ops::LOG2:
        r = std::log2(a);
        break;
      case Ops::SIN:
        r = std::sin(a);
        break;
      case Ops::SQRT:
        r = std::sqrt(a);
        break;
      case Ops::RECIP:
        r = 1.0 / a;
        break;
      case Ops::TRUNC:
        r = std::trunc(a);
        break;
      case Ops::ADD:
        r = a + b;
        break;
      case Ops::SUB:
        r = a - b;
        break;
      case Ops::MUL:
        r = a * b;
        break;
      case Ops::FDIV:
        r = a / b;
        break;
      case Ops::MAX:  // as the kernels' max (llvm.maximum): NaN wins, +0 above -0 (fmax drops NaN)
        r = std::isnan(a) || std::isnan(b) ? std::nan("")
            : a == b                       ? (std::signbit(a) ? b : a)
                                           : std::max(a, b);
        break;
      case Ops::CMPLT:
        r = a < b;
        break;
      case Ops::CMPNE:
        r = a != b;
        break;
      case Ops::CMPEQ:
        r = a == b;
        break;
      default:
        return nullptr;
    }
    return UOp::const_(dtype, r);
  }

  // integers and bool, with the wrap-around of the dtype; unsigned compares unsigned
  bool u = dtypes::is_unsigned(in);
  int64_t a = src[0]->arg_int(), b = src.size() > 1 ? src[1]->arg_int() : 0;
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  int64_t r;
  switch (op) {
    case Ops::NEG:
      r = static_cast<int64_t>(0 - ua);
      break;
    case Ops::ADD:
      r = static_cast<int64_t>(ua + ub);
      break;
    case Ops::SUB:
      r = static_cast<int64_t>(ua - ub);
      break;
    case Ops::MUL:
      r = static_cast<int64_t>(ua * ub);
      break;
    case Ops::IDIV:
      if (b == 0 || (!u && b == -1 && a == std::numeric_limits<int64_t>::min())) return nullptr;
      r = u ? static_cast<int64_t>(ua / ub) : a / b;
      break;
    case Ops::MOD:
      if (b == 0 || (!u && b == -1)) return nullptr;
      r = u ? static_cast<int64_t>(ua % ub) : a % b;
      break;
    case Ops::MAX:
      r = u ? static_cast<int64_t>(std::max(ua, ub)) : std::max(a, b);
      break;
    case Ops::CMPLT:
      r = u ? ua < ub : a < b;
      break;
    case Ops::CMPNE:
      r = a != b;
      break;
    case Ops::CMPEQ:
      r = a == b;
      break;
    case Ops::AND:
      r = a & b;
      break;
    case Ops::OR:
      r = a | b;
      break;
    case Ops::XOR:
      r = a ^ b;
      break;
    case Ops::SHL:
      if (b < 0 || b >= 64) return nullptr;
      r = static_cast<int64_t>(ua << b);
      break;
    case Ops::SHR:
      if (b < 0 || b >= 64) return nullptr;
      r = u ? static_cast<int64_t>(ua >> b) : a >> b;
      break;
    default:
      return nullptr;
  }
  return UOp::const_int(dtype, r);
}

namespace {

// Integers the index algebra may rewrite (uint64 is left alone: its values need not fit int64).
bool is_int(const UOpRef& u) {
  return dtypes::is_int(u->dtype) && u->dtype.count == 1 && u->dtype != dtypes::uint64;
}

// A sum of integer terms: coefficient * node, plus a constant, in first-seen order.
struct Sum {
  std::vector<std::pair<UOpRef, int64_t>> terms;
  int64_t constant = 0;

  void add(const UOpRef& u, int64_t k) {
    if (k == 0) return;
    if (u->op == Ops::CONST) {
      constant += u->arg_int() * k;
      return;
    }
    if (u->op == Ops::ADD) {
      add(u->src[0], k);
      add(u->src[1], k);
      return;
    }
    if (u->op == Ops::MUL && u->src[1]->op == Ops::CONST) {
      add(u->src[0], k * u->src[1]->arg_int());
      return;
    }
    for (auto& [n, c] : terms)
      if (n == u) {
        c += k;
        return;
      }
    terms.push_back({u, k});
  }
  static Sum of(const UOpRef& u) {
    Sum s;
    s.add(u, 1);
    return s;
  }

  // (x//c)*(c*m) + (x%c)*m -> x*m, and (x//(a*c))*(c*m) + ((x//a)%c)*m -> (x//a)*m:
  // recombines what a reshape split (a flatten of (64, 3, 3) splits k into k//9, k//3%3, k%3).
  void recombine() {
    for (size_t i = 0; i < terms.size(); i++) {
      auto [d, kd] = terms[i];
      if (d->op != Ops::IDIV || d->src[1]->op != Ops::CONST) continue;
      const UOpRef& x = d->src[0];
      int64_t c = d->src[1]->arg_int();
      for (size_t j = 0; j < terms.size(); j++) {
        auto [m, km] = terms[j];
        if (m->op != Ops::MOD || m->src[1]->op != Ops::CONST) continue;
        int64_t cm = m->src[1]->arg_int();
        const UOpRef& y = m->src[0];  // x, or x//a with a*cm == c
        bool whole = y == x && cm == c;
        bool part = y->op == Ops::IDIV && y->src[0] == x && y->src[1]->op == Ops::CONST &&
                    y->src[1]->arg_int() * cm == c;
        if ((!whole && !part) || kd != cm * km) continue;
        if (x->vmin() < 0) continue;  // trunc == floor only for non-negative x
        terms[i] = {y, km};
        terms.erase(terms.begin() + j);
        std::vector<std::pair<UOpRef, int64_t>> merged = std::move(terms);
        int64_t k = constant;
        terms.clear(), constant = 0;
        for (auto& [n, c2] : merged) add(n, c2);
        constant += k;
        return recombine();
      }
    }
  }

  UOpRef build(DType dtype) const {
    UOpRef out;
    for (const auto& [n, k] : terms) {
      if (k == 0) continue;
      UOpRef t = k == 1 ? n : n * UOp::const_int(dtype, k);
      out = out ? out + t : t;
    }
    if (!out) return UOp::const_int(dtype, constant);
    return constant == 0 ? out : out + UOp::const_int(dtype, constant);
  }
  int64_t vmin() const { return bound(true); }
  int64_t vmax() const { return bound(false); }
  int64_t bound(bool lo) const {
    __int128 v = constant;
    for (const auto& [n, k] : terms) v += __int128(k) * ((k > 0) == lo ? n->vmin() : n->vmax());
    return static_cast<int64_t>(std::clamp(v, __int128(INT64_MIN), __int128(INT64_MAX)));
  }
};

// x // c and x % c for c > 0 and x >= 0: each term n*k (k > 0) splits into c*(n*(k//c)) + n*(k%c),
// so only the coefficients' remainders stay under the division (the pool window's (25*ky + oy) % 24
// is (ky + oy) % 24), and a remainder in [0, c) needs no division at all.
UOpRef fold_divmod(Ops op, const UOpRef& x, int64_t c) {
  if (c <= 0 || x->vmin() < 0) return nullptr;
  DType dt = x->dtype;
  if (x->vmax() < c) return op == Ops::IDIV ? UOp::const_int(dt, 0) : x;  // x//c -> 0, x%c -> x
  Sum s = Sum::of(x), quotient, rest;
  for (const auto& [n, k] : s.terms) {
    int64_t q = k > 0 || k % c == 0 ? k / c : 0;  // negative terms stay whole in the rest
    if (q != 0) quotient.add(n, q);
    if (k - q * c != 0) rest.add(n, k - q * c);
  }
  quotient.constant = s.constant / c;
  rest.constant = s.constant % c;
  if (rest.vmin() < 0) return nullptr;
  bool small_rest = rest.vmax() < c;
  if (quotient.terms.empty() && quotient.constant == 0 && !small_rest) return nullptr;
  UOpRef r = rest.build(dt);
  if (op == Ops::MOD) return small_rest ? r : (r == x ? nullptr : r % c);
  UOpRef q = quotient.build(dt);
  if (small_rest) return q;
  return q + r / c;
}

// x = g*X + R with g dividing c and R in [0, g): x // c = X // (c/g), x % c = (X % (c/g))*g + R.
// A reshape that split a row of 20 into two halves of 10 indexes (20*y + r) // 40 with r < 20:
// that is y // 2. The largest such g (a common factor of c and some coefficients) is taken.
UOpRef fold_common_factor(Ops op, const UOpRef& x, int64_t c) {
  if (c <= 1 || x->vmin() < 0) return nullptr;
  Sum s = Sum::of(x);
  if (s.constant < 0) return nullptr;
  std::vector<int64_t> factors;
  for (const auto& [n, k] : s.terms)
    if (int64_t g = std::gcd(k, c); g > 1 && g < c) factors.push_back(g);
  std::sort(factors.rbegin(), factors.rend());
  for (int64_t g : factors) {
    Sum big, rest;
    for (const auto& [n, k] : s.terms) k % g == 0 ? big.add(n, k / g) : rest.add(n, k);
    big.constant = s.constant / g, rest.constant = s.constant % g;
    if (rest.vmin() < 0 || rest.vmax() >= g) continue;
    DType dt = x->dtype;
    UOpRef X = big.build(dt);
    if (op == Ops::IDIV) return X / (c / g);
    return (X % (c / g)) * g + rest.build(dt);
  }
  return nullptr;
}

using C = const Captures&;
UPat var(const char* n) { return UPat::var(n); }
UPat cvar(const char* n) { return UPat::cvar(n); }
int64_t ival(C c, const char* n) { return c[n]->arg_int(); }

// Whether every value in [lo, hi] is one of dtype d's (64-bit dtypes as far as int64 reaches).
// The rules that move a constant across `<` hold only where nothing wraps (a tensor's int32
// does: x + INT_MIN < 0 is not x < 2^31).
bool within(DType d, __int128 lo, __int128 hi) {
  return static_cast<double>(lo) >= std::max(dtypes::min(d), -9.2e18) &&
         static_cast<double>(hi) <= std::min(dtypes::max(d), 9.2e18);
}

// d = 1/(x+1), named "d", for the logistic rules
UPat one_over_x_plus_1() {
  return UPat::op(Ops::RECIP, {UPat::op(Ops::ADD, {var("x"), UPat::cnst(1)}).commutative()})
      .named("d");
}
UOpRef one_minus(const UOpRef& d) {
  DType dt = d->dtype;
  return UOp::make(Ops::ADD, dt,
                   {UOp::make(Ops::MUL, dt, {d, UOp::const_(dt, -1)}), UOp::const_(dt, 1)});
}
bool is_float(const UOpRef& x) { return dtypes::is_float(x->dtype); }
// Whether every value x may take is one of `dtype`'s (an integer type of at most 32 bits), so a
// cast to it changes no value.
bool fits(const UOpRef& x, DType dtype) {
  return dtype.itemsize() <= 4 && within(dtype, x->vmin(), x->vmax());
}

std::vector<Ops> alu_ops() {
  std::vector<Ops> out;
  for (int i = 0; i < kNumOps; i++)
    if (group::is_alu(static_cast<Ops>(i))) out.push_back(static_cast<Ops>(i));
  return out;
}

PatternMatcher make_symbolic() {
  return PatternMatcher({
      // constant folding: op(c0, c1, ...) -> c
      {UPat::ops(alu_ops()).no_src_check().named("x"),
       [](C c) { return fold_constants(c["x"]->op, c["x"]->dtype, c["x"]->src); }},
      // bounds folding: an integer/bool ALU node whose interval is one point is that constant
      {UPat::ops(alu_ops()).no_src_check().named("x"),
       [](C c) -> UOpRef {
         const UOpRef& x = c["x"];
         if (x->dtype.count != 1 || !(dtypes::is_int(x->dtype) || dtypes::is_bool(x->dtype)) ||
             x->vmin() != x->vmax())
           return nullptr;
         return UOp::const_int(x->dtype, x->vmin());
       }},
      // x + 0 -> x
      {var("x") + 0, [](C c) { return c["x"]; }},
      // x * 1 -> x
      {var("x") * 1, [](C c) { return c["x"]; }},
      // x * 0 -> 0 (integers: NaN*0 is NaN for floats)
      {var("x") * cvar("z"),
       [](C c) -> UOpRef {
         if (!is_int(c["x"]) || c["z"]->arg_int() != 0) return nullptr;
         return c["z"];
       }},
      // x // 1 -> x
      {var("x") / 1, [](C c) { return c["x"]; }},
      // x % 1 -> 0
      {var("x") % cvar("c"),
       [](C c) -> UOpRef {
         return is_int(c["x"]) && ival(c, "c") == 1 ? UOp::const_int(c["x"]->dtype, 0) : nullptr;
       }},
      // c + x -> x + c, c * x -> x * c: constants go right
      {UPat::ops({Ops::ADD, Ops::MUL, Ops::MAX}, {cvar("c"), var("x")}).named("e"),
       [](C c) -> UOpRef {
         if (c["x"]->op == Ops::CONST) return nullptr;
         return UOp::make(c["e"]->op, c["e"]->dtype, {c["x"], c["c"]});
       }},
      // integer sums in normal form: flatten, merge like terms, distribute constants,
      // (x//c)*c + x%c -> x, x - x -> 0
      {UPat::ops({Ops::ADD, Ops::MUL}, {var("a"), var("b")}).named("x"),
       [](C c) -> UOpRef {
         const UOpRef& x = c["x"];
         if (!is_int(x) || (x->op == Ops::MUL && c["b"]->op != Ops::CONST)) return nullptr;
         Sum s = Sum::of(x);
         s.recombine();
         return s.build(x->dtype);
       }},
      // (x // a) // b -> x // (a*b)
      {(var("x") / cvar("a")) / cvar("b"),
       [](C c) -> UOpRef {
         if (!is_int(c["x"]) || ival(c, "a") <= 0 || ival(c, "b") <= 0 || c["x"]->vmin() < 0)
           return nullptr;
         return c["x"] / (ival(c, "a") * ival(c, "b"));
       }},
      // (x % (c*k)) % c -> x % c, when x >= 0
      {(var("x") % cvar("a")) % cvar("b"),
       [](C c) -> UOpRef {
         int64_t a = ival(c, "a"), b = ival(c, "b");
         if (!is_int(c["x"]) || b <= 0 || a % b != 0 || c["x"]->vmin() < 0) return nullptr;
         return c["x"] % b;
       }},
      // (x % (c*k)) // c -> (x // c) % k, when x >= 0
      {(var("x") % cvar("a")) / cvar("b"),
       [](C c) -> UOpRef {
         int64_t a = ival(c, "a"), b = ival(c, "b");
         if (!is_int(c["x"]) || b <= 0 || a % b != 0 || c["x"]->vmin() < 0) return nullptr;
         return (c["x"] / b) % (a / b);
       }},
      // sum // c and sum % c: pull out multiples of c, drop what bounds prove small
      {UPat::ops({Ops::IDIV, Ops::MOD}, {var("x"), cvar("c")}).named("e"),
       [](C c) -> UOpRef {
         if (!is_int(c["x"])) return nullptr;
         if (UOpRef r = fold_divmod(c["e"]->op, c["x"], ival(c, "c"))) return r;
         return fold_common_factor(c["e"]->op, c["x"], ival(c, "c"));
       }},
      // x*k < c -> x < ceil(c/k) for k > 0
      {UPat::op(Ops::CMPLT, {var("x") * cvar("k"), cvar("c")}),
       [](C c) -> UOpRef {
         if (!is_int(c["x"])) return nullptr;  // float constants hold no integer
         int64_t k = ival(c, "k"), v = ival(c, "c");
         const UOpRef& x = c["x"];
         if (k <= 0 || !within(x->dtype, __int128(x->vmin()) * k, __int128(x->vmax()) * k))
           return nullptr;
         int64_t q = v >= 0 ? (v + k - 1) / k : -((-v) / k);
         return lt(c["x"], q);
       }},
      // x + a < c -> x < c - a
      {UPat::op(Ops::CMPLT, {var("x") + cvar("a"), cvar("c")}),
       [](C c) -> UOpRef {
         const UOpRef& x = c["x"];
         if (!is_int(x)) return nullptr;  // float constants hold no integer
         __int128 a = ival(c, "a"), v = __int128(ival(c, "c")) - a;
         if (!within(x->dtype, x->vmin() + a, x->vmax() + a) || !within(x->dtype, v, v))
           return nullptr;
         return lt(x, static_cast<int64_t>(v));
       }},
      // x // k < c -> x < c*k for k > 0 and x >= 0
      {UPat::op(Ops::CMPLT, {var("x") / cvar("k"), cvar("c")}),
       [](C c) -> UOpRef {
         int64_t k = ival(c, "k"), v = ival(c, "c");
         if (!is_int(c["x"]) || k <= 0 || v <= 0 || c["x"]->vmin() < 0) return nullptr;
         if (!within(c["x"]->dtype, __int128(v) * k, __int128(v) * k)) return nullptr;
         return lt(c["x"], v * k);
       }},
      // max(x, y) -> x when x >= y everywhere
      {UPat::op(Ops::MAX, {var("x"), var("y")}),
       [](C c) -> UOpRef {
         if (!is_int(c["x"])) return nullptr;
         if (c["x"]->vmin() >= c["y"]->vmax()) return c["x"];
         if (c["y"]->vmin() >= c["x"]->vmax()) return c["y"];
         return nullptr;
       }},
      // where(c, x, x) -> x
      {UPat::op(Ops::WHERE, {var("c"), var("x"), var("x")}), [](C c) { return c["x"]; }},
      // where(c, x, 0) + where(!c, y, 0) -> where(c, x, y): a cat's halves, each padded with 0s
      {UPat::op(Ops::ADD,
                {UPat::op(Ops::WHERE, {var("c"), var("x"), UPat::cnst(0)}),
                 UPat::op(Ops::WHERE, {UPat::op(Ops::CMPNE, {var("c"), UPat::cnst(1)}), var("y"),
                                       UPat::cnst(0)})})
           .commutative(),
       [](C c) { return UOp::make(Ops::WHERE, c["x"]->dtype, {c["c"], c["x"], c["y"]}); }},
      // where(true, a, b) -> a, where(false, a, b) -> b
      {UPat::op(Ops::WHERE, {cvar("c"), var("a"), var("b")}),
       [](C c) { return c["c"]->const_value() != 0 ? c["a"] : c["b"]; }},
      // b & true -> b, b & false -> false (bool)
      {UPat::op(Ops::AND, {var("x"), cvar("c")}).commutative(),
       [](C c) -> UOpRef {
         if (!dtypes::is_bool(c["x"]->dtype)) return nullptr;
         return c["c"]->const_value() != 0 ? c["x"] : c["c"];
       }},
      // b | false -> b, b | true -> true (bool)
      {UPat::op(Ops::OR, {var("x"), cvar("c")}).commutative(),
       [](C c) -> UOpRef {
         if (!dtypes::is_bool(c["x"]->dtype)) return nullptr;
         return c["c"]->const_value() != 0 ? c["c"] : c["x"];
       }},
      // x & x -> x, x | x -> x
      {UPat::ops({Ops::AND, Ops::OR}, {var("x"), var("x")}), [](C c) { return c["x"]; }},
      // (b != true) != true -> b
      {UPat::op(Ops::CMPNE, {UPat::op(Ops::CMPNE, {var("x"), UPat::cnst(1)}), UPat::cnst(1)}),
       [](C c) -> UOpRef { return dtypes::is_bool(c["x"]->dtype) ? c["x"] : nullptr; }},
      // x * -y -> -(x * y) (floats), so the products below see their factors together
      {UPat::op(Ops::MUL, {var("x"), UPat::op(Ops::NEG, {var("y")})}).commutative(),
       [](C c) -> UOpRef {
         if (!is_float(c["x"])) return nullptr;
         DType dt = c["x"]->dtype;
         return UOp::make(Ops::NEG, dt, {UOp::make(Ops::MUL, dt, {c["x"], c["y"]})});
       }},
      // x * 1/(x+1) -> 1 - 1/(x+1), also inside x*(d*y) and x*(d+y) (floats, as tinygrad): the
      // logistic form exp(x)/(1+exp(x)) and its gradient stay finite where exp(x) is inf
      {UPat::op(Ops::MUL, {var("x"), one_over_x_plus_1()}).commutative(),
       [](C c) -> UOpRef { return is_float(c["x"]) ? one_minus(c["d"]) : nullptr; }},
      {UPat::op(Ops::MUL,
                {var("x"), UPat::op(Ops::MUL, {one_over_x_plus_1(), var("y")}).commutative()})
           .commutative(),
       [](C c) -> UOpRef {
         if (!is_float(c["x"])) return nullptr;
         return UOp::make(Ops::MUL, c["x"]->dtype, {c["y"], one_minus(c["d"])});
       }},
      {UPat::op(Ops::MUL,
                {var("x"), UPat::op(Ops::ADD, {one_over_x_plus_1(), var("y")}).commutative()})
           .commutative(),
       [](C c) -> UOpRef {
         if (!is_float(c["x"])) return nullptr;
         DType dt = c["x"]->dtype;
         return UOp::make(Ops::ADD, dt,
                          {one_minus(c["d"]), UOp::make(Ops::MUL, dt, {c["x"], c["y"]})});
       }},
      // where(x >= c, k, 0) -> cast(x // c * k) for integers with 0 <= x < 2c, and
      // cast(a) + cast(b) -> cast(a + b) when every value fits the cast's dtype: a number summed
      // from its bits (Tensor.rand's counter, binary_iota) becomes the index it was made from
      {UPat::op(Ops::WHERE,
                {UPat::op(Ops::CMPNE, {UPat::op(Ops::CMPLT, {var("x"), cvar("c")}), UPat::cnst(1)}),
                 cvar("k"), UPat::cnst(0)})
           .named("e"),
       [](C c) -> UOpRef {
         const UOpRef &x = c["x"], &e = c["e"];
         if (!is_int(x) || !is_int(e)) return nullptr;  // (a float's constants hold no int)
         int64_t v = ival(c, "c");
         if (v <= 0 || x->vmin() < 0 || x->vmax() >= 2 * v) return nullptr;
         UOpRef r = x / v * c["k"]->arg_int();
         return fits(r, e->dtype) ? UOp::make(Ops::CAST, e->dtype, {r}) : nullptr;
       }},
      {UPat::op(Ops::ADD, {UPat::op(Ops::CAST, {var("a")}), UPat::op(Ops::CAST, {var("b")})})
           .named("e"),
       [](C c) -> UOpRef {
         const UOpRef &a = c["a"], &b = c["b"], &e = c["e"];
         if (!is_int(e) || !is_int(a) || a->dtype != b->dtype || !fits(a, e->dtype) ||
             !fits(b, e->dtype) || !fits(a + b, e->dtype))
           return nullptr;
         return UOp::make(Ops::CAST, e->dtype, {a + b});
       }},
      // cast(x) -> x when the dtype does not change
      {UPat::op(Ops::CAST, {var("x")}).named("e"),
       [](C c) -> UOpRef { return c["x"]->dtype == c["e"]->dtype ? c["x"] : nullptr; }},
  });
}

}  // namespace

const PatternMatcher& symbolic() {
  static const PatternMatcher pm = make_symbolic();
  return pm;
}

UOpRef simplify(const UOpRef& u) { return graph_rewrite(u, symbolic(), "symbolic"); }

UOpRef subtract_term(const UOpRef& sum, const UOpRef& term, int64_t* coefficient) {
  if (!is_int(sum)) return nullptr;
  Sum s = Sum::of(sum);
  for (size_t i = 0; i < s.terms.size(); i++) {
    const int64_t a = s.terms[i].second;
    if (s.terms[i].first != term || (coefficient ? a < 1 : a != 1)) continue;
    if (coefficient) *coefficient = a;
    s.terms.erase(s.terms.begin() + i);
    return s.build(sum->dtype);
  }
  return nullptr;
}

std::optional<LaneOffsets> lane_offsets(const UOpRef& idx, const UOpRef& lane, int width,
                                        int64_t max_span) {
  if (!is_int(idx)) return std::nullopt;
  auto uses_lane = [&](const UOpRef& n) {
    for (const UOp* m : n->toposort())
      if (m == lane.get()) return true;
    return false;
  };
  Sum whole = Sum::of(idx), base, per_lane;
  base.constant = whole.constant;
  for (const auto& [n, k] : whole.terms) (uses_lane(n) ? per_lane : base).add(n, k);
  if (__int128(per_lane.vmax()) - per_lane.vmin() > max_span) return std::nullopt;
  std::optional<std::vector<int64_t>> offsets =
      tc::per_lane(per_lane.build(idx->dtype), lane, width);
  if (!offsets) return std::nullopt;
  return LaneOffsets{base.build(idx->dtype), std::move(*offsets)};
}

std::optional<std::vector<int64_t>> per_lane(const UOpRef& f, const UOpRef& lane, int width) {
  if (dtypes::is_float(f->dtype)) return std::nullopt;
  std::vector<const UOp*> order = f->toposort();
  std::vector<int64_t> out;
  for (int i = 0; i < width; i++) {  // f at lane i, folded node by node (no graph rewrite)
    absl::flat_hash_map<const UOp*, UOpRef> value;
    for (const UOp* n : order) {
      UOpRef v;
      if (n == lane.get()) {
        v = UOp::const_int(lane->dtype, i);
      } else if (n->op == Ops::CONST) {
        v = n->ref();
      } else if (group::is_alu(n->op)) {
        std::vector<UOpRef> src;
        for (const UOpRef& x : n->src) src.push_back(value.at(x.get()));
        v = fold_constants(n->op, n->dtype, src);
      }
      if (!v || v->op != Ops::CONST) return std::nullopt;  // a loop, a load, or not foldable
      value[n] = v;
    }
    out.push_back(value.at(f.get())->arg_int());
  }
  return out;
}

}  // namespace tc
