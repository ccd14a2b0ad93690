// A differential fuzzer over the Tensor API: random short programs (creation, elementwise ops with
// broadcasting, movement, slicing with any step, setitem, reductions, matmul, casts, gradients) on
// shapes drawn to include 0, 1 and primes, run on tinycore and on a float64 interpreter of its
// own (tests/tensor/reference.h), compared within the dtype's tolerance. Each program runs twice
// in the process and once under TinyJit (three calls, new inputs each), so that what earlier
// kernels left behind (caches, the planner, interned graphs) is exercised too.
//
// One generator serves both sides: program() is a template over a backend (Lazy: tinycore
// tensors; Ref: the interpreter), and its choices depend only on the seed and on shapes, which
// both sides agree on, so both run the same program.
//
// FUZZ_SECONDS (default 60) bounds a run; FUZZ_SEED picks the first seed (default: from the
// clock, printed); FUZZ_PROGRAMS=1 with FUZZ_SEED=S replays one program, printing it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/tensor/reference.h"
#include "tinycore/error.h"
#include "tinycore/jit/jit.h"
#include "tinycore/tensor.h"

namespace {

using tc::DType;
using tc::Shape;
using tc::Tensor;
using tcref::NDArray;
namespace dt = tc::dtypes;

using Rng = std::mt19937_64;
int64_t pick(Rng& r, int64_t n) { return n <= 0 ? 0 : static_cast<int64_t>(r() % n); }
bool chance(Rng& r, int percent) { return pick(r, 100) < percent; }

// Sizes of a dimension: 0, 1, primes and small composites; numel stays small.
int64_t dim_size(Rng& r) {
  static const int64_t sizes[] = {0, 1, 1, 2, 2, 3, 3, 4, 5, 7};
  return sizes[pick(r, 10)];
}
Shape random_shape(Rng& r, int max_rank = 4) {
  Shape s;
  for (int64_t n = pick(r, max_rank + 1); n > 0; n--) s.push_back(dim_size(r));
  return s;
}

// ------------------------------------------------------------------ the reference side

struct RefValue {
  NDArray a;
  DType d;
  // The scale of the values it was computed from (a sum's: its terms' added up): float32
  // rounding on the way is relative to it, not to the result (sin of a large sum is small)
  double mag = 0;
  const Shape& shape() const { return a.shape; }
  DType dtype() const { return d; }
};

// Python's slice.indices(n), then the positions it picks.
std::vector<int64_t> slice_positions(const tc::Slice& s, int64_t n) {
  int64_t step = s.step.value_or(1);
  auto norm = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    if (step > 0) return std::clamp<int64_t>(x, 0, n);
    return std::clamp<int64_t>(x, -1, n - 1);
  };
  int64_t start = norm(s.start, step > 0 ? 0 : n - 1), stop = norm(s.stop, step > 0 ? n : -1);
  std::vector<int64_t> out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(i);
  return out;
}

// The float64 interpreter: every value is held as its dtype would hold it.
struct Ref {
  using V = RefValue;
  Ref(uint64_t seed, const std::vector<NDArray>* leaves_given = nullptr)
      : value_seed(seed), given(leaves_given) {}
  uint64_t value_seed;
  const std::vector<NDArray>* given;  // leaves to use instead of new ones
  std::vector<NDArray> leaves;
  std::vector<DType> leaf_dtypes;
  std::ostringstream log;
  bool smooth = true;      // only differentiable float ops so far: finite differences apply
  bool unrounded = false;  // float32 values kept in float64 (finite differences need them so)
  bool ambiguous = false;  // a cast met a value at its edge: not compared (see cast)

