// sort / argsort / topk / cumprod / logcumsumexp: exact values and indices against a host stable
// sort, ties in the seed's documented order (stable, also descending), NaN, dtypes, views,
// gradients by central differences, PyTorch fixtures, and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "tests/error_message.h"
#include "tests/tensor/fixture.h"
#include "tests/tensor/gradcheck.h"
#include "tests/tensor/reference.h"
#include "tinycore/tensor.h"

namespace {

using tc::Tensor;
using tcref::NDArray;
using ::testing::HasSubstr;
namespace dtypes = tc::dtypes;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// The host reference: a stable sort of every line along `dim` (NaN as the largest value);
// returns (values, indices).
std::pair<NDArray, NDArray> sort_ref(const NDArray& a, int dim, bool descending) {
  int nd = static_cast<int>(a.shape.size());
  int d = dim < 0 ? dim + nd : dim;
  int64_t n = a.shape[static_cast<size_t>(d)];
  NDArray values = a, indices = a;
  for (int64_t flat = 0; flat < a.size(); flat++) {
    std::vector<int64_t> idx = tcref::unravel(flat, a.shape);
    if (idx[static_cast<size_t>(d)] != 0) continue;  // one line per start
    std::vector<double> line(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; j++) {
      idx[static_cast<size_t>(d)] = j;
      line[static_cast<size_t>(j)] = a.at(idx);
    }
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    auto less = [](double x, double y) { return std::isnan(y) ? !std::isnan(x) : x < y; };
    std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
      double x = line[static_cast<size_t>(i)], y = line[static_cast<size_t>(j)];
      return descending ? less(y, x) : less(x, y);
    });
    for (int64_t j = 0; j < n; j++) {
      idx[static_cast<size_t>(d)] = j;
      int64_t pos = tcref::ravel(idx, a.shape);
      values.v[static_cast<size_t>(pos)] = line[static_cast<size_t>(order[static_cast<size_t>(j)])];
      indices.v[static_cast<size_t>(pos)] = static_cast<double>(order[static_cast<size_t>(j)]);
    }
  }
  return {values, indices};
}

// Values equal (NaN matching NaN) and indices equal, with the dtypes of the result.
void expect_sorted(const std::pair<Tensor, Tensor>& got, const NDArray& a, int dim, bool descending,
                   tc::DType dtype) {
  auto [values, indices] = sort_ref(a, dim, descending);
  EXPECT_EQ(got.first.dtype(), dtype);
  EXPECT_EQ(got.second.dtype(), dtypes::int32);
  ASSERT_EQ(got.first.shape(), a.shape);
  ASSERT_EQ(got.second.shape(), a.shape);
  std::vector<double> v = got.first.data<double>(), i = got.second.data<double>();
  for (size_t k = 0; k < v.size(); k++) {
    if (std::isnan(values.v[k]))
      EXPECT_TRUE(std::isnan(v[k])) << "value " << k;
    else
      EXPECT_EQ(v[k], values.v[k]) << "value " << k;
    EXPECT_EQ(i[k], indices.v[k]) << "index " << k;
  }
}

template <typename F>
void expect_error(F f, const std::string& what) {
  EXPECT_THAT(error_message(f), HasSubstr(what));
}

// ------------------------------------------------------------------ sort

TEST(Sort, FloatRowsBothDirectionsAndAxes) {
  NDArray a = tcref::random({3, 7}, 1);
  Tensor t = tcref::tensor(a);
  expect_sorted(t.sort(), a, -1, false, dtypes::float32);
  expect_sorted(t.sort(1, true), a, 1, true, dtypes::float32);
  expect_sorted(t.sort(0), a, 0, false, dtypes::float32);
  expect_sorted(t.sort(-2, true), a, 0, true, dtypes::float32);
}

