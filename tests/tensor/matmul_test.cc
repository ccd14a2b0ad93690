// dot / matmul / linear / sequential against a naive double-precision product, with batch
// broadcasting, views, integer exactness, gradients and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/error_message.h"
#include "tests/tensor/reference.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/codegen/opts.h"
#include "tinycore/engine/realize.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"

namespace {

namespace ref = tcref;
using ref::NDArray;
using tc::Tensor;
using S = std::vector<int64_t>;

// Batched matmul of a (..., m, k) and b (..., k, n) with numpy broadcasting of the batch axes.
NDArray batched_matmul(const NDArray& a, const NDArray& b) {
  S ab(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  size_t nd = std::max(ab.size(), bb.size());
  ab.insert(ab.begin(), nd - ab.size(), 1);
  bb.insert(bb.begin(), nd - bb.size(), 1);
  S batch(nd);
  for (size_t i = 0; i < nd; i++) batch[i] = std::max(ab[i], bb[i]);
  int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
  S out = batch;
  out.push_back(m);
  out.push_back(n);
  int64_t nb = 1;
  for (int64_t d : batch) nb *= d;
  std::vector<double> v;
  for (int64_t bi = 0; bi < nb; bi++) {
    int64_t ia = 0, ib = 0, rest = bi, sa = 1, sb = 1;
    for (int i = static_cast<int>(nd) - 1; i >= 0; i--) {
      int64_t c = rest % batch[i];
      rest /= batch[i];
      ia += (ab[i] == 1 ? 0 : c) * sa;
      ib += (bb[i] == 1 ? 0 : c) * sb;
      sa *= ab[i];
      sb *= bb[i];
    }
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t t = 0; t < k; t++) s += a.v[(ia * m + i) * k + t] * b.v[(ib * k + t) * n + j];
        v.push_back(s);
      }
  }
  return NDArray(out, v);
}

TEST(Matmul, TwoD) {
  NDArray a = ref::random({5, 7}, 1), b = ref::random({7, 3}, 2);
  ref::expect_close(ref::tensor(a).matmul(ref::tensor(b)), ref::matmul(a, b), 1e-5, 1e-5, "2-D");
  ref::expect_close(ref::tensor(b).matmul(ref::tensor(a), true), ref::matmul(a, b), 1e-5, 1e-5,
                    "reverse");
}

TEST(Matmul, VectorCases) {
  NDArray a = ref::random({4, 6}, 3), v = ref::random({6}, 4), u = ref::random({4}, 5);
  // (4,6)·(6,) -> (4,)
  NDArray av = ref::matmul(a, ref::reshape(v, {6, 1}));
  ref::expect_close(ref::tensor(a).dot(ref::tensor(v)), ref::reshape(av, {4}), 1e-5, 1e-5,
                    "matrix-vector");
  // (4,)·(4,6) -> (6,)
  NDArray ua = ref::matmul(ref::reshape(u, {1, 4}), a);
  ref::expect_close(ref::tensor(u).dot(ref::tensor(a)), ref::reshape(ua, {6}), 1e-5, 1e-5,
                    "vector-matrix");
  // (6,)·(6,) -> ()
  double s = 0;
  for (size_t i = 0; i < 6; i++) s += v.v[i] * v.v[i];
  EXPECT_NEAR(ref::tensor(v).dot(ref::tensor(v)).item<double>(), s, 1e-5);
  EXPECT_EQ(ref::tensor(v).dot(ref::tensor(v)).ndim(), 0);
}

TEST(Matmul, BatchBroadcasting) {
  NDArray a = ref::random({2, 1, 3, 4}, 6), b = ref::random({5, 4, 2}, 7);
  ref::expect_close(ref::tensor(a).matmul(ref::tensor(b)), batched_matmul(a, b), 1e-5, 1e-5,
                    "batched");
  NDArray c = ref::random({3, 4, 5}, 8), d = ref::random({5, 2}, 9);
  ref::expect_close(ref::tensor(c).matmul(ref::tensor(d)), batched_matmul(c, d), 1e-5, 1e-5,
                    "3-D @ 2-D");
}