  V leaf(const Shape& s, DType d) {
    size_t i = leaves.size();
    NDArray a = given              ? (*given)[i]
                : d == dt::float32 ? tcref::random(s, value_seed * 131 + i)
                : d == dt::bool_   ? tcref::random_int(s, value_seed * 131 + i, 0, 1)
                                   : tcref::random_int(s, value_seed * 131 + i, -4, 4);
    leaves.push_back(a);
    leaf_dtypes.push_back(d);
    log << "  x" << i << " = leaf " << tcref::shape_str(s) << " " << d.name() << "\n";
    return {a, d, largest(a)};
  }
  V leaf_index(const Shape& s, int64_t lo, int64_t hi) {
    size_t i = leaves.size();
    NDArray a = given ? (*given)[i] : tcref::random_int(s, value_seed * 131 + i, lo, hi);
    leaves.push_back(a);
    leaf_dtypes.push_back(dt::int32);
    log << "  x" << i << " = index leaf " << tcref::shape_str(s) << " in [" << lo << ", " << hi
        << "]\n";
    return {a, dt::int32};
  }
  // x[idx] along dimension 0 (negative indices from the end)
  V take(const V& x, const V& idx) {
    int64_t n = x.shape()[0];
    Shape rest(x.shape().begin() + 1, x.shape().end()), out = idx.shape();
    out.insert(out.end(), rest.begin(), rest.end());
    int64_t inner = tcref::numel(rest);
    NDArray r = tcref::generate(out, [&](int64_t i) {
      int64_t row =
          static_cast<int64_t>(idx.a.v[static_cast<size_t>(i / std::max<int64_t>(inner, 1))]);
      if (row < 0) row += n;
      return x.a.v[static_cast<size_t>(row * inner + i % std::max<int64_t>(inner, 1))];
    });
    return {r, x.d, x.mag};
  }
  // a 2-D convolution, stride 1, `pad` on each side: x (N, C, H, W), w (K, C, kh, kw)
  V conv(const V& x, const V& w, int64_t pad) {
    const Shape &xs = x.shape(), &ws = w.shape();
    int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3], k = ws[0], kh = ws[2], kw = ws[3];
    Shape out = {n, k, h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1};
    NDArray r = tcref::generate(out, [&](int64_t i) {
      std::vector<int64_t> o = tcref::unravel(i, out);
      double acc = 0;
      for (int64_t ci = 0; ci < c; ci++)
        for (int64_t a = 0; a < kh; a++)
          for (int64_t b = 0; b < kw; b++) {
            int64_t y = o[2] + a - pad, z = o[3] + b - pad;
            if (y < 0 || y >= h || z < 0 || z >= wd) continue;
            acc += x.a.at({o[0], ci, y, z}) * w.a.at({o[1], ci, a, b});
          }
      return acc;
    });
    return rep(r, x.d, x.mag * w.mag * static_cast<double>(c * kh * kw));
  }
  void note(const std::string& op, const V& v) {
    log << "  " << op << " -> " << tcref::shape_str(v.shape()) << " " << v.d.name() << "\n";
  }
  static double largest(const NDArray& a) {
    double m = 0;
    for (double v : a.v)
      if (std::isfinite(v)) m = std::max(m, std::fabs(v));
    return m;
  }
  // a computed value rounded to d, its scale at least `mag`
  V rep(NDArray a, DType d, double mag) const {
    mag = std::max(mag, largest(a));
    if (d == dt::float32 && unrounded) return {std::move(a), d, mag};
    if (d == dt::int32)  // int32 arithmetic wraps around, as tinycore's
      return {tcref::map(a,
                         [](double v) {
                           if (std::isinf(v)) return v > 0 ? 2147483647.0 : -2147483648.0;
                           return static_cast<double>(static_cast<int32_t>(
                               static_cast<uint32_t>(static_cast<int64_t>(v))));
                         }),
              d, mag};
    return {tcref::represent(a, d), d, mag};
  }

  V unary(const V& x, const std::string& op) {
    auto f = [&](double v) -> double {
      if (op == "neg") return -v;
      if (op == "abs") return std::fabs(v);
      if (op == "relu") return v > 0 ? v : 0;
      if (op == "sin") return std::sin(v);
      if (op == "tanh") return std::tanh(v);
      if (op == "sigmoid") return 1 / (1 + std::exp(-v));
      if (op == "exp") return std::exp(std::clamp(v, -3.0, 3.0));
      return v;  // square handled below
    };
    if (op == "square") return binary(x, x, "mul");
    return rep(tcref::map(x.a, f), x.d, x.mag);
  }
  V binary(const V& x, const V& y, const std::string& op) {
    auto f = [&](double a, double b) -> double {
      if (op == "add") return a + b;
      if (op == "sub") return a - b;
      if (op == "mul" && x.d == dt::int32)  // exactly: a double would round a 62-bit product
        return static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(
            static_cast<uint64_t>(static_cast<int64_t>(a) * static_cast<int64_t>(b)))));
      if (op == "mul") return a * b;
      // NaN-propagating, as torch.maximum and tinycore's (std::max keeps its first argument
      // when either is NaN: found when sin(inf) of an empty max met a maximum)
      if (op == "maximum") return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b);
      if (op == "lt") return a < b ? 1 : 0;
      return 0;
    };
    return rep(tcref::zip(x.a, y.a, f), op == "lt" ? dt::bool_ : x.d,
               op == "mul" ? x.mag * y.mag : std::max(x.mag, y.mag));
  }
  V where(const V& c, const V& x, const V& y) {
    return rep(tcref::where(c.a, x.a, y.a), x.d, std::max(x.mag, y.mag));
  }
  V reshape(const V& x, const Shape& s) { return {tcref::reshape(x.a, s), x.d, x.mag}; }
  V permute(const V& x, const std::vector<int>& p) { return {tcref::permute(x.a, p), x.d, x.mag}; }
  V expand(const V& x, const Shape& s) { return {tcref::expand(x.a, s), x.d, x.mag}; }
  V pad(const V& x, const tcref::Pairs& p) { return {tcref::pad(x.a, p), x.d, x.mag}; }
  V shrink(const V& x, const tcref::Pairs& p) { return {tcref::shrink(x.a, p), x.d, x.mag}; }
  V flip(const V& x, const std::vector<int>& axes) { return {tcref::flip(x.a, axes), x.d, x.mag}; }
  // x[slices...] (one Slice per dimension), or x[i] when `index` is set (dimension 0)
  V slice(const V& x, const std::vector<tc::Slice>& s) {
    std::vector<std::vector<int64_t>> pos;
    Shape out;
    for (size_t k = 0; k < s.size(); k++) {
      pos.push_back(slice_positions(s[k], x.shape()[k]));
      out.push_back(static_cast<int64_t>(pos.back().size()));
    }
    NDArray r = tcref::generate(out, [&](int64_t i) {
      std::vector<int64_t> idx = tcref::unravel(i, out);
      for (size_t k = 0; k < idx.size(); k++) idx[k] = pos[k][static_cast<size_t>(idx[k])];
      return x.a.at(idx);
    });
    return {r, x.d, x.mag};
  }
  V index(const V& x, int64_t i) {
    int64_t n = x.shape()[0];
    std::vector<tc::Slice> s(x.shape().size(), tc::Slice());
    s[0] = tc::Slice(i < 0 ? i + n : i, (i < 0 ? i + n : i) + 1);
    V one = slice(x, s);
    Shape rest(x.shape().begin() + 1, x.shape().end());
    return reshape(one, rest);
  }
  V setitem(V x, const std::vector<tc::Slice>& s, double value) {
    std::vector<std::vector<int64_t>> pos;
    for (size_t k = 0; k < s.size(); k++) pos.push_back(slice_positions(s[k], x.shape()[k]));
    for (int64_t i = 0; i < x.a.size(); i++) {
      std::vector<int64_t> idx = tcref::unravel(i, x.shape());
      bool in = true;
      for (size_t k = 0; k < idx.size(); k++)
        in = in && std::find(pos[k].begin(), pos[k].end(), idx[k]) != pos[k].end();
      if (in) x.a.v[static_cast<size_t>(i)] = tcref::represent(value, x.d);
    }
    x.mag = std::max(x.mag, std::fabs(value));
    return x;
  }
  V reduce(const V& x, const std::string& op, std::vector<int> axes, bool keepdim) {
    tcref::Reduce r = op == "sum"   ? tcref::Reduce::Sum
                      : op == "max" ? tcref::Reduce::Max
                                    : tcref::Reduce::Min;
    if (axes.empty() && !x.shape().empty())  // every axis, spelled out (reference: {} is all)
      for (size_t k = 0; k < x.shape().size(); k++) axes.push_back(static_cast<int>(k));
    if (x.shape().empty()) return x;
    double terms = 1;
    for (int a : axes) terms *= static_cast<double>(x.shape()[static_cast<size_t>(a)]);
    return rep(tcref::reduce(x.a, r, axes, keepdim), x.d, op == "sum" ? x.mag * terms : x.mag);
  }
  V matmul(const V& x, const V& y) {
    double k = x.shape().empty() ? 1 : static_cast<double>(x.shape().back());
    return rep(tcref::matmul(x.a, y.a), x.d, x.mag * y.mag * k);
  }
  V cast(const V& x, DType d) {
    NDArray a = x.a;
    if (dt::is_float(x.d) && (dt::is_int(d) || d == dt::bool_))
      for (double v : a.v) {  // at a truncation edge, float32 arithmetic may land either side
        double k = std::round(v);
        if (d == dt::bool_ ? v != 0 && std::fabs(v) < 1e-4
                           : k != 0 && std::fabs(v - k) < 1e-4 * std::max(1.0, std::fabs(v)))
          ambiguous = true;
      }
    if (dt::is_float(x.d) && (d == dt::float16 || d == dt::bfloat16))
      for (double v : a.v)  // near a rounding midpoint, float32 arithmetic may land either side
        if (tcref::represent(v * (1 - 1e-5), d) != tcref::represent(v * (1 + 1e-5), d))
          ambiguous = true;
    if (dt::is_int(d) && !dt::is_int(x.d))
      a = tcref::map(a, [](double v) { return std::trunc(v); });
    return rep(a, d, x.mag);
  }
  V clip(const V& x, double lo, double hi) {
    return rep(tcref::map(x.a, [&](double v) { return std::clamp(v, lo, hi); }), x.d, x.mag);
  }
};