TEST(Sort, NonContiguousInputs) {
  NDArray a = tcref::random({5, 4}, 2);
  NDArray at = tcref::transpose(a, 0, 1);  // (4, 5)
  Tensor t = tcref::tensor(a).transpose();
  expect_sorted(t.sort(-1), at, -1, false, dtypes::float32);
  expect_sorted(t.sort(0, true), at, 0, true, dtypes::float32);
  // a permuted 3-D view, sorted along the middle
  NDArray b = tcref::random({2, 3, 5}, 3);
  NDArray bp = tcref::permute(b, {2, 0, 1});  // (5, 2, 3)
  expect_sorted(tcref::tensor(b).permute({2, 0, 1}).sort(1), bp, 1, false, dtypes::float32);
  // a flipped, shrunk view
  Tensor f = tcref::tensor(a).flip({0}).shrink({{1, 4}, {0, 4}});
  NDArray fa = tcref::shrink(tcref::flip(a, {0}), {{1, 4}, {0, 4}});
  expect_sorted(f.sort(0, true), fa, 0, true, dtypes::float32);
}

TEST(Sort, TiesKeepTheirOrderBothWays) {
  // the seed: "Order of indices for equivalent elements is always preserved"
  Tensor t = Tensor::from_vector<int32_t>({3, 1, 3, 2, 1, 3, 2});
  EXPECT_EQ(t.argsort().data<int32_t>(), (std::vector<int32_t>{1, 4, 3, 6, 0, 2, 5}));
  EXPECT_EQ(t.argsort(-1, true).data<int32_t>(), (std::vector<int32_t>{0, 2, 5, 3, 6, 1, 4}));
  NDArray a = tcref::random_int({4, 9}, 5, 0, 2);
  Tensor ti = tcref::tensor(a, dtypes::int32);
  expect_sorted(ti.sort(-1), a, -1, false, dtypes::int32);
  expect_sorted(ti.sort(-1, true), a, -1, true, dtypes::int32);
  expect_sorted(ti.sort(0, true), a, 0, true, dtypes::int32);
  // all equal
  Tensor same = Tensor::full({6}, 2.5);
  EXPECT_EQ(same.argsort(0, true).data<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
}

TEST(Sort, LongLinesUseBitonicMerges) {
  // 45 elements: blocks of 32 sorted by rank, then a bitonic merge up to 64; with ties and NaN
  NDArray ints = tcref::random_int({2, 45}, 12, 0, 9), a = ints;
  a.v[3] = a.v[50] = a.v[51] = kNaN;
  Tensor t = tcref::tensor(a);
  expect_sorted(t.sort(), a, -1, false, dtypes::float32);
  expect_sorted(t.sort(-1, true), a, -1, true, dtypes::float32);
  expect_sorted(tcref::tensor(ints, dtypes::int32).sort(1, true), ints, 1, true, dtypes::int32);
}

TEST(Sort, NaNIsLargestAndInfinities) {
  NDArray a({6}, {kNaN, 1, -kInf, kInf, kNaN, 0});
  Tensor t = tcref::tensor(a);
  expect_sorted(t.sort(), a, 0, false, dtypes::float32);
  expect_sorted(t.sort(0, true), a, 0, true, dtypes::float32);
  EXPECT_EQ(t.argsort().data<int32_t>(), (std::vector<int32_t>{2, 5, 1, 3, 0, 4}));
  EXPECT_EQ(t.argsort(0, true).data<int32_t>(), (std::vector<int32_t>{0, 4, 3, 1, 5, 2}));
}

TEST(Sort, Dtypes) {
  // integer extremes tie with the padding value: the padding still goes last
  NDArray i8({5}, {127, -128, 0, 127, -128});
  expect_sorted(tcref::tensor(i8, dtypes::int8).sort(), i8, 0, false, dtypes::int8);
  expect_sorted(tcref::tensor(i8, dtypes::int8).sort(0, true), i8, 0, true, dtypes::int8);
  NDArray u8({3}, {255, 0, 255});
  expect_sorted(tcref::tensor(u8, dtypes::uint8).sort(), u8, 0, false, dtypes::uint8);
  NDArray u32({3}, {4294967295.0, 2147483648.0, 5});
  expect_sorted(tcref::tensor(u32, dtypes::uint32).sort(), u32, 0, false, dtypes::uint32);
  NDArray b({5}, {1, 0, 1, 0, 0});
  expect_sorted(tcref::tensor(b, dtypes::bool_).sort(), b, 0, false, dtypes::bool_);
  expect_sorted(tcref::tensor(b, dtypes::bool_).sort(0, true), b, 0, true, dtypes::bool_);
  NDArray h = tcref::represent(tcref::random({2, 5}, 6), dtypes::float16);
  expect_sorted(tcref::tensor(h, dtypes::float16).sort(), h, -1, false, dtypes::float16);
  // int64 values that differ below float64 resolution
  std::vector<int64_t> big = {(int64_t{1} << 62) + 1, int64_t{1} << 62, -(int64_t{1} << 62),
                              (int64_t{1} << 62) + 2};
  auto [v, i] = Tensor::from_vector<int64_t>(big).sort();
  EXPECT_EQ(v.dtype(), dtypes::int64);
  EXPECT_EQ(v.data<int64_t>(),
            (std::vector<int64_t>{-(int64_t{1} << 62), int64_t{1} << 62, (int64_t{1} << 62) + 1,
                                  (int64_t{1} << 62) + 2}));
  EXPECT_EQ(i.data<int32_t>(), (std::vector<int32_t>{2, 1, 0, 3}));
  // the dtypes' largest values tie with the padding (3 elements padded to 4)
  const int64_t i64max = std::numeric_limits<int64_t>::max();
  auto [v2, i2] = Tensor::from_vector<int64_t>({i64max, -1, i64max}).sort();
  EXPECT_EQ(v2.data<int64_t>(), (std::vector<int64_t>{-1, i64max, i64max}));
  EXPECT_EQ(i2.data<int32_t>(), (std::vector<int32_t>{1, 0, 2}));
  const uint64_t u64max = std::numeric_limits<uint64_t>::max();
  auto [v3, i3] = Tensor::from_vector<uint64_t>({u64max, 5, u64max}).sort();
  EXPECT_EQ(v3.dtype(), dtypes::uint64);
  EXPECT_EQ(v3.data<uint64_t>(), (std::vector<uint64_t>{5, u64max, u64max}));
  EXPECT_EQ(i3.data<int32_t>(), (std::vector<int32_t>{1, 0, 2}));
  NDArray d({4}, {1.0 + 1e-15, 1.0, -3.0, 1.0 + 2e-15});
  expect_sorted(tcref::tensor(d, dtypes::float64).sort(), d, 0, false, dtypes::float64);
}

TEST(Sort, SizesAndShapes) {
  for (int64_t n : {1, 2, 8, 9}) {
    NDArray a = tcref::random({2, n}, static_cast<uint64_t>(10 + n));
    expect_sorted(tcref::tensor(a).sort(), a, -1, false, dtypes::float32);
  }
  Tensor s = Tensor::full({}, 4.0);
  auto [v, i] = s.sort();
  EXPECT_EQ(v.shape(), tc::Shape{});
  EXPECT_EQ(v.item<float>(), 4.0f);
  EXPECT_EQ(i.item<int32_t>(), 0);
  auto [ev, ei] = Tensor::zeros({2, 0}).sort();
  EXPECT_EQ(ev.shape(), (tc::Shape{2, 0}));
  EXPECT_EQ(ei.shape(), (tc::Shape{2, 0}));
  EXPECT_EQ(ei.dtype(), dtypes::int32);
}

TEST(Sort, ArgsortIsTheIndices) {
  NDArray a = tcref::random({3, 5}, 7);
  Tensor t = tcref::tensor(a);
  EXPECT_EQ(t.argsort(0, true).data<int32_t>(), t.sort(0, true).second.data<int32_t>());
  auto [values, indices] = sort_ref(a, -1, false);
  tcref::expect_exact(t.argsort(), indices);
  EXPECT_EQ(t.argsort().dtype(), dtypes::int32);
}

TEST(Sort, Gradients) {
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) { return x.sort().first; }),
                     {{{2, 5}, tcgrad::mixed(10)}});
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) { return x.sort(0, true).first; }),
                     {{{3, 2}, tcgrad::mixed(6)}});
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) { return x.topk(2, 1).first; }),
                     {{{2, 5}, tcgrad::mixed(10)}});
}

