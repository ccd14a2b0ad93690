// A naive host-side reference for the Tensor tests: an N-d array of doubles with the movement
// ops, broadcasting elementwise maps and reductions written as plain loops, plus helpers that
// turn host values into tensors of any dtype and compare a realized tensor against a reference.
// Nothing here calls into tinycore's graph code except Tensor::from_blob / data / shape.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tinycore/dtype.h"
#include "tinycore/dtype/visit.h"
#include "tinycore/tensor.h"

namespace tc {
// gtest prints DTypes by name in failure messages.
inline void PrintTo(const DType& d, std::ostream* os) { *os << d.name(); }
}  // namespace tc

namespace tcref {

using Shape = std::vector<int64_t>;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); i++) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

// Row-major multi-index of flat position `i`.
inline std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t k = s.size(); k-- > 0;) {
    idx[k] = s[k] ? i % s[k] : 0;
    i = s[k] ? i / s[k] : 0;
  }
  return idx;
}

inline int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t flat = 0;
  for (size_t k = 0; k < s.size(); k++) flat = flat * s[k] + idx[k];
  return flat;
}

struct NDArray {
  Shape shape;
  std::vector<double> v;

  NDArray() = default;
  NDArray(Shape s, std::vector<double> values) : shape(std::move(s)), v(std::move(values)) {
    EXPECT_EQ(static_cast<int64_t>(v.size()), numel(shape)) << "reference: bad NDArray";
  }
  int64_t size() const { return static_cast<int64_t>(v.size()); }
  double at(const std::vector<int64_t>& idx) const {
    return v[static_cast<size_t>(ravel(idx, shape))];
  }
};

// An array whose element i is f(i).
// Tolerances the suites share (float32 arithmetic, transcendental functions), special values,
// and an array from its shape and values.
inline constexpr double kF32 = 1e-5, kTrans = 1e-4;
inline const double kInf = std::numeric_limits<double>::infinity();
inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline NDArray vals(Shape shape, std::vector<double> v) {
  return NDArray(std::move(shape), std::move(v));
}

inline NDArray generate(const Shape& s, const std::function<double(int64_t)>& f) {
  std::vector<double> v(static_cast<size_t>(numel(s)));
  for (size_t i = 0; i < v.size(); i++) v[i] = f(static_cast<int64_t>(i));
  return NDArray(s, std::move(v));
}

// Deterministic pseudo-random values in [lo, hi), rounded to float32 so that a float32 tensor holds
// exactly the reference values.
inline NDArray random(const Shape& s, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  return generate(s, [&](int64_t) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    double u = static_cast<double>(state >> 11) / 9007199254740992.0;  // [0, 1)
    return static_cast<double>(static_cast<float>(lo + (hi - lo) * u));
  });
}

// Deterministic pseudo-random integers in [lo, hi].
inline NDArray random_int(const Shape& s, uint64_t seed, int64_t lo, int64_t hi) {
  uint64_t state = seed * 2862933555777941757ULL + 3037000493ULL;
  return generate(s, [&](int64_t) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(
        lo + static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(hi - lo + 1)));
  });
}

// ------------------------------------------------------------------ movement

inline NDArray reshape(const NDArray& a, Shape s) {
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == -1)
      infer = static_cast<int>(i);
    else
      known *= s[i];
  }
  if (infer >= 0) s[static_cast<size_t>(infer)] = a.size() / known;
  EXPECT_EQ(numel(s), a.size()) << "reference reshape";
  return NDArray(s, a.v);
}

inline NDArray permute(const NDArray& a, const std::vector<int>& order) {
  Shape s;
  for (int o : order) s.push_back(a.shape[static_cast<size_t>(o)]);
  return generate(s, [&](int64_t i) {
    std::vector<int64_t> out = unravel(i, s), in(a.shape.size());
    for (size_t k = 0; k < order.size(); k++) in[static_cast<size_t>(order[k])] = out[k];
    return a.at(in);
  });
}