// ------------------------------------------------------------------ the tinycore side

struct Lazy {
  using V = Tensor;
  std::vector<Tensor> inputs;
  size_t next = 0;
  bool smooth = true;  // (the generator's bookkeeping; Ref's is the one read)
  V leaf(const Shape&, DType) { return inputs.at(next++); }
  V leaf_index(const Shape&, int64_t, int64_t) { return inputs.at(next++); }
  V take(const V& x, const V& idx) { return x.getitem({tc::IndexItem(idx)}); }
  V conv(const V& x, const V& w, int64_t pad) {
    tc::ConvOpts o;
    o.padding = pad;
    return x.conv2d(w, o);
  }
  void note(const std::string&, const V&) {}
  V unary(const V& x, const std::string& op) {
    if (op == "neg") return x.neg();
    if (op == "abs") return x.abs();
    if (op == "relu") return x.relu();
    if (op == "sin") return x.sin();
    if (op == "tanh") return x.tanh();
    if (op == "sigmoid") return x.sigmoid();
    if (op == "exp") return x.clip(-3.0, 3.0).exp();
    return x.mul(x);  // square
  }
  V binary(const V& x, const V& y, const std::string& op) {
    if (op == "add") return x.add(y);
    if (op == "sub") return x.sub(y);
    if (op == "mul") return x.mul(y);
    if (op == "maximum") return x.maximum(y);
    return x.lt(y);
  }
  V where(const V& c, const V& x, const V& y) { return c.where(x, y); }
  V reshape(const V& x, const Shape& s) { return x.reshape(s); }
  V permute(const V& x, const std::vector<int>& p) { return x.permute(p); }
  V expand(const V& x, const Shape& s) { return x.expand(s); }
  V pad(const V& x, const tcref::Pairs& p) { return x.pad(p); }
  V shrink(const V& x, const tcref::Pairs& p) { return x.shrink(p); }
  V flip(const V& x, const std::vector<int>& axes) { return x.flip(axes); }
  V slice(const V& x, const std::vector<tc::Slice>& s) {
    std::vector<tc::IndexItem> idx(s.begin(), s.end());
    return x.getitem(idx);
  }
  V index(const V& x, int64_t i) { return x.getitem({tc::IndexItem(i)}); }
  V setitem(V x, const std::vector<tc::Slice>& s, double value) {
    // into a copy: x may be a view of a leaf (a write would land there, tinygrad's aliasing) or
    // expanded (an error); the reference's values are functional
    x = x.clone();
    std::vector<tc::IndexItem> idx(s.begin(), s.end());
    if (x.dtype() == dt::float32)
      x.setitem(idx, tc::ConstValue(value));
    else
      x.setitem(idx, tc::ConstValue(static_cast<int64_t>(value)));
    return x;
  }
  V reduce(const V& x, const std::string& op, const std::vector<int>& axes, bool keepdim) {
    tc::Axes a = axes.empty() ? tc::Axes() : tc::Axes(axes);  // none listed: all, as Ref
    if (op == "sum") return x.sum(a, keepdim);
    if (op == "max") return x.max(a, keepdim);
    return x.min(a, keepdim);
  }
  V matmul(const V& x, const V& y) { return x.matmul(y); }
  V cast(const V& x, DType d) { return x.cast(d); }
  V clip(const V& x, double lo, double hi) { return x.clip(lo, hi); }
};