TEST(Matmul, NonContiguousInputsAreOneKernel) {
  NDArray a = ref::random({6, 4}, 10), b = ref::random({5, 6}, 11);
  Tensor ta = ref::tensor(a), tb = ref::tensor(b);
  Tensor r = ta.permute({1, 0}).matmul(tb.flip({0}).permute({1, 0}));  // (4,6) @ (6,5)
  tc::engine::GlobalCounters::reset();
  r.realize();
  EXPECT_EQ(tc::engine::GlobalCounters::kernel_count, 1);
  ref::expect_close(r,
                    ref::matmul(ref::permute(a, {1, 0}), ref::permute(ref::flip(b, {0}), {1, 0})),
                    1e-5, 1e-5, "views");
}

TEST(Matmul, LargeProductsReadBlockedColumns) {
  // 64+ rows, k and n (n a multiple of 32): b is first copied in panels of 32 columns, then one
  // product kernel; batched rows count too; a flipped b and an integer product as well
  NDArray a = ref::random({96, 80}, 20), b = ref::random({80, 128}, 21);
  Tensor r = ref::tensor(a).matmul(ref::tensor(b));
  tc::engine::GlobalCounters::reset();
  r.realize();
  EXPECT_EQ(tc::engine::GlobalCounters::kernel_count, 2);
  ref::expect_close(r, ref::matmul(a, b), 1e-5, 1e-5, "96x80 @ 80x128");
  NDArray x = ref::random({2, 40, 80}, 22);
  ref::expect_close(ref::tensor(x).matmul(ref::tensor(b).flip({1})),
                    batched_matmul(x, ref::flip(b, {1})), 1e-5, 1e-5, "batched rows, flipped b");
  NDArray ia = ref::random_int({64, 64}, 23, -9, 9), ib = ref::random_int({64, 96}, 24, -9, 9);
  ref::expect_exact(ref::tensor(ia, tc::dtypes::int32).matmul(ref::tensor(ib, tc::dtypes::int32)),
                    ref::matmul(ia, ib));
  // an empty shared axis: zeros, however many rows
  Tensor empty = Tensor::empty({96, 0}).matmul(Tensor::empty({0, 128}));
  EXPECT_EQ(empty.shape(), (tc::Shape{96, 128}));
  EXPECT_THAT(empty.data<float>(), testing::Each(0.0f));
}

TEST(Matmul, IntegersAreExactAndDtypesPromote) {
  NDArray a = ref::random_int({3, 4}, 12, -50, 50), b = ref::random_int({4, 2}, 13, -50, 50);
  Tensor r = ref::tensor(a, tc::dtypes::int32).matmul(ref::tensor(b, tc::dtypes::int32));
  EXPECT_EQ(r.dtype(), tc::dtypes::int32);
  ref::expect_exact(r, ref::matmul(a, b), "int32");
  Tensor m = ref::tensor(a, tc::dtypes::int8).matmul(ref::tensor(b, tc::dtypes::float32));
  EXPECT_EQ(m.dtype(), tc::dtypes::float32);
  Tensor h = ref::tensor(a, tc::dtypes::float16).matmul(ref::tensor(b, tc::dtypes::float16));
  EXPECT_EQ(h.dtype(), tc::dtypes::float16);
  ref::expect_close(h, ref::matmul(a, b), 2e-3, 1e-1, "half accumulates in float32");
  // as in tinygrad, the products are int8 and only the sum accumulates in int32: |products| <= 121
  NDArray sa = ref::random_int({3, 16}, 20, -11, 11), sb = ref::random_int({16, 2}, 21, -11, 11);
  Tensor acc = ref::tensor(sa, tc::dtypes::int8)
                   .matmul(ref::tensor(sb, tc::dtypes::int8), false, tc::dtypes::int32);
  EXPECT_EQ(acc.dtype(), tc::dtypes::int32);
  ref::expect_exact(acc, ref::matmul(sa, sb), "int8 with int32 accumulation");
}