TEST(Sort, Errors) {
  Tensor t = Tensor::zeros({2, 3});
  expect_error([&] { t.sort(2); },
               "Tensor.sort: dim 2 is out of range [-2, 1] for a tensor of shape (2, 3)");
  expect_error([&] { t.argsort(-3); },
               "dim -3 is out of range [-2, 1] for a tensor of shape (2, 3)");
  expect_error([] { Tensor::full({}, 1.0).sort(1); },
               "Tensor.sort: dim 1 is out of range [-1, 0] for a tensor of shape ()");
}

// ------------------------------------------------------------------ topk

TEST(Topk, LargestSmallestAndK) {
  NDArray a = tcref::random({3, 7}, 8);
  Tensor t = tcref::tensor(a);
  auto [desc_v, desc_i] = sort_ref(a, -1, true);
  auto [asc_v, asc_i] = sort_ref(a, 0, false);
  for (int64_t k : {0, 1, 3, 7}) {
    auto [v, i] = t.topk(k);
    EXPECT_EQ(v.shape(), (tc::Shape{3, k}));
    EXPECT_EQ(i.dtype(), dtypes::int32);
    tcref::expect_exact(v, tcref::shrink(desc_v, {{0, 3}, {0, k}}));
    tcref::expect_exact(i, tcref::shrink(desc_i, {{0, 3}, {0, k}}));
  }
  auto [v, i] = t.topk(2, 0, false);
  tcref::expect_exact(v, tcref::shrink(asc_v, {{0, 2}, {0, 7}}));
  tcref::expect_exact(i, tcref::shrink(asc_i, {{0, 2}, {0, 7}}));
  // sorted=false gives them in order too; ties keep their order
  Tensor ties = Tensor::from_vector<int32_t>({5, 1, 5, 3, 5});
  EXPECT_EQ(ties.topk(2, -1, true, false).second.data<int32_t>(), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(ties.topk(3, -1, false).second.data<int32_t>(), (std::vector<int32_t>{1, 3, 0}));
}

TEST(Topk, Errors) {
  Tensor t = Tensor::zeros({2, 3});
  expect_error([&] { t.topk(4); },
               "Tensor.topk: k=4 is out of range [0, 3] for dim -1 of shape (2, 3)");
  expect_error([&] { t.topk(3, 0); }, "k=3 is out of range [0, 2] for dim 0");
  expect_error([&] { t.topk(-1); }, "k=-1 is out of range");
  expect_error([&] { t.topk(1, 2); }, "Tensor.topk: dim 2 is out of range [-2, 1]");
}

// ------------------------------------------------------------------ cumprod, logcumsumexp

// The running product / log-sum-exp along `axis` in double.
NDArray scan_ref(const NDArray& a, int axis, bool logsumexp) {
  int nd = static_cast<int>(a.shape.size());
  int d = axis < 0 ? axis + nd : axis;
  NDArray out = a;
  for (int64_t flat = 0; flat < a.size(); flat++) {
    std::vector<int64_t> idx = tcref::unravel(flat, a.shape);
    int64_t i = idx[static_cast<size_t>(d)];
    double acc = logsumexp ? -kInf : 1.0, m = -kInf;
    for (int64_t j = 0; j <= i; j++) {
      idx[static_cast<size_t>(d)] = j;
      m = std::max(m, a.at(idx));
    }
    for (int64_t j = 0; j <= i; j++) {
      idx[static_cast<size_t>(d)] = j;
      if (logsumexp)
        acc = (j == 0 ? 0.0 : acc) + std::exp(a.at(idx) - m);
      else
        acc *= a.at(idx);
    }
    // (a line of -inf so far stays -inf)
    out.v[static_cast<size_t>(flat)] = !logsumexp ? acc : m == -kInf ? -kInf : std::log(acc) + m;
  }
  return out;
}

TEST(Cumprod, ValuesAxesViewsAndDtypes) {
  NDArray a = tcref::random({3, 6}, 9, 0.5, 1.5);
  Tensor t = tcref::tensor(a);
  tcref::expect_close(t.cumprod(1), scan_ref(a, 1, false), 1e-6, 0);
  tcref::expect_close(t.cumprod(0), scan_ref(a, 0, false), 1e-6, 0);
  tcref::expect_close(t.cumprod(-1), scan_ref(a, -1, false), 1e-6, 0);
  EXPECT_EQ(t.cumprod(0).dtype(), dtypes::float32);
  // a transposed view
  tcref::expect_close(t.transpose().cumprod(1), scan_ref(tcref::transpose(a, 0, 1), 1, false), 1e-6,
                      0);
  // integers keep their dtype and are exact; a zero stays zero after it
  NDArray ints({2, 4}, {2, -3, 0, 5, 1, 2, 3, 4});
  Tensor ti = tcref::tensor(ints, dtypes::int32);
  EXPECT_EQ(ti.cumprod(1).dtype(), dtypes::int32);
  tcref::expect_exact(ti.cumprod(1), scan_ref(ints, 1, false));
  EXPECT_EQ(Tensor::full({}, 3.0).cumprod(0).item<float>(), 3.0f);
  EXPECT_EQ(Tensor::zeros({0, 3}).cumprod(0).shape(), (tc::Shape{0, 3}));
  expect_error([&] { t.cumprod(2); },
               "Tensor.cumprod: dim 2 is out of range [-2, 1] for a tensor of shape (3, 6)");
}

TEST(Cumprod, Gradient) {
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) { return x.cumprod(1); }),
                     {{{2, 4}, tcgrad::mixed(8)}});
  // zeros: the product of the others, exactly (central differences are exact for a product)
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) { return x.cumprod(0); }),
                     {{{4, 1}, {0.5, 0.0, -1.5, 0.0}}});
}