// ------------------------------------------------------------------ the generator

// A shape that broadcasts with `s` (right-aligned): each dimension the same or 1, maybe fewer.
Shape broadcastable(Rng& r, const Shape& s) {
  Shape o(s.begin() + pick(r, static_cast<int64_t>(s.size()) + 1) * chance(r, 30), s.end());
  for (int64_t& d : o)
    if (chance(r, 30)) d = 1;
  return o;
}
// A shape of `n` elements (n may be 0), of rank up to 4.
Shape same_numel(Rng& r, int64_t n) {
  Shape s;
  if (n == 0) {
    for (int64_t k = 1 + pick(r, 3); k > 0; k--) s.push_back(dim_size(r));
    if (tcref::numel(s) != 0) s[static_cast<size_t>(pick(r, static_cast<int64_t>(s.size())))] = 0;
    return s;
  }
  for (int64_t p = 2; n > 1;) {
    if (n % p) {
      p++;
      continue;
    }
    n /= p;
    if (s.empty() || (s.size() < 4 && chance(r, 50))) s.push_back(1);
    s[static_cast<size_t>(pick(r, static_cast<int64_t>(s.size())))] *= p;
  }
  if (chance(r, 30)) s.insert(s.begin() + pick(r, static_cast<int64_t>(s.size()) + 1), 1);
  return s;
}
tc::Slice random_slice(Rng& r, int64_t n) {
  static const int64_t steps[] = {1, 1, 2, 3, -1, -2};
  auto bound = [&]() -> std::optional<int64_t> {
    if (chance(r, 35)) return std::nullopt;
    return pick(r, 2 * n + 3) - n - 1;  // negative, in range, or past either end
  };
  std::optional<int64_t> step;
  if (chance(r, 70)) step = steps[pick(r, 6)];
  return tc::Slice(bound(), bound(), step);
}
std::vector<int> random_axes(Rng& r, size_t rank) {
  std::vector<int> axes;
  for (size_t k = 0; k < rank; k++)
    if (chance(r, 50)) axes.push_back(static_cast<int>(k));
  return axes;
}

