// Kernel fusion, checked by counting the kernels run (GlobalCounters) and the schedule items, and
// by comparing every result against a naive double-precision reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "tests/tensor/reference.h"
#include "tinycore/engine/realize.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"

namespace {

namespace ref = tcref;
namespace dt = tc::dtypes;
using ref::NDArray;
using tc::Tensor;
using tc::UOpRef;
using tc::engine::GlobalCounters;

constexpr double kTol = 1e-5;

// Realizes `t` from a counter reset and returns the number of kernels it took.
int64_t kernels_to_realize(Tensor& t) {
  GlobalCounters::reset();
  t.realize();
  return GlobalCounters::kernel_count;
}

// The BUFFER node behind a realized tensor (a BUFFER, or a RESHAPE of one).
UOpRef buffer_of(const UOpRef& u) { return u->op == tc::Ops::BUFFER ? u : u->src[0]; }

TEST(Fusion, ElementwiseFusesIntoReduce) {
  NDArray a = ref::random({4, 5}, 1), b = ref::random({4, 5}, 2), c = ref::random({4, 5}, 3);
  Tensor ta = ref::tensor(a), tb = ref::tensor(b), tc_ = ref::tensor(c);
  ta.realize(), tb.realize(), tc_.realize();
  Tensor r = ((ta + tb) * tc_).sum(1);
  EXPECT_EQ(kernels_to_realize(r), 1);
  NDArray want = ref::reduce(ref::zip(ref::zip(a, b, [](double x, double y) { return x + y; }), c,
                                      [](double x, double y) { return x * y; }),
                             ref::Reduce::Sum, {1});
  ref::expect_close(r, want, kTol, kTol, "((a+b)*c).sum(1)");
  EXPECT_EQ(GlobalCounters::kernel_count, 1);  // reading the result runs nothing more
}

TEST(Fusion, MovementOpsAreViewsNotCopies) {
  NDArray x = ref::random({2, 3, 4}, 11), y = ref::random({4, 6}, 12);
  Tensor tx = ref::tensor(x), ty = ref::tensor(y);
  Tensor r = tx.reshape({6, 4}).permute({1, 0}) + ty;

  std::vector<tc::schedule::ScheduleItem> items = tc::schedule::create_schedule({r.uop()});
  ASSERT_EQ(items.size(), 1u);
  ASSERT_EQ(items[0].bufs.size(), 3u);  // output + the two inputs, nothing copied in between
  EXPECT_EQ(items[0].bufs[1], buffer_of(tx.uop()));
  EXPECT_EQ(items[0].bufs[2], buffer_of(ty.uop()));
  EXPECT_NE(items[0].bufs[0], buffer_of(tx.uop()));
  EXPECT_NE(items[0].bufs[0], buffer_of(ty.uop()));
  EXPECT_EQ(items[0].bufs[0]->dtype, dt::float32);
  EXPECT_EQ(items[0].bufs[0]->arg_ints()[1], 24);  // the output buffer holds exactly the result

  GlobalCounters::reset();
  tc::engine::run_schedule(items);
  EXPECT_EQ(GlobalCounters::kernel_count, 1);
  NDArray want = ref::zip(ref::permute(ref::reshape(x, {6, 4}), {1, 0}), y,
                          [](double p, double q) { return p + q; });
  ref::expect_close(r, want, kTol, kTol, "reshape.permute + y");
  EXPECT_EQ(GlobalCounters::kernel_count, 1);
  // the result lives in the kernel's output buffer
  EXPECT_EQ(buffer_of(r.uop()->realized ? r.uop()->realized : r.uop()), items[0].bufs[0]);

  // the same graph realized through Tensor::realize is also one kernel
  Tensor again = tx.reshape({6, 4}).permute({1, 0}).flip({0}) + ty.flip({0});
  EXPECT_EQ(kernels_to_realize(again), 1);
  ref::expect_close(again, ref::flip(want, {0}), kTol, kTol, "flipped views");
}

TEST(Fusion, LongElementwiseChainIsOneKernel) {
  NDArray x = ref::random({3, 7}, 21), y = ref::random({3, 7}, 22), z = ref::random({3, 7}, 23);
  Tensor tx = ref::tensor(x), ty = ref::tensor(y), tz = ref::tensor(z);
  Tensor t = tx + ty;                     // 1
  t = t * 2;                              // 2
  t = t - tz;                             // 3
  t = t.maximum(ty);                      // 4
  t = t * t;                              // 5
  t = t + 1;                              // 6
  t = t.sqrt();                           // 7
  t = t / 3;                              // 8
  t = t.neg();                            // 9
  t = t.exp2();                           // 10
  t = t.where(t.gt(0.5), tx) * tz.abs();  // 11, 12, 13
  EXPECT_EQ(kernels_to_realize(t), 1);
  NDArray want = ref::generate({3, 7}, [&](int64_t i) {
    size_t k = static_cast<size_t>(i);
    double v = (x.v[k] + y.v[k]) * 2 - z.v[k];
    v = std::max(v, y.v[k]);
    v = std::exp2(-std::sqrt(v * v + 1) / 3);
    double w = v > 0.5 ? 1.0 : 0.0;
    return (v != 0 ? w : x.v[k]) * std::fabs(z.v[k]);
  });
  ref::expect_close(t, want, 1e-4, kTol, "chain");
}

TEST(Fusion, MatmulIsOneKernel) {
  const int64_t M = 5, K = 7, N = 6;
  NDArray a = ref::random({M, K}, 31), b = ref::random({K, N}, 32);
  Tensor ta = ref::tensor(a), tb = ref::tensor(b);
  Tensor mm = (ta.reshape({M, 1, K}) * tb.permute({1, 0}).reshape({1, N, K})).sum(2);
  EXPECT_EQ(mm.shape(), (std::vector<int64_t>{M, N}));
  EXPECT_EQ(kernels_to_realize(mm), 1);
  ref::expect_close(mm, ref::matmul(a, b), kTol, kTol, "matmul");
  // a larger one, against the same naive product
  const int64_t M2 = 33, K2 = 65, N2 = 17;
  NDArray c = ref::random({M2, K2}, 33, -1, 1), d = ref::random({K2, N2}, 34, -1, 1);
  Tensor tc2 = ref::tensor(c), td = ref::tensor(d);
  Tensor mm2 = (tc2.reshape({M2, 1, K2}) * td.permute({1, 0}).reshape({1, N2, K2})).sum(2);
  EXPECT_EQ(kernels_to_realize(mm2), 1);
  ref::expect_close(mm2, ref::matmul(c, d), kTol, 1e-4, "matmul 33x65x17");
}

// A reduce over the trailing axes read back along them is computed in its reader's kernel, once
// per row before the row's loop (a softmax is one kernel); over a leading axis, or a row longer
// than the scheduler keeps in cache, it is a kernel of its own.
TEST(Fusion, RowReducesFuseIntoTheirReader) {
  NDArray x = ref::random({4, 6}, 41);
  Tensor tx = ref::tensor(x);
  Tensor s = tx - tx.max(1, true);
  EXPECT_EQ(kernels_to_realize(s), 1);
  NDArray m = ref::reduce(x, ref::Reduce::Max, {1}, true);
  NDArray want = ref::zip(x, m, [](double p, double q) { return p - q; });
  ref::expect_close(s, want, kTol, kTol, "x - x.max(1, keepdim)");

  // the whole softmax: max, sum of exp, and the final division
  Tensor e = (tx - tx.max(1, true)).exp();
  Tensor sm = e / e.sum(1, true);
  EXPECT_EQ(kernels_to_realize(sm), 1);
  NDArray ew = ref::map(want, [](double v) { return std::exp(v); });
  NDArray smw = ref::zip(ew, ref::reduce(ew, ref::Reduce::Sum, {1}, true),
                         [](double p, double q) { return p / q; });
  ref::expect_close(sm, smw, 1e-4, kTol, "softmax");

  // over the leading axis: the max is a kernel of its own
  Tensor lead = tx - tx.max(0, true);
  EXPECT_EQ(kernels_to_realize(lead), 2);
  NDArray m0 = ref::reduce(x, ref::Reduce::Max, {0}, true);
  ref::expect_close(lead,
                    ref::generate({4, 6},
                                  [&](int64_t i) {
                                    return x.v[static_cast<size_t>(i)] -
                                           m0.v[static_cast<size_t>(i % 6)];
                                  }),
                    kTol, kTol, "x - x.max(0, keepdim)");

  // rows of 20,000, too long to stay in cache between passes: the mean's own kernels (two, as
  // split_reduce.h splits a long sum into few outputs), then the output's
  NDArray y = ref::random({2, 20000}, 42);
  Tensor ty = ref::tensor(y);
  Tensor centred = ty - ty.mean(1, true);
  EXPECT_EQ(kernels_to_realize(centred), 3);
  NDArray my = ref::reduce(y, ref::Reduce::Sum, {1}, true);
  ref::expect_close(centred,
                    ref::generate({2, 20000},
                                  [&](int64_t i) {
                                    return y.v[static_cast<size_t>(i)] -
                                           my.v[static_cast<size_t>(i / 20000)] / 20000;
                                  }),
                    1e-5, 1e-5, "rows of 20000 centred");
}

// Attention's softmax over scores that are a product: the product is realized once, for the
// row's max, and the softmax kernel reads it there (no second copy of the product inlined in its
// output), then the product with v.
TEST(Fusion, AttentionSoftmaxReadsItsScoresOnce) {
  NDArray q = ref::random({2, 1, 8}, 43), k = ref::random({2, 16, 8}, 44),
          v = ref::random({2, 16, 8}, 45);
  Tensor tq = ref::tensor(q), tk = ref::tensor(k), tv = ref::tensor(v);
  Tensor out = tq.matmul(tk.transpose(-1, -2)).softmax(-1).matmul(tv);
  std::vector<tc::schedule::ScheduleItem> items = tc::schedule::create_schedule({out.uop()});
  ASSERT_EQ(items.size(), 3u);  // scores, softmax, product with v
  int reduces = 0;
  for (const tc::UOp* u : items[1].ast->toposort()) reduces += u->op == tc::Ops::REDUCE_AXIS;
  EXPECT_EQ(reduces, 2);  // the row's max and sum, not the scores again
  tq = ref::tensor(q), tk = ref::tensor(k), tv = ref::tensor(v);  // fresh, unrealized copies
  out = tq.matmul(tk.transpose(-1, -2)).softmax(-1).matmul(tv);
  NDArray want = ref::generate({2, 1, 8}, [&](int64_t i) {
    int64_t h = i / 8, d = i % 8;
    std::vector<double> s(16);
    double top = -1e300, total = 0, o = 0;
    for (int64_t c = 0; c < 16; c++) {
      s[c] = 0;
      for (int64_t j = 0; j < 8; j++)
        s[c] +=
            q.v[static_cast<size_t>(h * 8 + j)] * k.v[static_cast<size_t>((h * 16 + c) * 8 + j)];
      top = std::max(top, s[c]);
    }
    for (int64_t c = 0; c < 16; c++) total += std::exp(s[c] - top);
    for (int64_t c = 0; c < 16; c++)
      o += std::exp(s[c] - top) / total * v.v[static_cast<size_t>((h * 16 + c) * 8 + d)];
    return o;
  });
  ref::expect_close(out, want, 1e-5, 1e-5, "softmax(q k^T) v");
}

TEST(Fusion, ReduceBoundaries) {
  NDArray x = ref::random({3, 4, 5}, 51), y = ref::random({3, 4}, 52);
  Tensor tx = ref::tensor(x), ty = ref::tensor(y);
  // elementwise after a reduce stays in the reduce's kernel
  Tensor a = tx.sum(2) * 2 + ty;
  EXPECT_EQ(kernels_to_realize(a), 1);
  ref::expect_close(a,
                    ref::zip(ref::reduce(x, ref::Reduce::Sum, {2}), y,
                             [](double p, double q) { return p * 2 + q; }),
                    kTol, kTol, "sum * 2 + y");
  // a reduce inside another reduce is its own kernel
  Tensor b = tx.sum(2).max(1);
  EXPECT_EQ(kernels_to_realize(b), 2);
  ref::expect_close(b, ref::reduce(ref::reduce(x, ref::Reduce::Sum, {2}), ref::Reduce::Max, {1}),
                    kTol, kTol, "sum then max");
  // broadcasting a realized input is not a boundary
  NDArray col = ref::random({3, 1}, 53);
  Tensor c = ref::tensor(col).expand({3, 4}) * ty;
  EXPECT_EQ(kernels_to_realize(c), 1);
  ref::expect_close(c, ref::zip(col, y, [](double p, double q) { return p * q; }), kTol, kTol,
                    "expand * y");
  // the softmax denominator pattern with exp fused in
  Tensor d = (tx - tx.max(2, true)).exp().sum(2);
  EXPECT_EQ(kernels_to_realize(d), 2);
  NDArray dm = ref::reduce(x, ref::Reduce::Max, {2}, true);
  ref::expect_close(d,
                    ref::reduce(ref::zip(x, dm, [](double p, double q) { return std::exp(p - q); }),
                                ref::Reduce::Sum, {2}),
                    1e-4, kTol, "sum(exp(x - max))");
}

TEST(Fusion, ContiguousIsAKernelBoundary) {
  NDArray x = ref::random({4, 6}, 61);
  Tensor tx = ref::tensor(x);
  Tensor q = (tx + 1).contiguous() * 2;
  EXPECT_EQ(kernels_to_realize(q), 2);
  ref::expect_close(q, ref::map(x, [](double v) { return (v + 1) * 2; }), kTol, kTol,
                    "(x+1).contiguous()*2");
  Tensor r = (tx.permute({1, 0}).contiguous() + 1).sum(0);
  EXPECT_EQ(kernels_to_realize(r), 2);
  ref::expect_close(r,
                    ref::reduce(ref::map(ref::permute(x, {1, 0}), [](double v) { return v + 1; }),
                                ref::Reduce::Sum, {0}),
                    kTol, kTol, "permute.contiguous + 1 .sum(0)");
}

TEST(Fusion, ContiguousOfAViewIsOneCopy) {
  // the permuted view is computed straight into the result buffer: one kernel, not a copy of a copy
  NDArray x = ref::random({4, 6}, 62);
  Tensor p = ref::tensor(x).permute({1, 0}).contiguous();
  EXPECT_EQ(kernels_to_realize(p), 1);
  ref::expect_close(p, ref::permute(x, {1, 0}), 0, 0, "permute contiguous");
  Tensor e = (ref::tensor(x) * 3).contiguous();
  EXPECT_EQ(kernels_to_realize(e), 1);
  ref::expect_close(e, ref::map(x, [](double v) { return v * 3; }), kTol, kTol,
                    "(x*3).contiguous()");
}

TEST(Fusion, ContiguousOfABufferIsFree) {
  // tinygrad: contiguous() of an already contiguous, realized buffer is the buffer itself
  NDArray x = ref::random({4, 6}, 63);
  Tensor same = ref::tensor(x).contiguous();
  EXPECT_EQ(kernels_to_realize(same), 0);
  ref::expect_close(same, x, 0, 0, "contiguous of a buffer");
}

TEST(Fusion, CreationIsOneKernel) {
  Tensor a = Tensor::arange(10);
  EXPECT_EQ(kernels_to_realize(a), 1);
  ref::expect_exact(a, ref::generate({10}, [](int64_t i) { return static_cast<double>(i); }),
                    "arange");
  Tensor e = Tensor::eye(4, 3);
  EXPECT_EQ(kernels_to_realize(e), 1);
  ref::expect_exact(e, ref::generate({4, 3}, [](int64_t i) { return i / 3 == i % 3 ? 1.0 : 0.0; }),
                    "eye");
  Tensor f = Tensor::full({2, 3}, 2.5) * Tensor::arange(3).cast(dt::float32);
  // arange is each element's index (IOTA), not a reduce: broadcast over rows it stays fused
  EXPECT_EQ(kernels_to_realize(f), 1);
  ref::expect_exact(
      f, ref::generate({2, 3}, [](int64_t i) { return 2.5 * static_cast<double>(i % 3); }),
      "full * arange");
}

TEST(Fusion, RealizeAllSchedulesEachOutput) {
  NDArray x = ref::random({3, 4}, 71), y = ref::random({3, 4}, 72);
  Tensor tx = ref::tensor(x), ty = ref::tensor(y);
  Tensor s = tx + ty;
  Tensor t1 = s * 2, t2 = s.sum(1);
  GlobalCounters::reset();
  tc::realize_all({t1, t2});
  EXPECT_EQ(GlobalCounters::kernel_count, 2);  // the shared s is recomputed in each, not stored
  NDArray sw = ref::zip(x, y, [](double p, double q) { return p + q; });
  ref::expect_close(t1, ref::map(sw, [](double v) { return v * 2; }), kTol, kTol, "t1");
  ref::expect_close(t2, ref::reduce(sw, ref::Reduce::Sum, {1}), kTol, kTol, "t2");
  EXPECT_EQ(GlobalCounters::kernel_count, 2);
}

TEST(Realize, SecondRealizeReusesTheResult) {
  NDArray a = ref::random({5, 3}, 81), b = ref::random({5, 3}, 82), c = ref::random({5, 3}, 83);
  Tensor ta = ref::tensor(a), tb = ref::tensor(b), tc_ = ref::tensor(c);
  Tensor t = (ta + tb) * tc_;
  Tensor copy = t;        // a handle on the same tensor
  UOpRef expr = t.uop();  // and the expression node itself
  EXPECT_EQ(kernels_to_realize(t), 1);
  EXPECT_EQ(kernels_to_realize(t), 0);
  EXPECT_EQ(kernels_to_realize(copy), 0);
  Tensor from_expr(expr);
  EXPECT_EQ(kernels_to_realize(from_expr), 0);
  NDArray want = ref::zip(ref::zip(a, b, [](double p, double q) { return p + q; }), c,
                          [](double p, double q) { return p * q; });
  GlobalCounters::reset();
  ref::expect_close(t, want, kTol, kTol, "t");
  ref::expect_close(copy, want, kTol, kTol, "copy");
  ref::expect_close(from_expr, want, kTol, kTol, "from the expression");
  EXPECT_EQ(GlobalCounters::kernel_count, 0);

  // data() realizes once; reading again runs nothing
  Tensor u = ta * 3 - tb;
  GlobalCounters::reset();
  NDArray uw = ref::zip(a, b, [](double p, double q) { return p * 3 - q; });
  ref::expect_close(u, uw, kTol, kTol, "u first read");
  EXPECT_EQ(GlobalCounters::kernel_count, 1);
  ref::expect_close(u, uw, kTol, kTol, "u second read");
  EXPECT_EQ(u.sum().item<float>(), u.sum().item<float>());
  EXPECT_EQ(GlobalCounters::kernel_count, 2);  // only the sum, once
}

TEST(Realize, RealizedBuffersLaunchNothing) {
  NDArray x = ref::random({6}, 91), m = ref::random({2, 3}, 92);
  Tensor tx = ref::tensor(x), tm = ref::tensor(m);
  EXPECT_EQ(kernels_to_realize(tx), 0);
  EXPECT_EQ(kernels_to_realize(tm), 0);  // a reshaped buffer is still a buffer
  Tensor v(std::vector<float>{1, 2, 3});
  EXPECT_EQ(kernels_to_realize(v), 0);
  Tensor r = tm.reshape({3, 2});  // reshape of a contiguous buffer: still no copy
  EXPECT_EQ(kernels_to_realize(r), 0);
  GlobalCounters::reset();
  ref::expect_close(tx, x, 0, 0, "x");
  ref::expect_close(tm, m, 0, 0, "m");
  ref::expect_close(r, ref::reshape(m, {3, 2}), 0, 0, "reshaped");
  EXPECT_EQ(GlobalCounters::kernel_count, 0);
  EXPECT_TRUE(tc::schedule::create_schedule({tm.uop()}).empty());
  EXPECT_TRUE(tc::schedule::create_schedule({tx.uop()}).empty());
}

}  // namespace