TEST(Logcumsumexp, ValuesAndStability) {
  NDArray a = tcref::random({3, 6}, 11);
  Tensor t = tcref::tensor(a);
  tcref::expect_close(t.logcumsumexp(1), scan_ref(a, 1, true), 1e-6, 1e-6);
  tcref::expect_close(t.logcumsumexp(), scan_ref(a, 0, true), 1e-6, 1e-6);
  tcref::expect_close(t.transpose().logcumsumexp(-1), scan_ref(tcref::transpose(a, 0, 1), -1, true),
                      1e-6, 1e-6);
  // large values do not overflow, -inf entries are skipped, a line of -inf stays -inf
  NDArray big({2, 4}, {1000, 1001, -1000, 999, -kInf, -kInf, 2, -kInf});
  tcref::expect_close(tcref::tensor(big).logcumsumexp(1), scan_ref(big, 1, true), 1e-6, 1e-6);
  std::vector<float> lead = tcref::tensor(big).logcumsumexp(1).data<float>();
  EXPECT_EQ(lead[4], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(lead[5], -std::numeric_limits<float>::infinity());
  // integers give float32
  Tensor ti = Tensor::from_vector<int32_t>({1, 2, 3});
  EXPECT_EQ(ti.logcumsumexp().dtype(), dtypes::float32);
  tcref::expect_close(ti.logcumsumexp(), scan_ref(NDArray({3}, {1, 2, 3}), 0, true), 1e-6, 1e-6);
  EXPECT_EQ(Tensor::full({}, 2.0).logcumsumexp().item<float>(), 2.0f);
  expect_error([&] { t.logcumsumexp(-3); }, "Tensor.logcumsumexp: dim -3 is out of range [-2, 1]");
}

TEST(Logcumsumexp, Gradient) {
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) { return x.logcumsumexp(1); }),
                     {{{2, 4}, tcgrad::mixed(8)}});
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) { return x.logcumsumexp(0); }),
                     {{{3, 2}, tcgrad::ramp(6)}});
}