constexpr int64_t kMaxNumel = 600;

template <class B>
typename B::V program(B& b, Rng& r) {
  using V = typename B::V;
  static const DType leaf_types[] = {dt::float32, dt::float32, dt::float32, dt::int32, dt::bool_};
  DType d0 = leaf_types[pick(r, 5)];
  V x = b.leaf(random_shape(r), d0);
  for (int64_t steps = 2 + pick(r, 5); steps > 0; steps--) {
    const Shape s = x.shape();
    const int rank = static_cast<int>(s.size());
    const DType d = x.dtype();
    const bool fl = d == dt::float32, boolean = d == dt::bool_;
    switch (pick(r, 15)) {
      case 0: {  // unary
        static const char* fops[] = {"neg",  "abs",     "relu", "sin",
                                     "tanh", "sigmoid", "exp",  "square"};
        static const char* iops[] = {"neg", "abs", "square"};
        if (boolean) break;
        std::string op = fl ? fops[pick(r, 8)] : iops[pick(r, 3)];
        if (op == "abs" || op == "relu" || op == "exp") b.smooth = false;
        x = b.unary(x, op);
        b.note(op, x);
        break;
      }
      case 1:
      case 2: {  // binary, broadcasting either way
        if (boolean) break;
        static const char* ops[] = {"add", "sub", "mul", "maximum", "lt"};
        std::string op = ops[pick(r, 5)];
        Shape os = broadcastable(r, s);
        V y = b.leaf(os, d);
        if (op == "maximum" || op == "lt") b.smooth = false;
        bool swap = chance(r, 30);
        V z = swap ? b.binary(y, x, op) : b.binary(x, y, op);
        if (op == "lt") {  // and back to numbers: where(x < y, x, y)
          z = swap ? b.where(z, y, x) : b.where(z, x, y);
          op = "where(lt)";
        }
        x = z;
        b.note(op + " with " + tcref::shape_str(os), x);
        break;
      }
      case 3: {
        Shape ns = same_numel(r, tcref::numel(s));
        x = b.reshape(x, ns);
        b.note("reshape " + tcref::shape_str(ns), x);
        break;
      }
      case 4: {
        std::vector<int> p(static_cast<size_t>(rank));
        for (int k = 0; k < rank; k++) p[static_cast<size_t>(k)] = k;
        std::shuffle(p.begin(), p.end(), r);
        x = b.permute(x, p);
        b.note("permute", x);
        break;
      }
      case 5: {  // expand dimensions of 1, maybe a new leading one
        Shape e = s;
        for (int64_t& n : e)
          if (n == 1 && chance(r, 60)) n = dim_size(r);
        if (rank < 4 && chance(r, 30)) e.insert(e.begin(), dim_size(r));
        if (tcref::numel(e) > kMaxNumel) break;
        x = b.expand(x, e);
        b.note("expand " + tcref::shape_str(e), x);
        break;
      }
      case 6: {
        tcref::Pairs p;
        for (int k = 0; k < rank; k++) p.push_back({pick(r, 3), pick(r, 3)});
        Shape ps = s;
        for (int k = 0; k < rank; k++) ps[static_cast<size_t>(k)] += p[k].first + p[k].second;
        if (tcref::numel(ps) > kMaxNumel) break;
        x = b.pad(x, p);
        b.note("pad", x);
        break;
      }
      case 7: {
        tcref::Pairs p;
        for (int64_t n : s) {
          int64_t lo = pick(r, n + 1);
          p.push_back({lo, lo + pick(r, n - lo + 1)});
        }
        x = b.shrink(x, p);
        b.note("shrink", x);
        break;
      }
      case 8: {
        std::vector<int> axes = random_axes(r, s.size());
        x = b.flip(x, axes);
        b.note("flip", x);
        break;
      }
      case 9: {  // getitem: slices with any step, or an int
        if (rank > 0 && s[0] > 0 && chance(r, 30)) {
          int64_t i = pick(r, 2 * s[0]) - s[0];
          x = b.index(x, i);
          b.note("getitem [" + std::to_string(i) + "]", x);
          break;
        }
        std::vector<tc::Slice> sl;
        for (int64_t n : s) sl.push_back(random_slice(r, n));
        x = b.slice(x, sl);
        b.note("getitem slices", x);
        break;
      }
      case 10: {  // setitem of a constant into slices
        if (boolean) break;
        std::vector<tc::Slice> sl;
        for (int64_t n : s) sl.push_back(random_slice(r, n));
        double v = static_cast<double>(pick(r, 7) - 3);
        x = b.setitem(x, sl, v);
        b.note("setitem slices = " + std::to_string(static_cast<int>(v)), x);
        break;
      }
      case 11: {  // reduce
        if (boolean) break;
        static const char* ops[] = {"sum", "sum", "max", "min"};
        std::string op = ops[pick(r, 4)];
        if (op != "sum") b.smooth = false;
        std::vector<int> axes = random_axes(r, s.size());
        bool keep = chance(r, 40);
        x = b.reduce(x, op, axes, keep);
        b.note(op + (keep ? " keepdim" : ""), x);
        break;
      }
      case 12: {  // matmul with a (k, n) leaf, or a cast
        if (fl && rank == 2 && chance(r, 60)) {
          V y = b.leaf({s[1], dim_size(r)}, d);
          x = b.matmul(x, y);
          b.note("matmul", x);
          break;
        }
        static const DType to[] = {dt::float16, dt::bfloat16, dt::float64, dt::int8,   dt::uint8,
                                   dt::int64,   dt::int32,    dt::bool_,   dt::float32};
        DType t = to[pick(r, 9)];
        if (t == d) break;
        b.smooth = false;
        if (dt::is_int(t) && !boolean) {  // in range of the integer: wrapping is not compared
          double lo = t == dt::uint8 ? 0 : t == dt::int8 ? -100 : -1000;
          x = b.clip(x, lo, t == dt::int8 || t == dt::uint8 ? 100 : 1000);
          b.note("clip", x);
        }
        x = b.cast(x, t);
        b.note(std::string("cast ") + t.name(), x);
        if (t != dt::float32 && t != dt::int32 && t != dt::bool_) {
          x = b.cast(x, dt::is_float(t) ? dt::float32 : dt::int32);  // on in float32 or int32
          b.note("cast back", x);
        }
        break;
      }
      case 13: {  // advanced indexing: x[idx] along dimension 0, negative indices allowed
        if (rank == 0 || s[0] == 0) break;
        Shape is = random_shape(r, 2);
        if (tcref::numel(is) * tcref::numel(s) / s[0] > kMaxNumel) break;
        V idx = b.leaf_index(is, -s[0], s[0] - 1);
        x = b.take(x, idx);
        b.note("getitem [index tensor]", x);
        break;
      }
      case 14: {  // conv2d of (N, C, H, W) with a small (K, C, kh, kw) kernel
        if (!fl || rank != 4) break;
        int64_t pad = pick(r, 2), kh = 1 + pick(r, 3), kw = 1 + pick(r, 3);
        if (s[2] + 2 * pad < kh || s[3] + 2 * pad < kw || s[1] == 0) break;
        V w = b.leaf({1 + pick(r, 3), s[1], kh, kw}, d);
        x = b.conv(x, w, pad);
        b.note("conv2d pad " + std::to_string(pad), x);
        break;
      }
    }
  }
  return x;
}