namespace {

// The kernels of `t`'s schedule, and the largest buffer any of them writes except the output.
struct Plan {
  size_t kernels;
  int64_t largest_intermediate;
};
Plan plan_of(const Tensor& t) {
  std::vector<tc::schedule::ScheduleItem> items = tc::schedule::create_schedule({t.uop()});
  int64_t largest = 0;
  for (size_t i = 0; i + 1 < items.size(); i++)
    largest = std::max(largest, items[i].bufs[0]->arg_ints()[1]);
  return {items.size(), largest};
}

// Softmax and layernorm are one kernel each (their row reduces run inside it), and cross-entropy
// takes no more kernels than tinygrad's scheduler gives it; no kernel writes a broadcast: every
// intermediate buffer holds one value per row.
TEST(Fusion, NormalizationsAreOneKernelAndMaterializeNoBroadcast) {
  const int64_t rows = 16, cols = 64;
  Tensor x = ref::tensor(ref::random({rows, cols}, 21));
  Plan softmax = plan_of(x.softmax(1));
  EXPECT_EQ(softmax.kernels, 1u);
  Plan layernorm = plan_of((x - x.mean(1, true)) / (x.var(1, true) + 1e-5f).sqrt());
  EXPECT_EQ(layernorm.kernels, 1u);  // the mean inside the variance, both inside the output
  Tensor labels = ref::tensor(ref::random_int({rows}, 22, 0, cols - 1), dt::int32);
  // arange is a scan kernel of its own (cols values, not a broadcast): made beforehand, as a
  // training loop does once
  Tensor classes = Tensor::arange(cols).cast(dt::int32).realize();
  Tensor onehot = classes.reshape({1, cols}).eq(labels.reshape({rows, 1}));
  Plan xent = plan_of((x.log_softmax(1) * onehot).sum(1).mean().neg());
  EXPECT_LE(xent.kernels, 4u);  // max, logsumexp, picked logit per row, mean
  EXPECT_EQ(xent.largest_intermediate, rows);
}

}  // namespace