TEST(Matmul, LinearAndSequential) {
  NDArray x = ref::random({3, 4}, 14), w = ref::random({4, 2}, 15), b = ref::random({2}, 16);
  NDArray want = ref::zip(ref::matmul(x, w), ref::expand(ref::reshape(b, {1, 2}), {3, 2}),
                          [](double p, double q) { return p + q; });
  Tensor tx = ref::tensor(x);
  ref::expect_close(tx.linear(ref::tensor(w), ref::tensor(b)), want, 1e-5, 1e-5, "linear");
  NDArray w1 = ref::random({4}, 17);
  ref::expect_close(tx.linear(ref::tensor(w1)),
                    ref::zip(x, ref::expand(ref::reshape(w1, {1, 4}), {3, 4}),
                             [](double p, double q) { return p * q; }),
                    1e-6, 1e-6, "1-D weight is elementwise");
  Tensor tw = ref::tensor(w), tb = ref::tensor(b);
  Tensor seq = tx.sequential({[&](const Tensor& t) { return t.linear(tw, tb); },
                              [](const Tensor& t) { return t.relu(); }});
  ref::expect_close(seq, ref::map(want, [](double v) { return v > 0 ? v : 0; }), 1e-5, 1e-5,
                    "sequential");
}

TEST(Matmul, Gradients) {
  // L = sum(A @ B): dL/dA = 1 @ B^T (row sums of B), dL/dB = A^T @ 1 (column sums of A)
  NDArray a = ref::random({3, 4}, 18), b = ref::random({4, 5}, 19);
  Tensor ta = ref::tensor(a).requires_grad_(), tb = ref::tensor(b).requires_grad_();
  ta.matmul(tb).sum().backward();
  NDArray ga =
      ref::matmul(ref::generate({3, 5}, [](int64_t) { return 1.0; }), ref::permute(b, {1, 0}));
  NDArray gb =
      ref::matmul(ref::permute(a, {1, 0}), ref::generate({3, 5}, [](int64_t) { return 1.0; }));
  ref::expect_close(*ta.grad(), ga, 1e-5, 1e-5, "dA");
  ref::expect_close(*tb.grad(), gb, 1e-5, 1e-5, "dB");
}

TEST(Matmul, GradientsAreProductsWithLanesOnTheirOutputs) {
  // a linear layer's x @ Wᵀ and attention's q @ kᵀ, with a random upstream gradient G: dx and dw
  // match float64 products, and every kernel that sums (the gradients' products) puts SIMD lanes
  // on an output axis, as autograd's sums along both operands' rows could not
  auto check = [](const NDArray& x, const NDArray& w, const NDArray& g,
                  const std::function<Tensor(const Tensor&, const Tensor&)>& product,
                  const NDArray& want_x, const NDArray& want_w, const std::string& what) {
    auto gradients = [&] {
      Tensor tx = ref::tensor(x).requires_grad_(), tw = ref::tensor(w).requires_grad_();
      product(tx, tw).mul(ref::tensor(g)).sum().backward();
      return std::vector<Tensor>{*tx.grad(), *tw.grad()};
    };
    std::vector<Tensor> got = gradients();
    ref::expect_close(got[0], want_x, 1e-4, 1e-4, what + " dx");
    ref::expect_close(got[1], want_w, 1e-4, 1e-4, what + " dw");
    // a second graph's kernels (scheduling marks a graph computed without running it)
    for (const Tensor& grad : gradients())
      for (const tc::schedule::ScheduleItem& item : tc::schedule::create_schedule({grad.uop()})) {
        if (!tc::codegen::has_reduce(item.ast)) continue;
        tc::runtime::Device& dev = item.bufs[0]->buffer->device();
        tc::codegen::KernelOpts o = tc::codegen::choose_opts(
            tc::codegen::lower(item.ast), {dev.simd_bytes(), dev.simd_registers(), true});
        EXPECT_GE(o.lane_axis, 0) << what << ": a gradient's sum without output lanes";
      }
  };
  // y = x Wᵀ: dx = G W, dW = Gᵀ x (over all 96 rows)
  NDArray x = ref::random({2, 48, 64}, 30), W = ref::random({96, 64}, 31),
          g = ref::random({2, 48, 96}, 32);
  NDArray gr = ref::reshape(g, {96, 96});
  check(
      x, W, g, [](const Tensor& a, const Tensor& b) { return a.matmul(b.transpose()); },
      ref::reshape(ref::matmul(gr, W), {2, 48, 64}),
      ref::matmul(ref::permute(gr, {1, 0}), ref::reshape(x, {96, 64})), "linear");
  // s = q kᵀ: dq = G k, dk = Gᵀ q, per batch and head
  NDArray q = ref::random({2, 2, 64, 64}, 33), k = ref::random({2, 2, 64, 64}, 34),
          ga = ref::random({2, 2, 64, 64}, 35);
  check(
      q, k, ga, [](const Tensor& a, const Tensor& b) { return a.matmul(b.transpose(-1, -2)); },
      batched_matmul(ga, k), batched_matmul(ref::permute(ga, {0, 1, 3, 2}), q), "attention");
}