// ------------------------------------------------------------------ PyTorch fixtures

std::vector<Tensor> pair_of(const std::pair<Tensor, Tensor>& p) { return {p.first, p.second}; }

TEST(TorchSort, SortAndTopk) {
  // torch's indices are int64, ours int32: dtypes of the values are checked here instead
  const tcfix::Tol fwd{0, 0}, grad{1e-6, 1e-7};
  auto check = [&](const std::string& name,
                   const std::function<std::pair<Tensor, Tensor>(const Tensor&)>& f) {
    tcfix::check_op(
        "sort", name, [&](const std::vector<Tensor>& x) { return pair_of(f(x[0])); }, fwd, grad,
        false);
  };
  check("sort_asc", [](const Tensor& x) { return x.sort(-1); });
  check("sort_desc_dim0", [](const Tensor& x) { return x.sort(0, true); });
  check("sort_transposed", [](const Tensor& x) { return x.transpose().sort(1); });
  check("sort_3d_dim1_desc", [](const Tensor& x) { return x.sort(1, true); });
  check("sort_f64", [](const Tensor& x) { return x.sort(-1); });
  check("topk_largest", [](const Tensor& x) { return x.topk(3, -1); });
  check("topk_smallest_dim0", [](const Tensor& x) { return x.topk(2, 0, false); });
  check("topk_transposed", [](const Tensor& x) { return x.transpose().topk(4, 0); });
  EXPECT_EQ(tcfix::fixture("sort", "sort_f64")["in0"].tensor().sort().first.dtype(),
            dtypes::float64);
}