namespace {

int reduces_in(const tc::schedule::ScheduleItem& item) {
  int n = 0;
  for (const tc::UOp* u : item.ast->toposort()) n += u->op == tc::Ops::REDUCE_AXIS;
  return n;
}

// A reduce that several outputs read (an optimizer's m, v and parameter updates all read the
// gradient) is computed once, by a kernel of its own, not once per reader.
TEST(Fusion, SharedReduceIsComputedOnce) {
  NDArray x = ref::random({8, 32}, 31);
  Tensor tx = ref::tensor(x), r = tx.sum(1);
  Tensor a = r * 2, b = r + 1;
  std::vector<tc::schedule::ScheduleItem> items = tc::schedule::create_schedule({a.uop(), b.uop()});
  int reduces = 0;
  for (const auto& item : items) reduces += reduces_in(item);
  EXPECT_EQ(reduces, 1);
  EXPECT_EQ(items.size(), 3u);  // the sum, then each output
  // values from a fresh copy: create_schedule marked a and b realized without running anything
  Tensor r2 = ref::tensor(x).sum(1);
  a = r2 * 2, b = r2 + 1;
  tc::realize_all({a, b});
  NDArray sum = ref::reduce(x, ref::Reduce::Sum, {1});
  ref::expect_close(a, ref::map(sum, [](double v) { return v * 2; }), kTol, kTol, "sum*2");
  ref::expect_close(b, ref::map(sum, [](double v) { return v + 1; }), kTol, kTol, "sum+1");
}

// A value read by several kernels is fused into each while it reads few buffers of its size, and
// gets a kernel of its own once it reads 4: a gradient down a residual stream, each level the sum
// of the one below and a branch's, read by each level's reduce (a batchnorm's backward sums), is
// computed once per level. Fused into every reader, the reduces at the top of 8 levels would
// read 9 buffers each (ResNet-50's first blocks read 30).
TEST(Fusion, AValueReadByManyKernelsIsComputedOnceWhenItReadsManyBuffers) {
  constexpr int kLevels = 8;
  std::vector<NDArray> branch;
  std::vector<Tensor> tb;
  for (int i = 0; i <= kLevels; i++) branch.push_back(ref::random({8, 16}, 70 + i));
  auto build = [&](std::vector<Tensor>& sums) {
    tb.clear();
    for (const NDArray& b : branch) tb.push_back(ref::tensor(b).realize());
    Tensor g = tb[0];
    sums.clear();
    for (int i = 1; i <= kLevels; i++) {
      g = g + tb[i];
      sums.push_back(g.sum(1)), sums.push_back((g * tb[i]).sum(1));
    }
  };
  std::vector<Tensor> sums;
  build(sums);
  std::vector<UOpRef> roots;
  for (const Tensor& t : sums) roots.push_back(t.uop());
  std::vector<tc::schedule::ScheduleItem> items = tc::schedule::create_schedule(roots);
  size_t most = 0, computed = 0;
  for (const auto& item : items) {
    most = std::max(most, item.bufs.size() - 1);
    computed += reduces_in(item) == 0;
  }
  EXPECT_LE(most, 4u);      // at most a level's value realized below and 3 more levels' branches
  EXPECT_GE(computed, 2u);  // levels realized on the way up
  EXPECT_LE(computed, 4u);  // not every level: 2 or 3 buffers are cheaper read twice
  build(sums);  // fresh tensors: create_schedule marked the roots realized without running
  tc::realize_all(sums);
  NDArray g = branch[0];
  for (int i = 1; i <= kLevels; i++) {
    g = ref::zip(g, branch[i], [](double x, double y) { return x + y; });
    NDArray gb = ref::zip(g, branch[i], [](double x, double y) { return x * y; });
    ref::expect_close(sums[2 * (i - 1)], ref::reduce(g, ref::Reduce::Sum, {1}), kTol, kTol,
                      "g.sum");
    ref::expect_close(sums[2 * i - 1], ref::reduce(gb, ref::Reduce::Sum, {1}), kTol, kTol,
                      "(g*b).sum");
  }
}

// A broadcast of a value that takes arithmetic is computed once into a buffer of the small
// shape (tinygrad's realize-before-expand), not recomputed per broadcast copy; a broadcast of a
// buffer, or of a buffer with one op (a pad's fill), is read in place.
TEST(Fusion, ComputedValueIsRealizedBeforeItIsBroadcast) {
  NDArray x = ref::random({16}, 41), w = ref::random({16, 64}, 42);
  Tensor tx = ref::tensor(x), tw = ref::tensor(w);
  Tensor y = ((tx * 3 + 1).exp2()).reshape({16, 1});
  Tensor z = y.expand({16, 64}) * tw;
  std::vector<tc::schedule::ScheduleItem> items = tc::schedule::create_schedule({z.uop()});
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].bufs[0]->arg_ints()[1], 16);  // the small shape, not 16 x 64
  tx = ref::tensor(x);                             // a fresh copy, as above
  z = ((tx * 3 + 1).exp2()).reshape({16, 1}).expand({16, 64}) * tw;
  EXPECT_EQ(kernels_to_realize(z), 2);
  NDArray want = ref::generate({16, 64}, [&](int64_t i) {
    return std::exp2(x.v[static_cast<size_t>(i / 64)] * 3 + 1) * w.v[static_cast<size_t>(i)];
  });
  ref::expect_close(z, want, 1e-5, 1e-5, "expanded exp2");
  Tensor once = (tx + 1).reshape({16, 1}).expand({16, 64}) * tw;
  EXPECT_EQ(kernels_to_realize(once), 1);
}

