// Finite-difference gradient checking for the Tensor tests (header-only, usable from any suite).
//
//   tcgrad::check_grad(tcgrad::unary([](const tc::Tensor& x) { return x.tanh(); }),
//                      {{{2, 3}, tcgrad::mixed(6)}});
//
// Every input becomes a float64 tensor with requires_grad; f's output is reduced to a scalar by
// a weighted sum with fixed, distinct weights; both backward() (.grad) and gradient() are
// compared against central differences of that scalar, element by element.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tinycore/dtype.h"
#include "tinycore/tensor.h"

namespace tcgrad {

struct Input {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

using Fn = std::function<tc::Tensor(const std::vector<tc::Tensor>&)>;

namespace detail {

constexpr double kEps = 1e-6;

inline int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline tc::Tensor f64(const std::vector<double>& v, const std::vector<int64_t>& shape) {
  return tc::Tensor::from_vector<double>(v, shape);
}

// Deterministic, distinct weights, so a non-scalar output is reduced to a scalar whose gradient
// is not the same for every element.
inline tc::Tensor weights_for(const std::vector<int64_t>& shape) {
  std::vector<double> w(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < w.size(); i++) w[i] = 0.5 + 0.37 * static_cast<double>((i * 7) % 11);
  return f64(w, shape);
}

// f's output reduced to a scalar: itself, or its weighted sum.
inline tc::Tensor scalar_loss(const Fn& f, const std::vector<tc::Tensor>& xs) {
  tc::Tensor out = f(xs);
  if (out.ndim() == 0) return out;
  return out.mul(weights_for(out.shape())).sum();
}

inline double eval(const Fn& f, const std::vector<Input>& in) {
  std::vector<tc::Tensor> xs;
  for (const Input& i : in) xs.push_back(f64(i.values, i.shape));
  return scalar_loss(f, xs).item<double>();
}

inline void expect_near_all(const std::vector<double>& got, const std::vector<double>& want,
                            double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int failures = 0;
  for (size_t j = 0; j < got.size() && failures < 10; j++) {
    bool ok = std::abs(got[j] - want[j]) <= tol * std::max(1.0, std::abs(want[j]));
    if (!ok) {
      failures++;
      ADD_FAILURE() << what << ": element " << j << " is " << got[j] << ", central difference "
                    << want[j] << " (tol " << tol << ")";
    }
  }
}

}  // namespace detail

using detail::f64;

// got within 1e-5 (relative, or absolute below 1) of want, element by element.
inline void expect_near_all(const std::vector<double>& got, const std::vector<double>& want,
                            const std::string& what) {
  detail::expect_near_all(got, want, 1e-5, what);
}

// (n, k) @ (k, m) from reshape, mul and sum: a matmul whose gradient autograd derives op by op.
inline tc::Tensor matmul_by_sum(const tc::Tensor& a, const tc::Tensor& b) {
  int64_t n = a.shape()[0], k = a.shape()[1], m = b.shape()[1];
  return a.reshape({n, k, 1}).mul(b.reshape({1, k, m})).sum(1);
}

// backward() and gradient() of f against central differences (step 1e-6), for every input;
// tolerance tol * max(1, |numeric|) per element.
inline void check_grad(const Fn& f, const std::vector<Input>& in, double tol = 1e-5) {
  for (size_t k = 0; k < in.size(); k++)
    ASSERT_EQ(static_cast<int64_t>(in[k].values.size()), detail::numel(in[k].shape))
        << "check_grad: input " << k << " has the wrong number of values";
  std::vector<tc::Tensor> xs;
  for (const Input& i : in) xs.push_back(detail::f64(i.values, i.shape).requires_grad_());
  tc::Tensor loss = detail::scalar_loss(f, xs);
  ASSERT_EQ(loss.dtype(), tc::dtypes::float64) << "check_grad: f must keep float64";
  std::vector<tc::Tensor> via_gradient = loss.gradient(xs);
  loss.backward();
  for (size_t k = 0; k < in.size(); k++) {
    std::vector<double> numeric(in[k].values.size());
    for (size_t j = 0; j < numeric.size(); j++) {
      std::vector<Input> plus = in, minus = in;
      plus[k].values[j] += detail::kEps;
      minus[k].values[j] -= detail::kEps;
      numeric[j] = (detail::eval(f, plus) - detail::eval(f, minus)) / (2 * detail::kEps);
    }
    std::optional<tc::Tensor> g = xs[k].grad();
    ASSERT_TRUE(g.has_value()) << "input " << k << " got no grad";
    EXPECT_EQ(g->shape(), in[k].shape);
    EXPECT_EQ(g->dtype(), tc::dtypes::float64);
    detail::expect_near_all(g->data<double>(), numeric, tol,
                            "backward, input " + std::to_string(k));
    detail::expect_near_all(via_gradient[k].data<double>(), numeric, tol,
                            "gradient(), input " + std::to_string(k));
  }
}

// start, start + step, ... (default: 0.3 upward, away from 0 and from each other: no kinks, ties)
inline std::vector<double> ramp(int64_t n, double start = 0.3, double step = 0.41) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; i++) v.push_back(start + step * static_cast<double>(i));
  return v;
}

// mixed signs, none near 0, no two equal: 0.25, -0.55, 0.85, -1.15, ...
inline std::vector<double> mixed(int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; i++)
    v.push_back((i % 2 ? -1.0 : 1.0) * (0.25 + 0.3 * static_cast<double>(i)));
  return v;
}

inline Fn unary(std::function<tc::Tensor(const tc::Tensor&)> op) {
  return [op](const std::vector<tc::Tensor>& x) { return op(x[0]); };
}
inline Fn binary(std::function<tc::Tensor(const tc::Tensor&, const tc::Tensor&)> op) {
  return [op](const std::vector<tc::Tensor>& x) { return op(x[0], x[1]); };
}

}  // namespace tcgrad