TEST(TorchSort, Scans) {
  // float32 products and log-sum-exps: a few ulps
  const tcfix::Tol fwd{2e-6, 1e-7}, grad{2e-5, 1e-6};
  tcfix::check_op("sort", "cumprod_axis1", tcfix::un([](const Tensor& x) { return x.cumprod(1); }),
                  fwd, grad);
  tcfix::check_op("sort", "cumprod_axis0", tcfix::un([](const Tensor& x) { return x.cumprod(0); }),
                  fwd, grad);
  tcfix::check_op("sort", "cumprod_zeros", tcfix::un([](const Tensor& x) { return x.cumprod(1); }),
                  fwd, grad);
  tcfix::check_op("sort", "cumprod_transposed",
                  tcfix::un([](const Tensor& x) { return x.transpose().cumprod(-1); }), fwd, grad);
  tcfix::check_op("sort", "logcumsumexp_axis1",
                  tcfix::un([](const Tensor& x) { return x.logcumsumexp(1); }), fwd, grad);
  tcfix::check_op("sort", "logcumsumexp_axis0",
                  tcfix::un([](const Tensor& x) { return x.logcumsumexp(0); }), fwd, grad);
  tcfix::check_op("sort", "logcumsumexp_large",
                  tcfix::un([](const Tensor& x) { return x.mul(60).logcumsumexp(-1); }), fwd, grad);
  tcfix::check_op("sort", "logcumsumexp_3d",
                  tcfix::un([](const Tensor& x) { return x.logcumsumexp(-2); }), fwd, grad);
}

}  // namespace