// A lookup in a computed table (an embedding whose rows are dequantized weights) computes only
// the rows it reads, in the lookup's kernel: the one-hot's reduce is narrowed to one trip, so the
// table is not realized first (which would write all of it, and keep it, for 16 rows).
// With many rows (a 512-token prompt) the product takes no layout copy of the table either.
TEST(Fusion, ALookupInAComputedTableComputesOnlyTheRowsItReads) {
  NDArray table = ref::random({1000, 64}, 43);
  Tensor t = ref::tensor(table);
  for (int64_t n : {16, 512}) {
    std::vector<int32_t> ids;
    for (int64_t i = 0; i < n; i++) ids.push_back(static_cast<int32_t>((i * 7919 + 5) % 1000));
    Tensor rows = Tensor::from_vector(ids, tc::Shape{n})
                      .one_hot(1000)
                      .cast(dt::float32)
                      .matmul((t * 2 + 1).exp2());
    EXPECT_EQ(kernels_to_realize(rows), 1) << n << " rows";
    NDArray want = ref::generate({n, 64}, [&](int64_t i) {
      return std::exp2(table.v[static_cast<size_t>(ids[i / 64] * 64 + i % 64)] * 2 + 1);
    });
    ref::expect_close(rows, want, 1e-5, 1e-5, "rows of the computed table");
  }
}