// The largest relative rounding error of a narrow float: 2^-11 (float16), 2^-8 (bfloat16).
double unit_roundoff(tc::DType d) { return d == tc::dtypes::float16 ? 0x1p-11 : 0x1p-8; }

TEST(Matmul, AutocastMultipliesInTheNarrowDtype) {
  // float32 operands are rounded to the autocast dtype; each product may be rounded to it too,
  // the sum is float32 (so its error grows like sqrt(k) roundings, not k), then the result is
  // rounded once more. A float32 bias promotes the linear layer back to float32; the gradients
  // reach the float32 operands in float32.
  NDArray a = ref::random({5, 70}, 31, -1, 1), b = ref::random({70, 66}, 32, -1, 1),
          bias = ref::random({66}, 33);
  for (tc::DType d : {tc::dtypes::float16, tc::dtypes::bfloat16}) {
    SCOPED_TRACE(d.name());
    Tensor ta = ref::tensor(a).requires_grad_(), tb = ref::tensor(b).requires_grad_();
    NDArray want = ref::matmul(ref::represent(a, d), ref::represent(b, d));
    double eps = unit_roundoff(d);
    {
      Tensor::Autocast narrow(d);
      EXPECT_EQ(Tensor::autocast_dtype(), d);
      Tensor y = ta.matmul(tb);
      EXPECT_EQ(y.dtype(), d);
      ref::expect_close(y, want, 2 * eps, 8 * eps, "matmul");
      Tensor z = ta.linear(tb, ref::tensor(bias));
      EXPECT_EQ(z.dtype(), tc::dtypes::float32);
      y.float_().sum().backward();
      {
        Tensor::Autocast off(std::nullopt);
        EXPECT_EQ(ta.matmul(tb).dtype(), tc::dtypes::float32);
      }
      EXPECT_EQ(Tensor::autocast_dtype(), d);
      Tensor ints = Tensor::ones({2, 3}, tc::dtypes::int32);
      EXPECT_EQ(ints.matmul(ints.T()).dtype(), tc::dtypes::int32);  // only floats narrow
    }
    EXPECT_FALSE(Tensor::autocast_dtype().has_value());
    ASSERT_TRUE(ta.grad() && tb.grad());
    EXPECT_EQ(ta.grad()->dtype(), tc::dtypes::float32);
    EXPECT_EQ(tb.grad()->dtype(), tc::dtypes::float32);
    // dL/dA = 1 @ B^T: row sums of the rounded B, each summed in the narrow dtype's products
    NDArray ones = ref::generate({5, 66}, [](int64_t) { return 1.0; });
    ref::expect_close(*ta.grad(), ref::matmul(ones, ref::permute(ref::represent(b, d), {1, 0})),
                      2 * eps, 8 * eps, "dA");
  }
  EXPECT_THROW(Tensor::Autocast(tc::dtypes::float32), tc::Error);
}

TEST(Matmul, Errors) {
  Tensor a = Tensor::zeros({2, 3}), b = Tensor::zeros({4, 5});
  std::string m = error_message([&] { a.matmul(b); });
  EXPECT_THAT(m, ::testing::HasSubstr("Tensor.dot"));
  EXPECT_THAT(m, ::testing::HasSubstr("(2, 3)"));
  EXPECT_THAT(m, ::testing::HasSubstr("(4, 5)"));
  EXPECT_THAT(error_message([&] { Tensor::zeros({}).dot(a); }),
              ::testing::HasSubstr("at least 1-D"));
  EXPECT_THROW(Tensor::zeros({3}).dot(Tensor::zeros({4})), tc::Error);
  EXPECT_THROW(Tensor::zeros({2, 2, 3}).matmul(Tensor::zeros({3, 3, 2})),
               tc::Error);  // batch 2 vs 3
}

}  // namespace