// ------------------------------------------------------------------ running and comparing

// Why `got` differs from the reference, or "" when it agrees.
std::string compare(const Tensor& got, const RefValue& want, double scale_tol = 1) {
  if (got.shape() != want.shape())
    return "shape " + tcref::shape_str(got.shape()) + ", reference " +
           tcref::shape_str(want.shape());
  if (got.dtype() != want.d)
    return std::string("dtype ") + got.dtype().name() + ", reference " + want.d.name();
  std::vector<double> g = got.data<double>();
  double scale = std::max({1.0, want.mag, Ref::largest(want.a)});
  bool exact = !dt::is_float(want.d);
  double rtol = want.d == dt::float16 || want.d == dt::bfloat16 ? 1e-2 : 2e-4;
  for (size_t i = 0; i < g.size(); i++) {
    double e = want.a.v[i];
    bool ok = exact           ? g[i] == e
              : std::isnan(e) ? std::isnan(g[i])
              : std::isinf(e) ? g[i] == e
                              : std::fabs(g[i] - e) <= scale_tol * rtol * scale;
    if (!ok)
      return "element " + std::to_string(i) + " is " + std::to_string(g[i]) + ", reference " +
             std::to_string(e);
  }
  return "";
}

struct Outcome {
  int64_t programs = 0, jitted = 0, gradients = 0, empty = 0, ambiguous = 0;
  std::map<std::string, int64_t> ops;  // steps run, by op (the listing's first word)
};