// A one-hot that is not a factor of the sum (a loss's gradient, softmax - one_hot, times the
// output weights) gathers nothing: every term is nonzero, so the computed operand is realized
// before its broadcast as any other (fused, a GPT's training step recomputed whole layers per
// output column: 375 ms a step against 96 ms).
TEST(Fusion, AOneHotSubtractedFromTheOperandIsNoGather) {
  NDArray x = ref::random({16, 100}, 48), w = ref::random({100, 64}, 49);
  std::vector<int32_t> ids;
  for (int i = 0; i < 16; i++) ids.push_back((i * 37 + 3) % 100);
  auto make = [&] {
    Tensor onehot = Tensor::from_vector(ids, tc::Shape{16}).one_hot(100).cast(dt::float32);
    return ((ref::tensor(x) * 2 + 1).exp2() - onehot).matmul(ref::tensor(w));
  };
  Tensor y = make();
  EXPECT_EQ(kernels_to_realize(y), 2);  // exp2 first, then the product
  NDArray want = ref::generate({16, 64}, [&](int64_t i) {
    double sum = 0;
    for (int64_t k = 0; k < 100; k++)
      sum += (std::exp2(x.v[static_cast<size_t>(i / 64 * 100 + k)] * 2 + 1) -
              (ids[static_cast<size_t>(i / 64)] == k ? 1.0 : 0.0)) *
             w.v[static_cast<size_t>(k * 64 + i % 64)];
    return sum;
  });
  ref::expect_close(y, want, 1e-4, 1e-4, "(exp2 - one_hot) @ w");
}