inline NDArray transpose(const NDArray& a, int d0, int d1) {
  std::vector<int> order(a.shape.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = static_cast<int>(i);
  int n = static_cast<int>(a.shape.size());
  std::swap(order[static_cast<size_t>((d0 + n) % n)], order[static_cast<size_t>((d1 + n) % n)]);
  return permute(a, order);
}

// numpy broadcast_to: new leading dimensions allowed, size-1 dimensions repeat.
inline NDArray expand(const NDArray& a, const Shape& s) {
  size_t lead = s.size() - a.shape.size();
  return generate(s, [&](int64_t i) {
    std::vector<int64_t> out = unravel(i, s), in(a.shape.size());
    for (size_t k = 0; k < in.size(); k++) in[k] = a.shape[k] == 1 ? 0 : out[k + lead];
    return a.at(in);
  });
}

// Positive entries add `fill`, negative ones remove elements.
inline NDArray pad(const NDArray& a, const Pairs& p, double fill = 0.0) {
  Shape s;
  for (size_t k = 0; k < a.shape.size(); k++) s.push_back(a.shape[k] + p[k].first + p[k].second);
  return generate(s, [&](int64_t i) {
    std::vector<int64_t> out = unravel(i, s), in(a.shape.size());
    for (size_t k = 0; k < in.size(); k++) {
      in[k] = out[k] - p[k].first;
      if (in[k] < 0 || in[k] >= a.shape[k]) return fill;
    }
    return a.at(in);
  });
}

inline NDArray shrink(const NDArray& a, const Pairs& r) {
  Shape s;
  for (const auto& [b, e] : r) s.push_back(e - b);
  return generate(s, [&](int64_t i) {
    std::vector<int64_t> idx = unravel(i, s);
    for (size_t k = 0; k < idx.size(); k++) idx[k] += r[k].first;
    return a.at(idx);
  });
}

inline NDArray flip(const NDArray& a, const std::vector<int>& axes) {
  int n = static_cast<int>(a.shape.size());
  return generate(a.shape, [&](int64_t i) {
    std::vector<int64_t> idx = unravel(i, a.shape);
    for (int ax : axes) {
      size_t k = static_cast<size_t>((ax + n) % n);
      idx[k] = a.shape[k] - 1 - idx[k];
    }
    return a.at(idx);
  });
}

// ------------------------------------------------------------------ elementwise

inline NDArray map(const NDArray& a, const std::function<double(double)>& f) {
  NDArray out = a;
  for (double& x : out.v) x = f(x);
  return out;
}

inline Shape broadcast_shape(const std::vector<Shape>& shapes) {
  size_t nd = 0;
  for (const Shape& s : shapes) nd = std::max(nd, s.size());
  Shape out(nd, 1);
  for (const Shape& s : shapes)
    for (size_t k = 0; k < s.size(); k++)
      if (s[k] != 1) out[k + nd - s.size()] = s[k];
  return out;
}

inline NDArray broadcast_to(const NDArray& a, const Shape& s) {
  return a.shape == s ? a : expand(a, s);
}

inline NDArray zip(const NDArray& a, const NDArray& b,
                   const std::function<double(double, double)>& f) {
  Shape s = broadcast_shape({a.shape, b.shape});
  NDArray x = broadcast_to(a, s), y = broadcast_to(b, s);
  return generate(
      s, [&](int64_t i) { return f(x.v[static_cast<size_t>(i)], y.v[static_cast<size_t>(i)]); });
}

inline NDArray where(const NDArray& c, const NDArray& a, const NDArray& b) {
  Shape s = broadcast_shape({c.shape, a.shape, b.shape});
  NDArray cc = broadcast_to(c, s), x = broadcast_to(a, s), y = broadcast_to(b, s);
  return generate(s, [&](int64_t i) {
    size_t k = static_cast<size_t>(i);
    return cc.v[k] != 0 ? x.v[k] : y.v[k];
  });
}

// ------------------------------------------------------------------ reductions

enum class Reduce { Sum, Max, Min };

// Reduces over `axes` (negative allowed, duplicates ignored); no axes means all of them.
inline NDArray reduce(const NDArray& a, Reduce op, std::vector<int> axes = {},
                      bool keepdim = false) {
  int n = static_cast<int>(a.shape.size());
  std::vector<bool> red(a.shape.size(), axes.empty());
  for (int ax : axes) red[static_cast<size_t>((ax + n) % n)] = true;
  Shape kept;
  for (size_t k = 0; k < a.shape.size(); k++) kept.push_back(red[k] ? 1 : a.shape[k]);
  double init = op == Reduce::Sum   ? 0.0
                : op == Reduce::Max ? -std::numeric_limits<double>::infinity()
                                    : std::numeric_limits<double>::infinity();
  std::vector<double> acc(static_cast<size_t>(numel(kept)), init);
  for (int64_t i = 0; i < a.size(); i++) {
    std::vector<int64_t> idx = unravel(i, a.shape);
    for (size_t k = 0; k < idx.size(); k++)
      if (red[k]) idx[k] = 0;
    double& r = acc[static_cast<size_t>(ravel(idx, kept))];
    double x = a.v[static_cast<size_t>(i)];
    // max and min propagate NaN, as tinycore's and torch's do (std::max would drop it)
    r = op == Reduce::Sum                ? r + x
        : std::isnan(r) || std::isnan(x) ? std::nan("")
        : op == Reduce::Max              ? std::max(r, x)
                                         : std::min(r, x);
  }
  if (keepdim) return NDArray(kept, std::move(acc));
  Shape out;
  for (size_t k = 0; k < a.shape.size(); k++)
    if (!red[k]) out.push_back(a.shape[k]);
  return NDArray(out, std::move(acc));
}

// Python's % on doubles: the result has the divisor's sign.
inline double py_mod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

inline NDArray matmul(const NDArray& a, const NDArray& b) {
  int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  return generate({m, n}, [&](int64_t i) {
    double s = 0;
    for (int64_t j = 0; j < k; j++)
      s += a.v[static_cast<size_t>(i / n * k + j)] * b.v[static_cast<size_t>(j * n + i % n)];
    return s;
  });
}

// ------------------------------------------------------------------ dtypes on the host

inline float to_bf16(float f) {  // round to nearest even, as a bfloat16 value held in a float
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  std::memcpy(&f, &bits, 4);
  return f;
}

// `v` as the nearest value `d` holds (ints: truncation toward zero, in range values only).
inline double represent(double v, tc::DType d) {
  return tc::visit_dtype(d, [&]<class T>() -> double {
    if constexpr (std::is_same_v<T, bool>)
      return v != 0 ? 1.0 : 0.0;
    else if constexpr (std::is_same_v<T, tc::BFloat16Bits>)
      return to_bf16(static_cast<float>(v));
    else if constexpr (std::is_integral_v<T>)
      return std::trunc(v);  // in range values only
    else
      return static_cast<double>(static_cast<T>(v));  // float16, float32, float64
  });
}

template <typename S>
void put(std::vector<uint8_t>& out, size_t i, S value) {
  std::memcpy(out.data() + i * sizeof(S), &value, sizeof(S));
}

// The bytes of `a`'s values stored as `d`.
inline std::vector<uint8_t> encode(const NDArray& a, tc::DType d) {
  std::vector<uint8_t> out(a.v.size() * static_cast<size_t>(d.itemsize()) + 1);
  for (size_t i = 0; i < a.v.size(); i++) {
    double x = a.v[i];
    tc::visit_dtype(d, [&]<class T>() {
      if constexpr (std::is_same_v<T, bool>) {
        put<uint8_t>(out, i, x != 0);
      } else if constexpr (std::is_same_v<T, tc::BFloat16Bits>) {
        float f = to_bf16(static_cast<float>(x));
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        put(out, i, static_cast<uint16_t>(bits >> 16));
      } else {
        put(out, i, static_cast<T>(x));
      }
    });
  }
  return out;
}

// A realized tensor of dtype `d` holding `a` (values converted as `represent` does).
inline tc::Tensor tensor(const NDArray& a, tc::DType d = tc::dtypes::float32) {
  std::vector<uint8_t> bytes = encode(a, d);
  return tc::Tensor::from_blob(bytes.data(), a.shape, d);
}

inline NDArray represent(const NDArray& a, tc::DType d) {
  return map(a, [d](double x) { return represent(x, d); });
}

// ------------------------------------------------------------------ comparisons

// Every element of `t` within atol + rtol * |expected|; NaN and infinities must match exactly.
inline void expect_close(const tc::Tensor& t, const NDArray& expected, double rtol,
                         double atol = -1, const std::string& what = "") {
  if (atol < 0) atol = rtol;
  ASSERT_EQ(t.shape(), expected.shape) << what << ": shape " << shape_str(t.shape())
                                       << " vs reference " << shape_str(expected.shape);
  std::vector<double> got = t.data<double>();
  ASSERT_EQ(got.size(), expected.v.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < got.size() && failures < 8; i++) {
    double e = expected.v[i], g = got[i];
    bool ok = std::isnan(e)   ? std::isnan(g)
              : std::isinf(e) ? g == e
                              : std::fabs(g - e) <= atol + rtol * std::fabs(e);
    if (!ok) {
      failures++;
      ADD_FAILURE() << what << ": element " << i << " of shape " << shape_str(expected.shape)
                    << " is " << g << ", reference " << e << " (rtol " << rtol << ", atol " << atol
                    << ")";
    }
  }
}

// Exact comparison, for integer and bool results (read as int64 so large values stay exact).
inline void expect_exact(const tc::Tensor& t, const NDArray& expected,
                         const std::string& what = "") {
  ASSERT_EQ(t.shape(), expected.shape) << what << ": shape " << shape_str(t.shape())
                                       << " vs reference " << shape_str(expected.shape);
  std::vector<double> got = t.data<double>();
  ASSERT_EQ(got.size(), expected.v.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < got.size() && failures < 8; i++) {
    if (got[i] != expected.v[i]) {
      failures++;
      ADD_FAILURE() << what << ": element " << i << " of shape " << shape_str(expected.shape)
                    << " is " << got[i] << ", reference " << expected.v[i];
    }
  }
}

}  // namespace tcref