// Tallies the ops of a program's listing, and whether a value in it had no element.
void tally(const std::string& listing, Outcome& o) {
  std::istringstream lines(listing);
  bool empty = false;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string op;
    words >> op;
    if (op.size() > 1 && op[0] == 'x' && std::isdigit(static_cast<unsigned char>(op[1])))
      op = "leaf";
    o.ops[op]++;
    size_t arrow = line.rfind("(");
    empty = empty || (arrow != std::string::npos && (line.find("(0", arrow) != std::string::npos ||
                                                     line.find(" 0,", arrow) != std::string::npos ||
                                                     line.find(" 0)", arrow) != std::string::npos));
  }
  o.empty += empty;
}

std::vector<Tensor> inputs_of(const Ref& ref) {
  std::vector<Tensor> in;
  for (size_t i = 0; i < ref.leaves.size(); i++)
    in.push_back(tcref::tensor(ref.leaves[i], ref.leaf_dtypes[i]));
  return in;
}

// Runs program `seed` every way; returns what went wrong ("" when nothing did).
std::string run_one(uint64_t seed, Outcome& o) {
  auto reference = [&](uint64_t values, const std::vector<NDArray>* given = nullptr) {
    Ref ref{values, given};
    ref.unrounded = given != nullptr;
    Rng r(seed);
    RefValue v = program(ref, r);
    return std::make_pair(std::move(ref), std::move(v));
  };
  auto [ref, want] = reference(seed);
  std::string listing = ref.log.str();
  auto failed = [&](const std::string& how, const std::string& why) {
    return "program " + std::to_string(seed) + " (" + how + "): " + why + "\n" + listing;
  };
  // plain, then again in the same process (caches warm)
  for (int round = 0; round < 2; round++) {
    uint64_t values = seed + static_cast<uint64_t>(round) * 7919;
    auto [r2, w2] = reference(values);
    try {
      Lazy lazy{inputs_of(r2)};
      Rng r(seed);
      Tensor got = program(lazy, r);
      if (std::string why = r2.ambiguous ? "" : compare(got, w2); !why.empty())
        return failed(round ? "second run" : "first run", why);
    } catch (const tc::Error& e) {
      return failed(round ? "second run" : "first run", std::string("error: ") + e.what());
    }
  }
  o.programs++;
  o.ambiguous += ref.ambiguous;
  tally(listing, o);
  // under TinyJit: three calls (plain, capture, replay) on new values each
  if (tcref::numel(want.shape()) > 0) {
    tc::TinyJit jit([&](const std::vector<Tensor>& in) {
      Lazy lazy{in};
      Rng r(seed);
      return std::vector<Tensor>{program(lazy, r).contiguous().realize()};
    });
    for (int call = 0; call < 3; call++) {
      auto [r3, w3] = reference(seed * 31 + static_cast<uint64_t>(call) + 1);
      try {
        std::vector<Tensor> out = jit(inputs_of(r3));
        if (std::string why = r3.ambiguous ? "" : compare(out[0], w3); !why.empty())
          return failed("TinyJit call " + std::to_string(call + 1), why);
      } catch (const tc::Error& e) {
        std::string msg = e.what();
        if (call == 1 && msg.find("no kernels") != std::string::npos) break;  // constants only
        return failed("TinyJit call " + std::to_string(call + 1), "error: " + msg);
      }
    }
    o.jitted++;
  }
  // gradients of sum(out * weights) by each float leaf, against central differences (an index
  // leaf is an int32 constant of the program)
  int64_t leaf_numel = 0;
  std::vector<size_t> wrt;
  for (size_t i = 0; i < ref.leaves.size(); i++)
    if (ref.leaf_dtypes[i] == dt::float32) leaf_numel += ref.leaves[i].size(), wrt.push_back(i);
  if (ref.smooth && !wrt.empty() && want.d == dt::float32 && leaf_numel <= 48) {
    NDArray weights = tcref::random(want.shape(), seed + 3);
    std::vector<Tensor> in = inputs_of(ref), targets;
    for (size_t i : wrt) targets.push_back(in[i].requires_grad_());
    Lazy lazy{in};
    Rng r(seed);
    Tensor loss = program(lazy, r).mul(tcref::tensor(weights)).sum();
    std::vector<Tensor> grads;
    try {
      grads = loss.gradient(targets);
    } catch (const tc::Error& e) {
      return failed("gradient", std::string("error: ") + e.what());
    }
    auto loss_at = [&](const std::vector<NDArray>& leaves) {
      RefValue v = reference(seed, &leaves).second;
      double s = 0;
      for (size_t k = 0; k < v.a.v.size(); k++) s += v.a.v[k] * weights.v[k];
      return s;
    };
    for (size_t j = 0; j < wrt.size(); j++) {
      size_t i = wrt[j];
      NDArray g = ref.leaves[i];
      for (int64_t k = 0; k < g.size(); k++) {
        std::vector<NDArray> up = ref.leaves, down = ref.leaves;
        const double h = 1e-3;
        up[i].v[static_cast<size_t>(k)] += h;
        down[i].v[static_cast<size_t>(k)] -= h;
        g.v[static_cast<size_t>(k)] = (loss_at(up) - loss_at(down)) / (2 * h);
      }
      if (std::string why = compare(grads[j], {g, dt::float32}, 10); !why.empty())
        return failed("gradient of x" + std::to_string(i), why);
    }
    o.gradients++;
  }
  return "";
}