// x (rows, 96) @ (0.5 w)ᵀ in double, for w (64, 96) stored as float16 bits in `half`.
NDArray times_half_transposed(const NDArray& x, const Tensor& half) {
  std::vector<float> wd = half.bitcast(dt::float16).cast(dt::float32).data<float>();
  return ref::generate({x.shape[0], 64}, [&](int64_t i) {
    double sum = 0;
    for (int64_t k = 0; k < 96; k++)
      sum += x.v[static_cast<size_t>(i / 64 * 96 + k)] * 0.5 *
             wd[static_cast<size_t>(i % 64 * 96 + k)];
    return sum;
  });
}

// A value decoded from packed bytes (a quantized weight: a bitcast of them) that a matmul reads
// transposed, from a blocked copy, is decoded in its own layout first, and the copy reads that
// buffer: decoded inside the copy, each element's block arithmetic left it scalar. The decoded
// value is not kept (not marked realized): the weight stays in its packed form.
TEST(Fusion, ADecodedValueReadTransposedIsDecodedInItsOwnLayoutFirst) {
  NDArray w = ref::random({64, 96}, 44), x = ref::random({128, 96}, 45);
  Tensor half = ref::tensor(w).cast(dt::float16).bitcast(dt::uint16).realize();
  Tensor decoded = half.bitcast(dt::float16).cast(dt::float32) * 0.5;
  Tensor y = ref::tensor(x).matmul(decoded.T());
  EXPECT_EQ(kernels_to_realize(y), 3);  // the decode, the blocked copy, the matmul
  EXPECT_EQ(decoded.uop()->realized, nullptr);
  ref::expect_close(y, times_half_transposed(x, half), 1e-4, 1e-4, "x @ decodedᵀ");
}

// A few rows over a value decoded from packed bytes (a short prompt over a quantized weight)
// decode it in the product's kernel, once per register tile of rows, up to 8 rows times how much
// larger the value is than its bytes (float16 to float32: 16 rows); more rows, or a value that
// decodes nothing, get it computed into a buffer of its own first.
TEST(Fusion, AFewRowsOverADecodedValueDecodeItInTheirKernel) {
  NDArray w = ref::random({64, 96}, 46);
  Tensor half = ref::tensor(w).cast(dt::float16).bitcast(dt::uint16).realize();
  for (int64_t rows : {8, 16, 24}) {
    NDArray x = ref::random({rows, 96}, 47);
    Tensor decoded = half.bitcast(dt::float16).cast(dt::float32) * 0.5;
    Tensor y = ref::tensor(x).matmul(decoded.T());
    EXPECT_EQ(kernels_to_realize(y) == 1, rows <= 16) << rows << " rows";
    ref::expect_close(y, times_half_transposed(x, half), 1e-4, 1e-4, "x @ decodedᵀ");
    Tensor plain = ref::tensor(x).matmul((ref::tensor(w) * 0.5 + 1).T());  // 8 rows at most
    EXPECT_EQ(kernels_to_realize(plain) == 1, rows <= 8) << rows << " rows, float32";
  }
}

// Max pooling pads with -inf (a where over a padded mask, not a plain pad): the conv before it
// still writes its unpadded output and a copy pads it, rather than the conv computing the padded
// positions and checking bounds on every load.
TEST(Fusion, ConvBeforeAPaddedMaxPoolWritesItsPlainOutput) {
  Tensor x = ref::tensor(ref::random({1, 4, 6, 6}, 46)),
         w = ref::tensor(ref::random({4, 4, 3, 3}, 47));
  Tensor y =
      x.conv2d(w, {.padding = 1}).relu().max_pool2d({.kernel_size = 3, .stride = 2, .padding = 1});
  std::vector<int64_t> sizes;
  for (const auto& item : tc::schedule::create_schedule({y.uop()}))
    sizes.push_back(item.bufs[0]->arg_ints()[1]);
  // x padded, conv + relu (6x6), its -inf padded copy (8x8), the pool (3x3)
  EXPECT_EQ(sizes, (std::vector<int64_t>{4 * 8 * 8, 4 * 6 * 6, 4 * 8 * 8, 4 * 3 * 3}));
}

