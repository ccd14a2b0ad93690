// The reductions and scans of tinycore/tensor/reduce.cc and scan.cc against a naive
// double-precision reference (tests/tensor/reference.h), also on non-contiguous views, with
// negative axes, keepdim, special values, integer inputs and bad arguments. Its activations and
// extra elementwise ops: activation_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tests/tensor/reference.h"
#include "tinycore/dtype.h"
#include "tinycore/error.h"
#include "tinycore/tensor.h"

namespace {

namespace ref = tcref;
namespace dt = tc::dtypes;
using ref::NDArray;
using tc::Tensor;
using S = std::vector<int64_t>;

using ref::kF32, ref::kTrans, ref::kInf, ref::kNaN, ref::vals;

// A reference reduction over `axis` of size n at each output position: f(values along axis).
NDArray reduce_with(const NDArray& a, int axis, bool keepdim,
                    const std::function<double(const std::vector<double>&)>& f) {
  int nd = static_cast<int>(a.shape.size());
  int ax = (axis + nd) % nd;
  S kept = a.shape;
  kept[static_cast<size_t>(ax)] = 1;
  NDArray out = ref::generate(kept, [&](int64_t i) {
    std::vector<int64_t> idx = ref::unravel(i, kept);
    std::vector<double> line;
    for (int64_t k = 0; k < a.shape[static_cast<size_t>(ax)]; k++) {
      idx[static_cast<size_t>(ax)] = k;
      line.push_back(a.at(idx));
    }
    return f(line);
  });
  if (keepdim) return out;
  S s;
  for (int k = 0; k < nd; k++)
    if (k != ax) s.push_back(a.shape[static_cast<size_t>(k)]);
  return ref::reshape(out, s);
}

// A reference scan along `axis`: out[.., k, ..] = f(values 0..k along axis).
NDArray scan_with(const NDArray& a, int axis,
                  const std::function<double(const std::vector<double>&)>& f) {
  int nd = static_cast<int>(a.shape.size());
  size_t ax = static_cast<size_t>((axis + nd) % nd);
  return ref::generate(a.shape, [&](int64_t i) {
    std::vector<int64_t> idx = ref::unravel(i, a.shape);
    int64_t end = idx[ax];
    std::vector<double> line;
    for (int64_t k = 0; k <= end; k++) {
      idx[ax] = k;
      line.push_back(a.at(idx));
    }
    return f(line);
  });
}

double vsum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
double vmax(const std::vector<double>& v) {
  double m = -kInf;
  for (double x : v) m = std::max(m, x);
  return m;
}
double vvar(const std::vector<double>& v, double correction) {
  double m = vsum(v) / static_cast<double>(v.size()), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / std::max(0.0, static_cast<double>(v.size()) - correction);
}

// A (2, 3, 4) float32 tensor and its reference, plus permuted and flipped views of it.
struct Views {
  NDArray base = ref::random({2, 3, 4}, 7);
  Tensor t = ref::tensor(base);
  NDArray perm_ref = ref::permute(base, {2, 0, 1});
  Tensor perm = t.permute({2, 0, 1});
  NDArray flip_ref = ref::flip(base, {1, 2});
  Tensor flip = t.flip({1, 2});
};

// ================================================================== reductions

TEST(Reduce2Mean, AxesKeepdimViews) {
  Views v;
  auto mean = [](const std::vector<double>& l) { return vsum(l) / static_cast<double>(l.size()); };
  for (bool keepdim : {false, true}) {
    for (int axis : {0, 1, -1, -3}) {
      ref::expect_close(v.t.mean(axis, keepdim), reduce_with(v.base, axis, keepdim, mean), kF32,
                        kF32, "mean axis " + std::to_string(axis));
      ref::expect_close(v.perm.mean(axis, keepdim), reduce_with(v.perm_ref, axis, keepdim, mean),
                        kF32, kF32, "mean permuted");
      ref::expect_close(v.flip.mean(axis, keepdim), reduce_with(v.flip_ref, axis, keepdim, mean),
                        kF32, kF32, "mean flipped");
    }
  }
  Tensor all = v.t.mean();
  EXPECT_EQ(all.shape(), S{});
  EXPECT_NEAR(all.item<float>(), vsum(v.base.v) / 24, kF32);
  Tensor two = v.perm.mean({0, -1}, true);
  EXPECT_EQ(two.shape(), (S{1, 2, 1}));
  NDArray r = ref::reduce(v.perm_ref, ref::Reduce::Sum, {0, 2}, true);
  ref::expect_close(two, ref::map(r, [](double x) { return x / 12; }), kF32, kF32, "mean 2 axes");
}

TEST(Reduce2Mean, IntegerInputIsFloat32AndEmptyIsNaN) {
  NDArray a = vals({2, 3}, {1, 2, 4, -7, 5, 1});
  Tensor t = ref::tensor(a, dt::int32);
  Tensor m = t.mean(1);
  EXPECT_EQ(m.dtype(), dt::float32);
  ref::expect_close(m, vals({2}, {7.0 / 3, -1.0 / 3}), kF32);
  EXPECT_EQ(ref::tensor(a, dt::int8).mean().dtype(), dt::float32);
  EXPECT_EQ(ref::tensor(a, dt::float16).mean().dtype(), dt::float16);
  EXPECT_EQ(ref::tensor(a, dt::bool_).mean().dtype(), dt::float32);
  EXPECT_NEAR(ref::tensor(a, dt::bool_).mean().item<float>(), 1.0, kF32);
  EXPECT_TRUE(std::isnan(Tensor::zeros({0, 3}).mean().item<float>()));
}

TEST(Reduce2Var, CorrectionKeepdimViews) {
  Views v;
  for (double corr : {1.0, 0.0, 2.0}) {
    auto var = [corr](const std::vector<double>& l) { return vvar(l, corr); };
    auto sd = [corr](const std::vector<double>& l) { return std::sqrt(vvar(l, corr)); };
    for (bool keepdim : {false, true}) {
      if (keepdim && corr != 1) continue;
      for (int axis : {0, 2, -2}) {
        std::string what = "axis " + std::to_string(axis) + " corr " + std::to_string(corr);
        ref::expect_close(v.t.var(axis, keepdim, corr), reduce_with(v.base, axis, keepdim, var),
                          kF32, kF32, "var " + what);
        ref::expect_close(v.perm.var(axis, keepdim, corr),
                          reduce_with(v.perm_ref, axis, keepdim, var), kF32, kF32, "var perm");
        ref::expect_close(v.flip.std(axis, keepdim, corr),
                          reduce_with(v.flip_ref, axis, keepdim, sd), kF32, kF32, "std flip");
      }
    }
  }
  EXPECT_NEAR(v.t.var().item<float>(), vvar(v.base.v, 1), kF32);
  EXPECT_NEAR(v.t.std({}, false, 0).item<float>(), std::sqrt(vvar(v.base.v, 0)), kF32);
  // n - correction <= 0 divides by 0
  EXPECT_TRUE(std::isinf(ref::tensor(vals({1}, {3.0})).var().item<float>()) ||
              std::isnan(ref::tensor(vals({1}, {3.0})).var().item<float>()));
  EXPECT_TRUE(std::isinf(ref::tensor(vals({2}, {1.0, 3.0})).var({}, false, 5).item<float>()));
  // integer input
  Tensor vi = ref::tensor(vals({4}, {1, 2, 3, 10}), dt::int32).var();
  EXPECT_EQ(vi.dtype(), dt::float32);
  EXPECT_NEAR(vi.item<float>(), vvar({1, 2, 3, 10}, 1), kF32);
}

TEST(Reduce2Var, VarMeanStdMean) {
  Views v;
  auto [var, mean] = v.perm.var_mean(-1, true);
  ref::expect_close(var, reduce_with(v.perm_ref, -1, true, [](auto& l) { return vvar(l, 1); }),
                    kF32);
  ref::expect_close(mean, reduce_with(v.perm_ref, -1, true, [](auto& l) { return vsum(l) / 3; }),
                    kF32);
  auto [sd, mean2] = v.t.std_mean(0, false, 0);
  ref::expect_close(
      sd, reduce_with(v.base, 0, false, [](auto& l) { return std::sqrt(vvar(l, 0)); }), kF32);
  ref::expect_close(mean2, reduce_with(v.base, 0, false, [](auto& l) { return vsum(l) / 2; }),
                    kF32);
}

TEST(Reduce2AnyAll, Basic) {
  NDArray a = vals({3, 2}, {1, 1, 1, 0, 0, 0});
  for (tc::DType d : {dt::bool_, dt::int32, dt::float32}) {
    Tensor t = ref::tensor(a, d);
    Tensor any = t.any(1), all = t.all(1);
    EXPECT_EQ(any.dtype(), dt::bool_);
    EXPECT_EQ(all.dtype(), dt::bool_);
    ref::expect_exact(any, vals({3}, {1, 1, 0}), "any");
    ref::expect_exact(all, vals({3}, {1, 0, 0}), "all");
    ref::expect_exact(t.any(-2, true), vals({1, 2}, {1, 1}), "any keepdim");
    ref::expect_exact(t.all(0, true), vals({1, 2}, {0, 0}), "all keepdim");
    ref::expect_exact(t.transpose().all(-1), vals({2}, {0, 0}), "all transposed");
    EXPECT_TRUE(t.any().item<bool>());
    EXPECT_FALSE(t.all().item<bool>());
  }
  // NaN is true, -0.0 is false
  ref::expect_exact(ref::tensor(vals({2}, {kNaN, -0.0})).any(), vals({}, {1}));
  ref::expect_exact(ref::tensor(vals({2}, {kNaN, -0.0})).all(), vals({}, {0}));
  // empty: any false, all true
  EXPECT_FALSE(Tensor::zeros({0}).any().item<bool>());
  EXPECT_TRUE(Tensor::zeros({0}).all().item<bool>());
}

TEST(Reduce2Softmax, SoftmaxLogSoftmaxLogsumexp) {
  Views v;
  auto softmax_ref = [](const NDArray& a, int axis) {
    NDArray m = reduce_with(a, axis, true, vmax);
    NDArray e = ref::zip(a, m, [](double x, double y) { return std::exp(x - y); });
    NDArray s = reduce_with(e, axis, true, vsum);
    return ref::zip(e, s, [](double x, double y) { return x / y; });
  };
  auto lse = [](const std::vector<double>& l) {
    double m = vmax(l), s = 0;
    for (double x : l) s += std::exp(x - m);
    return std::log(s) + m;
  };
  for (int axis : {-1, 0, 1}) {
    std::string what = " axis " + std::to_string(axis);
    ref::expect_close(v.t.softmax(axis), softmax_ref(v.base, axis), kTrans, 1e-6, "softmax" + what);
    ref::expect_close(v.perm.softmax(axis), softmax_ref(v.perm_ref, axis), kTrans, 1e-6,
                      "softmax perm" + what);
    NDArray ls = ref::map(softmax_ref(v.flip_ref, axis), [](double x) { return std::log(x); });
    ref::expect_close(v.flip.log_softmax(axis), ls, kTrans, kTrans, "log_softmax flip" + what);
    for (bool keepdim : {false, true})
      ref::expect_close(v.perm.logsumexp(axis, keepdim),
                        reduce_with(v.perm_ref, axis, keepdim, lse), kTrans, kTrans,
                        "logsumexp" + what);
  }
  EXPECT_NEAR(v.t.logsumexp().item<float>(), lse(v.base.v), kTrans);
  EXPECT_EQ(v.t.logsumexp({}, true).shape(), (S{1, 1, 1}));
  // large values do not overflow
  Tensor big = ref::tensor(vals({3}, {1000, 1001, 1002}));
  ref::expect_close(big.softmax(), softmax_ref(vals({3}, {0, 1, 2}), 0), kTrans, 1e-6);
  EXPECT_NEAR(big.logsumexp().item<float>(), lse({1000, 1001, 1002}), 1e-3);
  // -inf entries get probability 0
  ref::expect_close(ref::tensor(vals({3}, {-kInf, 0, 0})).softmax(), vals({3}, {0, 0.5, 0.5}),
                    kF32);
  // integer input gives float32; the default sums the rows
  Tensor si = ref::tensor(vals({2, 2}, {1, 2, 3, 3}), dt::int32).softmax();
  EXPECT_EQ(si.dtype(), dt::float32);
  ref::expect_close(si.sum(-1), vals({2}, {1, 1}), kF32);
  // dtype argument
  EXPECT_EQ(v.t.softmax(-1, dt::float64).dtype(), dt::float64);
  EXPECT_EQ(v.t.log_softmax(-1, dt::float16).dtype(), dt::float16);
}

TEST(Reduce2Arg, ArgmaxArgmin) {
  NDArray a = vals({3, 4}, {1, 5, 5, 0, -2, -2, -7, 3, 4, 4, 4, 4});
  auto argmax = [](const std::vector<double>& l) {
    size_t best = 0;
    for (size_t i = 1; i < l.size(); i++)
      if (l[i] > l[best]) best = i;
    return static_cast<double>(best);
  };
  auto argmin = [](const std::vector<double>& l) {
    size_t best = 0;
    for (size_t i = 1; i < l.size(); i++)
      if (l[i] < l[best]) best = i;
    return static_cast<double>(best);
  };
  for (tc::DType d : {dt::float32, dt::int8, dt::uint8}) {
    NDArray da = d == dt::uint8 ? ref::map(a, [](double x) { return x + 7; }) : a;
    Tensor t = ref::tensor(da, d);
    for (bool keepdim : {false, true})
      for (int axis : {0, -1}) {
        Tensor am = t.argmax(axis, keepdim);
        EXPECT_EQ(am.dtype(), dt::int32);
        ref::expect_exact(am, reduce_with(da, axis, keepdim, argmax), "argmax " + d.name());
        ref::expect_exact(t.argmin(axis, keepdim), reduce_with(da, axis, keepdim, argmin),
                          "argmin " + d.name());
        if (keepdim) continue;
        NDArray tr = ref::flip(ref::transpose(da, 0, 1), {0});
        ref::expect_exact(t.transpose().flip({0}).argmax(axis, keepdim),
                          reduce_with(tr, axis, keepdim, argmax), "argmax view");
        ref::expect_exact(t.transpose().flip({0}).argmin(axis, keepdim),
                          reduce_with(tr, axis, keepdim, argmin), "argmin view");
      }
    Tensor flat = t.argmax();
    EXPECT_EQ(flat.shape(), S{});
    EXPECT_EQ(flat.item<int32_t>(), argmax(da.v));
    EXPECT_EQ(t.argmin().item<int32_t>(), argmin(da.v));
  }
  for (tc::DType d : {dt::int32, dt::int64}) {
    ref::expect_exact(ref::tensor(a, d).argmax(1), reduce_with(a, 1, false, argmax), d.name());
    ref::expect_exact(ref::tensor(a, d).argmin(-2, true), reduce_with(a, -2, true, argmin),
                      d.name());
  }
  // bool, and -inf/inf
  ref::expect_exact(ref::tensor(vals({4}, {0, 0, 1, 1}), dt::bool_).argmax(), vals({}, {2}));
  ref::expect_exact(ref::tensor(vals({4}, {0, 0, 1, 1}), dt::bool_).argmin(), vals({}, {0}));
  ref::expect_exact(ref::tensor(vals({4}, {1, kInf, -kInf, kInf})).argmax(), vals({}, {1}));
  ref::expect_exact(ref::tensor(vals({4}, {1, kInf, -kInf, -kInf})).argmin(), vals({}, {2}));
  // a scalar
  EXPECT_EQ(Tensor::full({}, 3.0).argmax().item<int32_t>(), 0);
}

TEST(Reduce2Scan, CumsumCummax) {
  Views v;
  for (int axis : {0, 1, 2, -1, -2}) {
    std::string what = " axis " + std::to_string(axis);
    ref::expect_close(v.t.cumsum(axis), scan_with(v.base, axis, vsum), kF32, kF32, "cumsum" + what);
    ref::expect_close(v.perm.cumsum(axis), scan_with(v.perm_ref, axis, vsum), kF32, kF32,
                      "cumsum perm" + what);
    ref::expect_close(v.flip.cumsum(axis), scan_with(v.flip_ref, axis, vsum), kF32, kF32,
                      "cumsum flip" + what);
    ref::expect_exact(v.flip.cummax(axis), scan_with(v.flip_ref, axis, vmax), "cummax" + what);
    ref::expect_exact(v.perm.cummax(axis), scan_with(v.perm_ref, axis, vmax), "cummax perm");
  }
  // a longer axis
  NDArray l = ref::random({3, 300}, 5);
  ref::expect_close(ref::tensor(l).cumsum(1), scan_with(l, 1, vsum), 1e-4, 1e-4, "long cumsum");
  // integers: cumsum accumulates like sum (int8 -> int32), cummax keeps the dtype
  NDArray ia = ref::random_int({4, 6}, 9, -100, 100);
  Tensor c8 = ref::tensor(ia, dt::int8).cumsum(1);
  EXPECT_EQ(c8.dtype(), dt::int32);
  ref::expect_exact(c8, scan_with(ia, 1, vsum), "cumsum int8");
  Tensor m8 = ref::tensor(ia, dt::int8).cummax(-1);
  EXPECT_EQ(m8.dtype(), dt::int8);
  ref::expect_exact(m8, scan_with(ia, -1, vmax), "cummax int8");
  ref::expect_exact(ref::tensor(vals({4}, {-128, -128, -5, -128}), dt::int8).cummax(),
                    vals({4}, {-128, -128, -5, -5}), "cummax int8 min");
  ref::expect_exact(ref::tensor(vals({4}, {0, 1, 0, 1}), dt::bool_).cumsum(),
                    vals({4}, {0, 1, 1, 2}), "cumsum bool");
  ref::expect_exact(ref::tensor(vals({4}, {0, 1, 0, 1}), dt::bool_).cummax(),
                    vals({4}, {0, 1, 1, 1}), "cummax bool");
  ref::expect_exact(ref::tensor(vals({3}, {2, 0, 1}), dt::uint32).cummax(), vals({3}, {2, 2, 2}));
  // special values
  ref::expect_close(ref::tensor(vals({4}, {-kInf, -kInf, 1, kInf})).cummax(),
                    vals({4}, {-kInf, -kInf, 1, kInf}), 0);
  ref::expect_close(ref::tensor(vals({3}, {1, kInf, 1})).cumsum(), vals({3}, {1, kInf, kInf}), 0);
  // empty and scalar
  EXPECT_EQ(Tensor::zeros({0, 3}).cumsum(0).shape(), (S{0, 3}));
  EXPECT_EQ(Tensor::zeros({2, 0}).cummax(1).shape(), (S{2, 0}));
  ref::expect_exact(Tensor::full({1}, 5).cumsum(), vals({1}, {5}));
}

// torch's cummin: the running minimum (a NaN wins from where it appears) and the last index so
// far holding it, line by line along `axis`.
std::pair<NDArray, NDArray> ref_cummin(const NDArray& a, int axis) {
  NDArray values = scan_with(a, axis, [](const std::vector<double>& l) {
    double m = l[0];
    for (double x : l) m = std::isnan(m) || std::isnan(x) ? kNaN : std::min(m, x);
    return m;
  });
  NDArray indices = scan_with(a, axis, [](const std::vector<double>& l) {
    size_t best = 0;
    for (size_t k = 1; k < l.size(); k++)
      if (std::isnan(l[k]) || (!std::isnan(l[best]) && l[k] <= l[best])) best = k;
    return static_cast<double>(best);
  });
  return {values, indices};
}

TEST(Reduce2Scan, Cummin) {
  Views v;
  for (int axis : {0, 1, 2, -1, -2}) {
    std::string what = " axis " + std::to_string(axis);
    for (const auto& [t, r] :
         {std::pair{v.t, v.base}, std::pair{v.perm, v.perm_ref}, std::pair{v.flip, v.flip_ref}}) {
      auto [values, indices] = t.cummin(axis);
      auto [rv, ri] = ref_cummin(r, axis);
      EXPECT_EQ(values.dtype(), dt::float32);
      EXPECT_EQ(indices.dtype(), dt::int32);
      ref::expect_exact(values, rv, "cummin values" + what);
      ref::expect_exact(indices, ri, "cummin indices" + what);
    }
  }
  // ties take the last index (torch); a NaN is the minimum from where it appears
  NDArray ties = vals({9}, {3, 1, 1, 2, 1, kNaN, 0, kNaN, -1});
  auto [tv, ti] = ref::tensor(ties).cummin();
  auto [rtv, rti] = ref_cummin(ties, 0);
  ref::expect_close(tv, rtv, 0, 0, "cummin NaN values");
  ref::expect_exact(ti, rti, "cummin NaN indices");
  ref::expect_exact(ti, vals({9}, {0, 1, 2, 2, 4, 5, 5, 7, 7}), "cummin NaN indices literal");
  // a long line, integers (keep their dtype; the extremes of int8 and uint8), bool
  NDArray l = ref::random({2, 700}, 13);
  auto [lv, li] = ref::tensor(l).cummin(1);
  auto [rlv, rli] = ref_cummin(l, 1);
  ref::expect_exact(lv, rlv, "long cummin values");
  ref::expect_exact(li, rli, "long cummin indices");
  NDArray ia = ref::random_int({4, 6}, 19, -128, 127);
  for (tc::DType d : {dt::int8, dt::int32, dt::int64}) {
    auto [iv, ii] = ref::tensor(ia, d).cummin(0);
    EXPECT_EQ(iv.dtype(), d);
    ref::expect_exact(iv, ref_cummin(ia, 0).first, std::string("cummin ") + d.name());
    ref::expect_exact(ii, ref_cummin(ia, 0).second, std::string("cummin idx ") + d.name());
  }
  NDArray ua = vals({5}, {255, 7, 255, 0, 9});
  auto [uv, ui] = ref::tensor(ua, dt::uint8).cummin();
  ref::expect_exact(uv, vals({5}, {255, 7, 7, 0, 0}), "cummin uint8");
  ref::expect_exact(ui, vals({5}, {0, 1, 1, 3, 3}), "cummin uint8 idx");
  auto [bv, bi] = ref::tensor(vals({4}, {1, 1, 0, 1}), dt::bool_).cummin();
  ref::expect_exact(bv, vals({4}, {1, 1, 0, 0}), "cummin bool");
  ref::expect_exact(bi, vals({4}, {0, 1, 2, 2}), "cummin bool idx");
  // scalar and empty
  auto [sv, si] = Tensor::full({}, 4.5).cummin(-1);
  EXPECT_EQ(sv.shape(), S{});
  EXPECT_EQ(sv.item<float>(), 4.5f);
  EXPECT_EQ(si.item<int32_t>(), 0);
  auto [ev, ei] = Tensor::zeros({2, 0, 4}).cummin(1);
  EXPECT_EQ(ev.shape(), (S{2, 0, 4}));
  EXPECT_EQ(ei.shape(), (S{2, 0, 4}));
  EXPECT_EQ(ei.dtype(), dt::int32);
  EXPECT_THROW(Tensor::full({}, 1.0).cummin(1), tc::Error);
  EXPECT_THROW(Tensor::zeros({5}).cummin(-2), tc::Error);
}

// torch's cummax indices: the last index so far holding the running maximum (a NaN is the
// maximum from where it appears), line by line along `axis`.
NDArray ref_cummax_indices(const NDArray& a, int axis) {
  return scan_with(a, axis, [](const std::vector<double>& l) {
    size_t best = 0;
    for (size_t k = 1; k < l.size(); k++)
      if (std::isnan(l[k]) || (!std::isnan(l[best]) && l[k] >= l[best])) best = k;
    return static_cast<double>(best);
  });
}

TEST(Reduce2Scan, CummaxWithIndices) {
  Views v;
  for (int axis : {0, 1, 2, -1}) {
    std::string what = " axis " + std::to_string(axis);
    for (const auto& [t, r] : {std::pair{v.t, v.base}, std::pair{v.flip, v.flip_ref}}) {
      auto [values, indices] = t.cummax_with_indices(axis);
      EXPECT_EQ(indices.dtype(), dt::int32);
      ref::expect_exact(values, scan_with(r, axis, vmax), "cummax values" + what);
      ref::expect_exact(indices, ref_cummax_indices(r, axis), "cummax indices" + what);
    }
  }
  // ties take the last index (torch); NaN; integers and bool
  NDArray ties = vals({8}, {1, 3, 3, 2, 3, kNaN, 5, kNaN});
  auto [tv, ti] = ref::tensor(ties).cummax_with_indices();
  ref::expect_exact(ti, vals({8}, {0, 1, 2, 2, 4, 5, 5, 7}), "cummax ties and NaN");
  ref::expect_exact(ti, ref_cummax_indices(ties, 0), "cummax ties and NaN reference");
  NDArray ia = ref::random_int({4, 6}, 23, -128, 127);
  auto [iv, ii] = ref::tensor(ia, dt::int8).cummax_with_indices(1);
  EXPECT_EQ(iv.dtype(), dt::int8);
  ref::expect_exact(ii, ref_cummax_indices(ia, 1), "cummax int8 indices");
  auto [bv, bi] = ref::tensor(vals({4}, {0, 1, 0, 1}), dt::bool_).cummax_with_indices();
  ref::expect_exact(bi, vals({4}, {0, 1, 1, 3}), "cummax bool indices");
  // scalar and empty (torch's shapes); a bad axis names cummax
  auto [sv, si] = Tensor::full({}, 4.5).cummax_with_indices(0);
  EXPECT_EQ(si.shape(), S{});
  EXPECT_EQ(si.item<int32_t>(), 0);
  auto [ev, ei] = Tensor::zeros({2, 0, 4}).cummax_with_indices(1);
  EXPECT_EQ(ev.shape(), (S{2, 0, 4}));
  EXPECT_EQ(ei.shape(), (S{2, 0, 4}));
  EXPECT_EQ(ei.dtype(), dt::int32);
  try {
    Tensor::zeros({5}).cummax_with_indices(-2);
    ADD_FAILURE() << "axis -2 of shape (5,) did not throw";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Tensor.cummax"), std::string::npos) << e.what();
  }
}

TEST(Reduce2Softmax, Softmin) {
  Views v;
  for (int axis : {-1, 0, 1}) {
    NDArray neg = ref::map(v.perm_ref, [](double x) { return -x; });
    NDArray m = reduce_with(neg, axis, true, vmax);
    NDArray e = ref::zip(neg, m, [](double x, double y) { return std::exp(x - y); });
    NDArray want = ref::zip(e, reduce_with(e, axis, true, vsum), std::divides<double>());
    ref::expect_close(v.perm.softmin(axis), want, kTrans, 1e-6,
                      "softmin axis " + std::to_string(axis));
  }
  EXPECT_EQ(v.t.softmin(-1, dt::float64).dtype(), dt::float64);
  // large values do not overflow: the smallest value gets the largest weight
  ref::expect_close(ref::tensor(vals({2}, {-1000, -999})).softmin(),
                    vals({2}, {1 / (1 + std::exp(-1.0)), 1 / (1 + std::exp(1.0))}), kTrans);
}

// torch's F.normalize: x / max(||x||_p over axis, eps); p = 0 counts the non-zero entries.
NDArray ref_normalize(const NDArray& a, double p, int axis, double eps) {
  NDArray norm = reduce_with(a, axis, true, [p](const std::vector<double>& l) {
    double s = 0;
    for (double x : l) s += p == 0 ? (x != 0) : std::pow(std::fabs(x), p);
    return p == 0 ? s : std::pow(s, 1 / p);
  });
  return ref::zip(a, norm, [eps](double x, double n) { return x / std::max(n, eps); });
}

TEST(Reduce2Norm, Normalize) {
  Views v;
  for (double p : {2.0, 1.0, 3.0, 0.0, -1.0, 0.5}) {
    for (int dim : {1, 0, -1}) {
      std::string what = "normalize p " + std::to_string(p) + " dim " + std::to_string(dim);
      ref::expect_close(v.t.normalize(p, dim), ref_normalize(v.base, p, dim, 1e-12), kTrans, 1e-6,
                        what);
      ref::expect_close(v.flip.normalize(p, dim), ref_normalize(v.flip_ref, p, dim, 1e-12), kTrans,
                        1e-6, what + " flip");
    }
  }
  // a zero line is divided by eps, not by 0; integers give float32
  NDArray z = vals({2, 3}, {0, 0, 0, 3, 0, 4});
  Tensor zn = ref::tensor(z).normalize();
  ref::expect_close(zn, vals({2, 3}, {0, 0, 0, 0.6, 0, 0.8}), kF32);
  Tensor in = ref::tensor(z, dt::int32).normalize(2.0, 1, 0.5);
  EXPECT_EQ(in.dtype(), dt::float32);
  ref::expect_close(in, ref_normalize(z, 2, 1, 0.5), kF32);
  EXPECT_THROW(v.t.normalize(2.0, 3), tc::Error);
}

TEST(Reduce2Errors, BadAxes) {
  Tensor t = Tensor::zeros({2, 3});
  EXPECT_THROW(t.mean(2), tc::Error);
  EXPECT_THROW(t.prod(3), tc::Error);
  EXPECT_THROW(t.var(-3), tc::Error);
  EXPECT_THROW(t.std(5), tc::Error);
  EXPECT_THROW(t.var_mean(2), tc::Error);
  EXPECT_THROW(t.std_mean(2), tc::Error);
  EXPECT_THROW(t.any(2), tc::Error);
  EXPECT_THROW(t.all(-3), tc::Error);
  EXPECT_THROW(t.softmax(2), tc::Error);
  EXPECT_THROW(t.log_softmax(-3), tc::Error);
  EXPECT_THROW(t.logsumexp(4), tc::Error);
  EXPECT_THROW(t.argmax(2), tc::Error);
  EXPECT_THROW(t.argmin(-3), tc::Error);
  EXPECT_THROW(t.cumsum(2), tc::Error);
  EXPECT_THROW(t.cummax(-3), tc::Error);
  EXPECT_THROW(Tensor::zeros({2, 0}).argmax(1), tc::Error);
  try {
    t.mean(2);
    FAIL() << "no error";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Tensor.mean"), std::string::npos) << e.what();
  }
  try {
    t.cumsum(7);
    FAIL() << "no error";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Tensor.cumsum"), std::string::npos) << e.what();
  }
  try {
    t.argmin(7);
    FAIL() << "no error";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Tensor.argmin"), std::string::npos) << e.what();
  }
}

TEST(Reduce2Prod, FloatIntBoolViews) {
  NDArray a = ref::random({3, 5, 2}, 11, 0.5, 1.5);
  Tensor t = ref::tensor(a);
  auto prod = [](const std::vector<double>& l) {
    double p = 1;
    for (double x : l) p *= x;
    return p;
  };
  for (bool keepdim : {false, true})
    for (int axis : {0, 1, -1}) {
      ref::expect_close(t.prod(axis, keepdim), reduce_with(a, axis, keepdim, prod), kF32, kF32,
                        "prod axis " + std::to_string(axis));
      NDArray fr = ref::flip(ref::permute(a, {1, 2, 0}), {0});
      ref::expect_close(t.permute({1, 2, 0}).flip({0}).prod(axis, keepdim),
                        reduce_with(fr, axis, keepdim, prod), kF32, kF32, "prod view");
    }
  EXPECT_NEAR(t.prod().item<float>(), prod(a.v), 1e-5 * std::fabs(prod(a.v)));
  Tensor two = t.prod({0, 2}, true);
  EXPECT_EQ(two.shape(), (S{1, 5, 1}));

  // integers: exact, keep the dtype
  NDArray ia = ref::random_int({4, 7}, 3, -3, 3);
  Tensor ti = ref::tensor(ia, dt::int32);
  Tensor pi = ti.prod(1);
  EXPECT_EQ(pi.dtype(), dt::int32);
  ref::expect_exact(pi, reduce_with(ia, 1, false, prod));
  ref::expect_exact(ti.prod(0, true), reduce_with(ia, 0, true, prod));
  Tensor big = Tensor::full({20}, 3, dt::int64).prod();
  EXPECT_EQ(big.dtype(), dt::int64);
  EXPECT_EQ(big.item<int64_t>(), 3486784401LL);
  // bool: logical and
  Tensor b = ref::tensor(vals({2, 3}, {1, 1, 1, 1, 0, 1}), dt::bool_).prod(1);
  EXPECT_EQ(b.dtype(), dt::bool_);
  ref::expect_exact(b, vals({2}, {1, 0}));
  // empty axis: ones
  ref::expect_exact(Tensor::zeros({2, 0}).prod(1), vals({2}, {1, 1}));
  // special values
  ref::expect_close(ref::tensor(vals({3}, {2.0, kInf, -1.0})).prod(), vals({}, {-kInf}), kF32);
  EXPECT_TRUE(std::isnan(ref::tensor(vals({3}, {2.0, kNaN, -1.0})).prod().item<float>()));
}

TEST(Reduce2Prod, LongProductSplitsIntoTwoKernels) {
  // 2^16 factors of (1 + 1e-5): a split reduce multiplies partial products
  Tensor t = Tensor::full({1 << 16}, 1.00001f).contiguous().realize();
  double want = std::pow(1.00001f, 1 << 16);
  EXPECT_NEAR(t.prod().item<double>(), want, 1e-3 * want);
}

// Found by tests/fuzz/tensor_fuzz.cc (programs 692968582, 692994853), where its reference was
// wrong: sin of an empty max (-inf) or min (inf) is NaN, and maximum propagates a NaN whichever
// side it is on, as torch.maximum does; so do max and min over a NaN.
TEST(Reduce, MaximumAndMaxPropagateNaNFromEitherSide) {
  auto is_nan = [](const Tensor& t) {
    std::vector<double> v = t.data<double>();
    return !v.empty() && std::all_of(v.begin(), v.end(), [](double x) { return std::isnan(x); });
  };
  Tensor a = ref::tensor(vals({3}, {kNaN, 1.5, -2.0}), dt::float32);
  Tensor b = ref::tensor(vals({3}, {0.5, kNaN, 3.0}), dt::float32);
  for (const Tensor& m : {a.maximum(b), b.maximum(a)}) {
    std::vector<double> v = m.data<double>();
    EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1])) << v[0] << " " << v[1];
    EXPECT_EQ(v[2], 3.0);
  }
  EXPECT_TRUE(is_nan(a.max()));
  EXPECT_TRUE(is_nan(b.min()));
  Tensor empty = Tensor::zeros({0, 5});
  Tensor one = Tensor::ones({5});
  EXPECT_TRUE(is_nan(empty.max(0).sin().maximum(one)));
  EXPECT_TRUE(is_nan(one.maximum(empty.min(0).sin())));
}

}  // namespace