int64_t env_int(const char* name, int64_t dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoll(v, nullptr, 10) : dflt;
}

// A crash names the program it happened in (replay it with FUZZ_SEED and FUZZ_PROGRAMS=1).
// The handler then puts back the one before it (the sanitizers', or the default) and returns: the
// faulting instruction runs again and that handler reports it.
volatile uint64_t current_seed = 0;
struct sigaction previous[NSIG];
extern "C" void on_crash(int sig) {
  char msg[96], digits[24];
  int n = 0;
  uint64_t v = current_seed;
  do digits[n++] = static_cast<char>('0' + v % 10);
  while ((v /= 10) > 0);
  const char head[] = "\ntensor_fuzz: crashed in program ";
  size_t len = sizeof head - 1;
  std::memcpy(msg, head, len);
  while (n > 0) msg[len++] = digits[--n];
  msg[len++] = '\n';
  (void)!write(2, msg, len);
  sigaction(sig, &previous[sig], nullptr);
}
void name_the_program_on_crash() {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    struct sigaction sa = {};
    sa.sa_handler = on_crash;
    sigaction(sig, &sa, &previous[sig]);
  }
}

// Each defect the fuzzer found is a named test in the suite of its op (a seed names a program
// of this generator only, so seeds are not kept): index_test CloneOwnsItsBuffer, jit_test
// AnInputReturnedReshapedKeepsTheOutputShape, movement_test
// EmptyTensorsPaddedAndReducedReadNoBuffer and PaddedMaxOverNineLanesMatchesTheReference.
TEST(TensorFuzz, RandomProgramsAgreeWithTheFloat64Reference) {
  const double seconds = static_cast<double>(env_int("FUZZ_SECONDS", 60));
  const int64_t limit = env_int("FUZZ_PROGRAMS", -1);
  uint64_t seed = static_cast<uint64_t>(env_int(
      "FUZZ_SEED", std::chrono::system_clock::now().time_since_epoch().count() % 1000000000));
  std::printf("tensor_fuzz: seeds from %llu for %.0f s (FUZZ_SEED=%llu FUZZ_PROGRAMS=1 replays)\n",
              static_cast<unsigned long long>(seed), seconds,
              static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  name_the_program_on_crash();
  Outcome o;
  auto t0 = std::chrono::steady_clock::now();
  int failures = 0;
  for (int64_t n = 0; limit < 0 || n < limit; n++, seed++) {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (limit < 0 && elapsed >= seconds) break;
    if (limit == 1) {
      Ref ref{seed};
      Rng r(seed);
      program(ref, r);
      std::printf("program %llu:\n%s", static_cast<unsigned long long>(seed),
                  ref.log.str().c_str());
      std::fflush(stdout);
    }
    current_seed = seed;
    if (std::string why = run_one(seed, o); !why.empty()) {
      ADD_FAILURE() << why;
      if (++failures >= 5) break;
    }
  }
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "tensor_fuzz: %lld programs agreed (%lld under TinyJit, %lld gradients checked) in %.1f s: "
      "%.1f programs/s\n",
      static_cast<long long>(o.programs), static_cast<long long>(o.jitted),
      static_cast<long long>(o.gradients), elapsed, static_cast<double>(o.programs) / elapsed);
  std::printf(
      "tensor_fuzz: %lld programs had a value with no element, %lld cast a value at a truncation "
      "or rounding edge (not compared); steps by op:",
      static_cast<long long>(o.empty), static_cast<long long>(o.ambiguous));
  for (const auto& [op, n] : o.ops) std::printf(" %s %lld", op.c_str(), static_cast<long long>(n));
  std::printf("\n");
}

}  // namespace