// A conv's output gradient (here relu's backward of a computed expression) is read padded by the
// input gradient's conv and plainly by the weight gradient's: it is computed once, unpadded,
// rather than one kernel computing it over the padded area and another again. Its pad, 2 wide
// around a 3x3 window, is read in place (the conv's window loops narrowed to it, codegen/narrow.h),
// with no padded copy.
TEST(Fusion, AGradientReadPaddedAndPlainIsComputedOnce) {
  Tensor x = ref::tensor(ref::random({2, 8, 8, 8}, 48)).requires_grad_(),
         w = ref::tensor(ref::random({8, 8, 3, 3}, 49)).requires_grad_(),
         c = ref::tensor(ref::random({2, 8, 6, 6}, 50));
  ((x.conv2d(w) * c).relu() * c).sum().backward();
  int reading_c = 0, padded = 0;
  for (const auto& item : tc::schedule::create_schedule({x.grad()->uop(), w.grad()->uop()})) {
    reading_c += std::count(item.bufs.begin() + 1, item.bufs.end(), buffer_of(c.uop()));
    padded += item.bufs[0]->arg_ints()[1] == 2 * 8 * 10 * 10;
  }
  EXPECT_EQ(reading_c, 1);  // the gradient is computed once
  EXPECT_EQ(padded, 0);     // and not copied padded
}

// A value that every reader reads through one transpose (a linear layer's weight gradient, which
// its matmul sums as (in, out) for a weight laid out (out, in)) is stored in the order it is read:
// the optimizer's updates of the moments read it contiguous, not gathered across rows. A root
// keeps its own order (its tensor's buffer is read back as it is laid out).
TEST(Fusion, AValueReadOnlyTransposedIsStoredAsItIsRead) {
  NDArray x = ref::random({16, 8}, 60), dy = ref::random({16, 24}, 61),
          m = ref::random({24, 8}, 62);
  Tensor tx = ref::tensor(x), tdy = ref::tensor(dy), tm = ref::tensor(m);
  for (Tensor* t : {&tx, &tdy, &tm}) t->realize();
  auto updates = [&](const Tensor& gradient) {
    Tensor grad = tx.T().matmul(gradient).T();  // (24, 8)
    return std::vector<Tensor>{tm * 0.9f + grad * 0.1f, grad * grad};
  };
  // (a schedule made is taken as run: the one inspected is over a buffer of its own)
  std::vector<Tensor> inspected = updates(ref::tensor(dy).realize());
  std::vector<tc::schedule::ScheduleItem> items =
      tc::schedule::create_schedule({inspected[0].uop(), inspected[1].uop()});
  ASSERT_EQ(items.size(), 3u);
  const UOpRef& summed = items[0].ast->src[0]->src[1];  // SINK(STORE(out, value))
  EXPECT_EQ(summed->shape()[0], 24);
  std::vector<Tensor> run = updates(tdy);
  Tensor &moment = run[0], &square = run[1];
  NDArray want = ref::transpose(ref::matmul(ref::transpose(x, 0, 1), dy), 0, 1);
  tc::realize_all({moment, square});
  ref::expect_close(moment, ref::zip(m, want, [](double a, double g) { return 0.9 * a + 0.1 * g; }),
                    1e-5, 1e-5, "0.9 m + 0.1 grad");
  ref::expect_close(square, ref::map(want, [](double g) { return g * g; }), 1e-5, 1e-5, "grad^2");
  // the product as a root beside its transposed reader: stored (8, 24), as the tensor reads it
  Tensor product = tx.T().matmul(tdy), twice = product.T() * 2.0f;
  tc::realize_all({product, twice});
  ref::expect_close(product, ref::transpose(want, 0, 1), 1e-5, 1e-5, "x^T dy");
  ref::expect_close(twice, ref::map(want, [](double g) { return 2 * g; }), 1e-5, 1e-5, "2 grad");
  // a tensor holding the value stored permuted (a keepdim max, read twice through its permute)
  // reads it later in its own order: what is marked realized is the permute
  NDArray v = ref::random({4, 5, 6}, 63);
  Tensor tv = ref::tensor(v).realize(), most = tv.max(1, true), moved = most.permute({2, 1, 0});
  Tensor a = moved * 2.0f, b = moved * 3.0f;
  tc::realize_all({a, b});
  NDArray m_ = ref::reduce(v, ref::Reduce::Max, {1}, true);
  ref::expect_close(most, m_, 1e-6, 1e-6, "max(1, keepdim)");
  ref::expect_close(b, ref::map(ref::permute(m_, {2, 1, 0}), [](double u) { return 3 * u; }), 1e-6,
                    1e-6, "3 max^T");
  // a permute that is itself a root is realized on its own: the sum it reads, stored as it is,
  // is computed once (3 kernels: the sum, the root's copy, its double)
  Tensor sum_root = tv.sum(2).T(), doubled = sum_root * 2.0f;
  GlobalCounters::reset();
  tc::realize_all({sum_root, doubled});
  EXPECT_EQ(GlobalCounters::kernel_count, 3);
  NDArray sum_t = ref::transpose(ref::reduce(v, ref::Reduce::Sum, {2}), 0, 1);
  ref::expect_close(sum_root, sum_t, 1e-5, 1e-5, "sum(2)^T");
  ref::expect_close(doubled, ref::map(sum_t, [](double u) { return 2 * u; }), 1e-5, 1e-5,
                    "2 sum^T");
}

// An activation that is both the next conv's padded input and a residual add's operand (a ResNet
// block) is computed once: a kernel writes it unpadded, a copy pads it for the conv, and the add
// reads the same buffer. Recomputed, the first conv would run again inside the second's kernel.
// Two products that one output adds, over operands of their own (a ResNet downsample block's
// conv plus its shortcut conv), are computed in kernels of their own; two over one operand (a
// SwiGLU's gate and up projections of x) stay in one kernel, sharing its loads.
TEST(Fusion, ProductsOverOperandsOfTheirOwnAreKernelsOfTheirOwn) {
  NDArray a = ref::random({8, 16}, 51), b = ref::random({16, 24}, 52), c = ref::random({8, 12}, 53),
          d = ref::random({12, 24}, 54), e = ref::random({16, 24}, 55);
  Tensor ta = ref::tensor(a), tb = ref::tensor(b), tc_ = ref::tensor(c), td = ref::tensor(d),
         te = ref::tensor(e);
  for (Tensor* t : {&ta, &tb, &tc_, &td, &te}) t->realize();
  Tensor sum = (ta.matmul(tb) + tc_.matmul(td)).relu();
  EXPECT_EQ(kernels_to_realize(sum), 2);
  NDArray want = ref::map(ref::zip(ref::matmul(a, b), ref::matmul(c, d), std::plus<double>()),
                          [](double v) { return std::max(v, 0.0); });
  ref::expect_close(sum, want, 1e-5, 1e-5, "relu(a @ b + c @ d)");
  Tensor gated = ta.matmul(tb).relu() * ta.matmul(te);
  EXPECT_EQ(kernels_to_realize(gated), 1);
  want = ref::zip(ref::matmul(a, b), ref::matmul(a, e),
                  [](double p, double q) { return std::max(p, 0.0) * q; });
  ref::expect_close(gated, want, 1e-5, 1e-5, "relu(a @ b) * (a @ e)");
}

TEST(Fusion, ResidualActivationIsComputedOnce) {
  NDArray x = ref::random({1, 4, 6, 6}, 43), w1 = ref::random({4, 4, 3, 3}, 44),
          w2 = ref::random({4, 4, 3, 3}, 45);
  Tensor tw1 = ref::tensor(w1), tw2 = ref::tensor(w2);
  GlobalCounters::reset();
  ref::tensor(x).conv2d(tw1, {.padding = 1}).realize();
  double conv = GlobalCounters::global_ops;
  Tensor q = ref::tensor(x).conv2d(tw1, {.padding = 1}).relu();
  Tensor y = q.conv2d(tw2, {.padding = 1}) + q;
  GlobalCounters::reset();
  // x padded, conv + relu, the activation's padded copy, conv + add
  EXPECT_EQ(kernels_to_realize(y), 4);
  EXPECT_LT(GlobalCounters::global_ops, 2.2 * conv);
  auto conv3x3 = [](const NDArray& in, const NDArray& w, auto f) {  // naive, padding 1
    return ref::generate({1, 4, 6, 6}, [&](int64_t i) {
      int64_t co = i / 36, oy = i / 6 % 6, ox = i % 6;
      double acc = 0;
      for (int64_t ci = 0; ci < 4; ci++)
        for (int64_t ky = 0; ky < 3; ky++)
          for (int64_t kx = 0; kx < 3; kx++) {
            int64_t iy = oy + ky - 1, ix = ox + kx - 1;
            if (iy < 0 || iy >= 6 || ix < 0 || ix >= 6) continue;
            acc += f(in.v[static_cast<size_t>((ci * 6 + iy) * 6 + ix)]) *
                   w.v[static_cast<size_t>(((co * 4 + ci) * 3 + ky) * 3 + kx)];
          }
      return acc;
    });
  };
  NDArray relu_q = conv3x3(x, w1, [](double v) { return v; });
  for (double& v : relu_q.v) v = std::max(v, 0.0);
  NDArray want = conv3x3(relu_q, w2, [](double v) { return v; });
  for (size_t i = 0; i < want.v.size(); i++) want.v[i] += relu_q.v[i];
  ref::expect_close(y, want, 1e-4, 1e-4, "conv(relu(conv(x))) + relu(conv(x))");
}

}  // namespace

namespace {

// A conv of a computed activation (relu of a conv, no padding) reads its input's windows in place
// from the activation's buffer: no kernel writes the windows, which are k*k times larger. (The
// scheduler once judged the windows by a stale count of work kept for a freed node whose address
// a buffer reused, and copied them out: 655 MB in the MNIST convnet's first step.)
TEST(Fusion, AConvOfAComputedActivationReadsItsWindowsInPlace) {
  constexpr int64_t c = 32;  // enough weight to copy into blocks (schedule/layout.h) first
  NDArray x = ref::random({3, 1, 12, 12}, 51), w1 = ref::random({c, 1, 5, 5}, 52),
          w2 = ref::random({c, c, 5, 5}, 53);
  auto y = [&] { return ref::tensor(x).conv2d(ref::tensor(w1)).relu().conv2d(ref::tensor(w2)); };
  std::vector<int64_t> sizes;
  for (const auto& item : tc::schedule::create_schedule({y().uop()}))
    sizes.push_back(item.bufs[0]->arg_ints()[1]);
  // w1 in blocks, conv + relu, w2 in blocks, the output (the windows would be 3*c*5*4*5*4)
  EXPECT_EQ(sizes, (std::vector<int64_t>{c * 5 * 5, 3 * c * 8 * 8, c * 5 * 5 * c, 3 * c * 4 * 4}));
  auto conv = [](const NDArray& in, const NDArray& w, int64_t cin, int64_t size) {
    int64_t o = size - 4;  // 5x5, no padding
    return ref::generate({3, c, o, o}, [&, cin, size, o](int64_t i) {
      int64_t b = i / (c * o * o), co = i / (o * o) % c, oy = i / o % o, ox = i % o;
      double acc = 0;
      for (int64_t ci = 0; ci < cin; ci++)
        for (int64_t ky = 0; ky < 5; ky++)
          for (int64_t kx = 0; kx < 5; kx++)
            acc += in.v[static_cast<size_t>(((b * cin + ci) * size + oy + ky) * size + ox + kx)] *
                   w.v[static_cast<size_t>(((co * cin + ci) * 5 + ky) * 5 + kx)];
      return acc;
    });
  };
  NDArray act = conv(x, w1, 1, 12);
  for (double& v : act.v) v = std::max(v, 0.0);
  ref::expect_close(y(), conv(act, w2, c, 8), 1e-4, 1e-4, "conv(relu(conv(x)))");
}

}  // namespace
