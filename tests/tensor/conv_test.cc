// Pools, convolutions, transposed convolutions and interpolate: against PyTorch fixtures
// (tests/fixtures/gen_conv.py: values and the gradients of sum(out * g)), against naive
// double-precision loops written here, and gradients by central differences in float64.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tests/tensor/fixture.h"
#include "tests/tensor/gradcheck.h"
#include "tests/tensor/reference.h"
#include "tinycore/engine/realize.h"
#include "tinycore/tensor.h"

namespace {

using tc::Tensor;
using tcref::NDArray;
using ::testing::HasSubstr;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// Tolerances (float32 against PyTorch's float32): values and gradients.
constexpr double kRtol = 1e-4, kAtol = 1e-5;

// Runs f on the fixture case's `inputs` (float32), compares "out" and, for every input whose
// gradient flows, d sum(out * g) / d input against "grad_<input>".
void check_fixture(const std::string& name, const std::vector<std::string>& inputs, const Fn& f,
                   double rtol = kRtol, double atol = kAtol) {
  SCOPED_TRACE(name);
  const tcfix::Case& c = tcfix::fixture("conv", name);
  std::vector<Tensor> xs;
  for (const std::string& in : inputs) xs.push_back(c[in].tensor());
  Tensor out = f(xs);
  EXPECT_EQ(out.dtype(), tc::dtypes::float32);
  tcfix::expect_matches(out, c["out"], rtol, atol);
  Tensor loss = out.mul(c["g"].tensor()).sum();
  std::vector<Tensor> grads = loss.gradient(xs);
  for (size_t k = 0; k < inputs.size(); k++)
    tcfix::expect_matches(grads[k], c["grad_" + inputs[k]], rtol, atol);
}

template <typename F>
void expect_error(F&& f, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << "expected a tc::Error containing \"" << what << "\"";
  } catch (const tc::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(what));
  }
}

// ---------------------------------------------------------------- naive references (2-D)

// Direct convolution: x (n, groups*cin, h, w), wt (cout, cin, kh, kw); pads (before, after) for
// h and w.
NDArray conv_ref(const NDArray& x, const NDArray& wt, const NDArray* bias, int64_t groups,
                 std::pair<int64_t, int64_t> stride, std::pair<int64_t, int64_t> dil,
                 const Pairs& pads) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  int64_t cout = wt.shape[0], cin = wt.shape[1], kh = wt.shape[2], kw = wt.shape[3];
  EXPECT_EQ(c, cin * groups);
  int64_t oh = (h + pads[0].first + pads[0].second - dil.first * (kh - 1) - 1) / stride.first + 1;
  int64_t ow = (w + pads[1].first + pads[1].second - dil.second * (kw - 1) - 1) / stride.second + 1;
  int64_t rcout = cout / groups;
  NDArray out({n, cout, oh, ow}, std::vector<double>(n * cout * oh * ow, 0.0));
  for (int64_t b = 0; b < n; b++)
    for (int64_t o = 0; o < cout; o++)
      for (int64_t y = 0; y < oh; y++)
        for (int64_t xx = 0; xx < ow; xx++) {
          double acc = bias ? bias->v[o] : 0.0;
          int64_t g = o / rcout;
          for (int64_t ci = 0; ci < cin; ci++)
            for (int64_t i = 0; i < kh; i++)
              for (int64_t j = 0; j < kw; j++) {
                int64_t iy = y * stride.first + i * dil.first - pads[0].first;
                int64_t ix = xx * stride.second + j * dil.second - pads[1].first;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                acc += x.at({b, g * cin + ci, iy, ix}) * wt.at({o, ci, i, j});
              }
          out.v[tcref::ravel({b, o, y, xx}, out.shape)] = acc;
        }
  return out;
}

// Transposed convolution by scattering: x (n, cin, h, w), wt (cin, cout/groups, kh, kw).
NDArray conv_transpose_ref(const NDArray& x, const NDArray& wt, int64_t groups,
                           std::pair<int64_t, int64_t> stride, std::pair<int64_t, int64_t> dil,
                           std::pair<int64_t, int64_t> pad, std::pair<int64_t, int64_t> out_pad) {
  int64_t n = x.shape[0], cin = x.shape[1], h = x.shape[2], w = x.shape[3];
  int64_t rcout = wt.shape[1], kh = wt.shape[2], kw = wt.shape[3], gcin = cin / groups;
  int64_t oh = (h - 1) * stride.first - 2 * pad.first + dil.first * (kh - 1) + out_pad.first + 1;
  int64_t ow =
      (w - 1) * stride.second - 2 * pad.second + dil.second * (kw - 1) + out_pad.second + 1;
  NDArray out({n, rcout * groups, oh, ow}, std::vector<double>(n * rcout * groups * oh * ow, 0.0));
  for (int64_t b = 0; b < n; b++)
    for (int64_t ci = 0; ci < cin; ci++)
      for (int64_t y = 0; y < h; y++)
        for (int64_t xx = 0; xx < w; xx++)
          for (int64_t r = 0; r < rcout; r++)
            for (int64_t i = 0; i < kh; i++)
              for (int64_t j = 0; j < kw; j++) {
                int64_t oy = y * stride.first + i * dil.first - pad.first;
                int64_t ox = xx * stride.second + j * dil.second - pad.second;
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                int64_t o = (ci / gcin) * rcout + r;
                out.v[tcref::ravel({b, o, oy, ox}, out.shape)] +=
                    x.at({b, ci, y, xx}) * wt.at({ci, r, i, j});
              }
  return out;
}

struct PoolRef {
  NDArray avg_incl, avg_excl, max, argmax;
};

// Pooling of the last two axes of x (n, c, h, w), without ceil_mode: average counting the
// padding, average without it, max and its flat per-plane index (first maximum).
PoolRef pool_ref(const NDArray& x, std::pair<int64_t, int64_t> k, std::pair<int64_t, int64_t> s,
                 std::pair<int64_t, int64_t> d, const Pairs& pads) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  int64_t oh = (h + pads[0].first + pads[0].second - d.first * (k.first - 1) - 1) / s.first + 1;
  int64_t ow = (w + pads[1].first + pads[1].second - d.second * (k.second - 1) - 1) / s.second + 1;
  tcref::Shape os = {n, c, oh, ow};
  std::vector<double> zero(n * c * oh * ow, 0.0);
  PoolRef r{NDArray(os, zero), NDArray(os, zero), NDArray(os, zero), NDArray(os, zero)};
  for (int64_t b = 0; b < n; b++)
    for (int64_t ch = 0; ch < c; ch++)
      for (int64_t y = 0; y < oh; y++)
        for (int64_t xx = 0; xx < ow; xx++) {
          double sum = 0, best = -std::numeric_limits<double>::infinity();
          int64_t inside = 0, all = 0, arg = -1;
          for (int64_t i = 0; i < k.first; i++)
            for (int64_t j = 0; j < k.second; j++) {
              int64_t iy = y * s.first + i * d.first - pads[0].first;
              int64_t ix = xx * s.second + j * d.second - pads[1].first;
              all++;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              double v = x.at({b, ch, iy, ix});
              sum += v;
              inside++;
              if (v > best) best = v, arg = iy * w + ix;
            }
          int64_t at = tcref::ravel({b, ch, y, xx}, os);
          r.avg_incl.v[at] = sum / static_cast<double>(all);
          r.avg_excl.v[at] = sum / static_cast<double>(inside);
          r.max.v[at] = best;
          r.argmax.v[at] = static_cast<double>(arg);
        }
  return r;
}

// ---------------------------------------------------------------- pool()

TEST(Pool, WindowsAreViewsOfTheInput) {
  // both of tinygrad's paths: kernel <= stride (pad + reshape) and kernel > stride / dilation
  // (repeat + shrink); every window element against direct indexing
  NDArray a = tcref::random({2, 3, 7}, 1);
  Tensor x = tcref::tensor(a, tc::dtypes::float64);
  struct Case {
    int64_t k, s, d;
  };
  for (Case cs : {Case{2, 3, 1}, Case{3, 2, 1}, Case{2, 2, 2}, Case{3, 1, 3}}) {
    SCOPED_TRACE("k=" + std::to_string(cs.k) + " s=" + std::to_string(cs.s) +
                 " d=" + std::to_string(cs.d));
    Tensor p = x.pool(tc::IntTuple{cs.k}, cs.s, cs.d);
    int64_t o = (7 - cs.d * (cs.k - 1) + cs.s - 1) / cs.s;
    NDArray want({2, 3, o, cs.k}, std::vector<double>(2 * 3 * o * cs.k));
    for (int64_t i = 0; i < want.size(); i++) {
      std::vector<int64_t> idx = tcref::unravel(i, want.shape);
      want.v[i] = a.at({idx[0], idx[1], idx[2] * cs.s + idx[3] * cs.d});
    }
    tcref::expect_close(p, want, 0, 0);
  }
}

// ---------------------------------------------------------------- conv2d

TEST(Conv2d, MatchesTorch) {
  auto b3 = [](const std::vector<Tensor>& v) { return v[0].conv2d(v[1], v[2]); };
  check_fixture("conv2d_basic", {"x", "w", "b"}, b3);
  check_fixture("conv2d_stride_pad", {"x", "w", "b"}, [](const std::vector<Tensor>& v) {
    return v[0].conv2d(v[1], v[2], {.stride = {2, 1}, .padding = {1, 2}});
  });
  check_fixture("conv2d_groups_dilation", {"x", "w"}, [](const std::vector<Tensor>& v) {
    return v[0].conv2d(v[1], {.groups = 2, .stride = 2, .dilation = {2, 1}, .padding = 1});
  });
  check_fixture("conv2d_depthwise", {"x", "w", "b"}, [](const std::vector<Tensor>& v) {
    return v[0].conv2d(v[1], v[2], {.groups = 3, .padding = 1});
  });
  // flat padding in PyTorch's order: (left, right, top, bottom)
  check_fixture("conv2d_flat_pad", {"x", "w"}, [](const std::vector<Tensor>& v) {
    return v[0].conv2d(v[1], {.padding = {1, 0, 2, 1}});
  });
  check_fixture("conv2d_3x3", {"x", "w", "b"}, [](const std::vector<Tensor>& v) {
    return v[0].conv2d(v[1], v[2], {.groups = 2, .padding = 1});
  });
}

TEST(Conv2d, OneAndThreeSpatialDimensions) {
  check_fixture("conv1d", {"x", "w", "b"}, [](const std::vector<Tensor>& v) {
    return v[0].conv2d(v[1], v[2], {.stride = 2, .dilation = 2, .padding = 1});
  });
  check_fixture("conv3d", {"x", "w"}, [](const std::vector<Tensor>& v) {
    return v[0].conv2d(v[1], {.stride = {1, 2, 1}, .padding = 1});
  });
}

TEST(Conv2d, NonContiguousInputsAgainstNaiveLoops) {
  // x is a permuted view, w a flipped one; batch 2, groups 2, a 3x2 kernel, stride and
  // dilation and asymmetric padding all at once; float64 against double loops
  NDArray xs = tcref::random({2, 6, 7, 4}, 2);  // (n, h, w, c)
  NDArray ws = tcref::random({4, 2, 3, 2}, 3);
  NDArray bs = tcref::random({4}, 4);
  Tensor x = tcref::tensor(xs, tc::dtypes::float64).permute({0, 3, 1, 2});  // (2, 4, 6, 7)
  Tensor w = tcref::tensor(ws, tc::dtypes::float64).flip({3});
  NDArray xr = tcref::permute(xs, {0, 3, 1, 2}), wr = tcref::flip(ws, {3});
  Tensor y = x.conv2d(w, tcref::tensor(bs, tc::dtypes::float64),
                      {.groups = 2, .stride = {2, 1}, .dilation = {1, 2}, .padding = {2, 1, 1, 0}});
  EXPECT_EQ(y.dtype(), tc::dtypes::float64);
  tcref::expect_close(y, conv_ref(xr, wr, &bs, 2, {2, 1}, {1, 2}, {{1, 0}, {2, 1}}), 1e-12);
}

TEST(Conv2d, OutputChannelLanesAgainstNaiveLoops) {
  // 8 or more output channels per group: the weight is copied output-channels-last (in blocks
  // of 32 when they divide the channels per group: 32 and 64 here) and the kernel's lanes go on
  // cout, storing them scattered; 7x7 and strided outputs, whose positions take no lanes, tile 7
  // rows or a non-power-of-two count; float32 against double loops
  struct Case {
    tc::Shape x, w;
    int64_t groups, stride;
  };
  for (const Case& c :
       {Case{{1, 5, 7, 7}, {32, 5, 3, 3}, 1, 1}, Case{{2, 6, 13, 11}, {32, 3, 3, 3}, 2, 2},
        Case{{1, 3, 20, 20}, {16, 3, 7, 7}, 1, 2}, Case{{1, 4, 6, 6}, {64, 4, 3, 3}, 1, 1}}) {
    NDArray xs = tcref::random(c.x, 21), ws = tcref::random(c.w, 22),
            bs = tcref::random({c.w[0]}, 23);
    int64_t pad = c.w[2] / 2;
    Tensor y = tcref::tensor(xs).conv2d(tcref::tensor(ws), tcref::tensor(bs),
                                        {.groups = c.groups, .stride = c.stride, .padding = pad});
    tcref::expect_close(
        y, conv_ref(xs, ws, &bs, c.groups, {c.stride, c.stride}, {1, 1}, {{pad, pad}, {pad, pad}}),
        1e-4, 1e-4, "conv of weights " + tc::fmt_shape(c.w));
  }
}

TEST(Conv2d, IntegerInputsStayExact) {
  NDArray xs = tcref::random_int({1, 2, 5, 5}, 5, -4, 4),
          ws = tcref::random_int({3, 2, 2, 3}, 6, -3, 3);
  Tensor y = tcref::tensor(xs, tc::dtypes::int32)
                 .conv2d(tcref::tensor(ws, tc::dtypes::int32), {.padding = 1});
  EXPECT_EQ(y.dtype(), tc::dtypes::int32);
  tcref::expect_exact(y, conv_ref(xs, ws, nullptr, 1, {1, 1}, {1, 1}, {{1, 1}, {1, 1}}));
}

TEST(Conv2d, AccumulationDtype) {
  // float32 products summed (and returned) in float64, as tinygrad's sum(dtype=)
  NDArray xs = tcref::random({1, 2, 4, 4}, 18), ws = tcref::random({2, 2, 3, 3}, 19);
  Tensor y =
      tcref::tensor(xs).conv2d(tcref::tensor(ws), {.padding = 1, .dtype = tc::dtypes::float64});
  EXPECT_EQ(y.dtype(), tc::dtypes::float64);
  tcref::expect_close(y, conv_ref(xs, ws, nullptr, 1, {1, 1}, {1, 1}, {{1, 1}, {1, 1}}), 1e-6);
}

TEST(Conv2d, AutocastConvolvesInTheNarrowDtype) {
  // as matmul under Autocast: float32 input and weight rounded to float16, float32 sums, a
  // float16 result (float32 again once a float32 bias is added); float32 weight gradients
  NDArray xs = tcref::random({2, 3, 6, 6}, 41, -1, 1), ws = tcref::random({8, 3, 3, 3}, 42, -1, 1);
  Tensor x = tcref::tensor(xs), w = tcref::tensor(ws).requires_grad_();
  tc::DType half = tc::dtypes::float16;
  Tensor::Autocast narrow(half);
  Tensor y = x.conv2d(w, {.padding = 1});
  EXPECT_EQ(y.dtype(), half);
  tcref::expect_close(y,
                      conv_ref(tcref::represent(xs, half), tcref::represent(ws, half), nullptr, 1,
                               {1, 1}, {1, 1}, {{1, 1}, {1, 1}}),
                      2 * 0x1p-11, 8 * 0x1p-11);
  EXPECT_EQ(x.conv2d(w, Tensor::zeros({8}), {.padding = 1}).dtype(), tc::dtypes::float32);
  y.float_().sum().backward();
  ASSERT_TRUE(w.grad());
  EXPECT_EQ(w.grad()->dtype(), tc::dtypes::float32);
}

TEST(Conv2d, GradientsByCentralDifferences) {
  tcgrad::check_grad(
      [](const std::vector<Tensor>& v) {
        return v[0].conv2d(v[1], v[2],
                           {.groups = 2, .stride = {2, 1}, .dilation = {1, 2}, .padding = 1});
      },
      {{{1, 2, 4, 5}, tcgrad::mixed(40)},
       {{2, 1, 2, 2}, tcgrad::ramp(8, -0.7, 0.23)},
       {{2}, {0.3, -0.4}}});
}

TEST(Conv2d, NegativePaddingCropsTheInput) {
  // padding -1 drops the input's border (torch: conv2d of x[:, :, 1:-1, 1:-1]), also mixed with
  // a positive side; the input's gradient is zero where it was cut off
  NDArray xs = tcref::random({1, 2, 6, 5}, 61), ws = tcref::random({3, 2, 2, 2}, 62);
  Tensor x = tcref::tensor(xs), w = tcref::tensor(ws);
  tcref::expect_close(x.conv2d(w, {.padding = -1}),
                      conv_ref(xs, ws, nullptr, 1, {1, 1}, {1, 1}, {{-1, -1}, {-1, -1}}), 1e-5,
                      1e-5, "padding -1");
  tcref::expect_close(x.conv2d(w, {.padding = {-1, 1, 0, -2}}),
                      conv_ref(xs, ws, nullptr, 1, {1, 1}, {1, 1}, {{0, -2}, {-1, 1}}), 1e-5, 1e-5,
                      "padding (-1, 1, 0, -2)");
  for (const tc::IntTuple& padding : {tc::IntTuple(-1), tc::IntTuple{-1, 1, 0, -2}})
    tcgrad::check_grad(
        [padding](const std::vector<Tensor>& v) { return v[0].conv2d(v[1], {.padding = padding}); },
        {{{1, 2, 6, 5}, tcgrad::mixed(60)}, {{3, 2, 2, 2}, tcgrad::ramp(24, -0.7, 0.06)}});
}

TEST(Conv2d, AnInputWithASideOf0PaddedIntoAnOutputHasAnEmptyGradient) {
  // (the tensor fuzzer's find: padded by 1, a map of 0 x 3 gives 2 x 5 outputs, each window over
  // padding alone; the transposed conv that gives the input's gradient refused to make 0 x 3)
  Tensor x = Tensor::zeros({2, 3, 0, 3}).requires_grad_(),
         w = tcref::tensor(tcref::random({4, 3, 1, 1}, 63)).requires_grad_();
  Tensor y = x.conv2d(w, {.padding = 1});
  ASSERT_EQ(y.shape(), (tc::Shape{2, 4, 2, 5}));
  (y * tcref::tensor(tcref::random({2, 4, 2, 5}, 64))).sum().backward();
  EXPECT_EQ(x.grad()->shape(), (tc::Shape{2, 3, 0, 3}));
  EXPECT_EQ(x.grad()->data<float>().size(), 0u);
  for (float v : w.grad()->data<float>()) EXPECT_EQ(v, 0.0f);  // every product read padding
  for (float v : y.data<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(Conv2d, WeightGradientsOfBothLaneLayouts) {
  // the weight gradient puts its lanes on the input channels (8 of them here) or, with fewer
  // than 8 (2 here) and 8 or more output channels, on the output channels; strided and padded
  for (int64_t cin : {8, 2})
    tcgrad::check_grad(
        [](const std::vector<Tensor>& v) { return v[0].conv2d(v[1], {.stride = 2, .padding = 1}); },
        {{{2, cin, 5, 4}, tcgrad::mixed(2 * cin * 20)},
         {{8, cin, 3, 2}, tcgrad::ramp(8 * cin * 6, -0.7, 0.013)}});
}

int64_t kernels_for(const Tensor& t) {
  tc::engine::GlobalCounters::reset();
  Tensor(t).realize();
  return tc::engine::GlobalCounters::kernel_count;
}

TEST(Conv2d, ForwardIsOneKernelAfterItsCopies) {
  // the window view, the product with the weights, the reduce and the bias: one kernel (the
  // inputs are realized); the same for the pools. A padded input buffer
  // is first copied padded (so the windows read it without bounds checks), and with 8 or more
  // output channels per group the weight is copied output-channels-last.
  Tensor x = tcref::tensor(tcref::random({2, 4, 9, 8}, 7));
  Tensor w = tcref::tensor(tcref::random({6, 2, 3, 3}, 8));
  Tensor b = tcref::tensor(tcref::random({6}, 9));
  EXPECT_EQ(kernels_for(x.conv2d(w, b, {.groups = 2, .stride = 2})), 1);
  EXPECT_EQ(kernels_for(x.conv2d(w, b, {.groups = 2, .stride = 2, .padding = 1})), 2);
  Tensor wt = tcref::tensor(tcref::random({4, 3, 3, 3}, 10));
  // strided: a kernel per phase of the stride (4), the phases interleaved, a padded input copy
  EXPECT_EQ(kernels_for(x.conv_transpose2d(wt, {.stride = 2, .padding = 1})), 6);
  EXPECT_EQ(kernels_for(x.avg_pool2d({.kernel_size = 3, .stride = 2})), 1);
  EXPECT_EQ(kernels_for(x.max_pool2d({.kernel_size = 3, .stride = 2, .padding = 1})), 2);
  Tensor w16 = tcref::tensor(tcref::random({16, 4, 3, 3}, 11));
  EXPECT_EQ(kernels_for(x.conv2d(w16, {.stride = 2})), 2);
}

TEST(Conv2d, WinogradMatchesDirect) {
  // WINO=1: F(4x4, 3x3) tiles for 3x3, stride 1, dilation 1 (groups, bias, padding, sizes that
  // are not multiples of 4); float64 so that the comparison with the direct conv is tight
  NDArray xs = tcref::random({2, 4, 6, 7}, 10), ws = tcref::random({4, 2, 3, 3}, 11);
  NDArray bs = tcref::random({4}, 12);
  Tensor x = tcref::tensor(xs, tc::dtypes::float64), w = tcref::tensor(ws, tc::dtypes::float64);
  Tensor b = tcref::tensor(bs, tc::dtypes::float64);
  NDArray want = conv_ref(xs, ws, &bs, 2, {1, 1}, {1, 1}, {{1, 2}, {0, 1}});
  ::setenv("WINO", "1", 1);
  Tensor wino = x.conv2d(w, b, {.groups = 2, .padding = {0, 1, 1, 2}});
  // also in float32, with its gradients, against PyTorch
  check_fixture(
      "conv2d_3x3", {"x", "w", "b"},
      [](const std::vector<Tensor>& v) {
        return v[0].conv2d(v[1], v[2], {.groups = 2, .padding = 1});
      },
      1e-4, 5e-5);
  ::unsetenv("WINO");
  Tensor direct = x.conv2d(w, b, {.groups = 2, .padding = {0, 1, 1, 2}});
  tcref::expect_close(wino, want, 1e-10);
  tcref::expect_close(direct, want, 1e-12);
  // a winograd graph is not the direct one: the 6x6 tiles make it larger
  EXPECT_GT(wino.uop()->toposort().size(), direct.uop()->toposort().size());
}

TEST(Conv2d, WinogradGradients) {
  ::setenv("WINO", "1", 1);
  tcgrad::check_grad(
      [](const std::vector<Tensor>& v) { return v[0].conv2d(v[1], {.padding = 1}); },
      {{{1, 1, 3, 3}, tcgrad::mixed(9)}, {{1, 1, 3, 3}, tcgrad::ramp(9, -0.9, 0.2)}});
  ::unsetenv("WINO");
}

TEST(Conv2d, BadInputsThrow) {
  Tensor x = Tensor::zeros({1, 4, 5, 5}), w = Tensor::zeros({2, 2, 3, 3});
  expect_error([&] { x.conv2d(Tensor::zeros({2, 4, 3})); }, "must have the same rank");
  expect_error([&] { Tensor::zeros({4, 5}).conv2d(Tensor::zeros({2, 4})); }, "at least 3");
  expect_error([&] { x.conv2d(w); }, "groups (1) * weight channels (2) = 2, the input has 4");
  expect_error(
      [&] {
        x.conv2d(Tensor::zeros({3, 2, 3, 3}), {.groups = 2});
      },
      "not divisible by groups 2");
  expect_error([&] { x.conv2d(w, Tensor::zeros({3}), {.groups = 2}); }, "bias of shape (3,)");
  expect_error([&] { x.conv2d(Tensor::zeros({2, 4, 6, 3})); }, "larger than the (padded) input");
  expect_error(
      [&] {
        x.conv2d(Tensor::zeros({2, 4, 3, 3}), {.dilation = 3});
      },
      "larger than the (padded) input");
  expect_error(
      [&] {
        x.conv2d(w, {.groups = 2, .padding = {1, 2, 3}});
      },
      "padding (1, 2, 3) must be an int or have 2 or 4 entries");
  expect_error(
      [&] {
        x.conv2d(w, {.groups = 2, .stride = {1, 2, 3}});
      },
      "stride (1, 2, 3) must be an int or have 2 entries");
  expect_error([&] { x.conv2d(w, {.groups = 2, .stride = 0}); }, "must be positive");
  expect_error([&] { x.conv2d(w, {.groups = 0}); }, "groups must be positive");
}

// ---------------------------------------------------------------- conv_transpose2d

TEST(ConvTranspose2d, MatchesTorch) {
  check_fixture("convt2d_stride_outpad", {"x", "w", "b"}, [](const std::vector<Tensor>& v) {
    return v[0].conv_transpose2d(v[1], v[2], {.stride = 2, .padding = 1, .output_padding = 1});
  });
  check_fixture("convt2d_groups_dilation", {"x", "w"}, [](const std::vector<Tensor>& v) {
    return v[0].conv_transpose2d(
        v[1], {.groups = 2, .stride = {2, 3}, .dilation = {1, 2}, .padding = {0, 1}});
  });
  check_fixture("convt1d", {"x", "w"}, [](const std::vector<Tensor>& v) {
    return v[0].conv_transpose2d(v[1], {.stride = 3, .padding = 2, .output_padding = 1});
  });
  check_fixture("convt3d", {"x", "w", "b"}, [](const std::vector<Tensor>& v) {
    return v[0].conv_transpose2d(v[1], v[2], {.stride = {2, 1, 1}, .padding = {1, 0, 1}});
  });
}

TEST(ConvTranspose2d, NonContiguousAgainstNaiveScatter) {
  NDArray xs = tcref::random({2, 3, 4, 4}, 13);  // viewed as (2, 4, 3, 4)
  NDArray ws = tcref::random({4, 2, 2, 3}, 14);
  Tensor x = tcref::tensor(xs, tc::dtypes::float64).permute({0, 2, 1, 3});
  NDArray xr = tcref::permute(xs, {0, 2, 1, 3});
  Tensor y = x.conv_transpose2d(tcref::tensor(ws, tc::dtypes::float64), {.groups = 2,
                                                                         .stride = {3, 2},
                                                                         .dilation = {2, 1},
                                                                         .padding = {1, 0},
                                                                         .output_padding = {1, 1}});
  tcref::expect_close(y, conv_transpose_ref(xr, ws, 2, {3, 2}, {2, 1}, {1, 0}, {1, 1}), 1e-12);
}

TEST(ConvTranspose2d, StridedPhasesAgainstNaiveScatter) {
  // a strided transposed conv runs one stride-1 conv per phase of the stride (polyphase): phases
  // of different tap counts, pads that shift them, output padding, groups, and a 1x1 kernel whose
  // odd phases have no taps at all (they are zeros)
  NDArray xs = tcref::random({2, 4, 3, 5}, 15), ws = tcref::random({4, 3, 2, 3}, 16);
  Tensor x = tcref::tensor(xs, tc::dtypes::float64), w = tcref::tensor(ws, tc::dtypes::float64);
  tcref::expect_close(
      x.conv_transpose2d(
          w, {.groups = 2, .stride = {3, 2}, .padding = {2, 1}, .output_padding = {2, 1}}),
      conv_transpose_ref(xs, ws, 2, {3, 2}, {1, 1}, {2, 1}, {2, 1}), 1e-12);
  NDArray w1 = tcref::random({4, 5, 1, 1}, 17);
  tcref::expect_close(x.conv_transpose2d(tcref::tensor(w1, tc::dtypes::float64),
                                         {.stride = 2, .output_padding = 1}),
                      conv_transpose_ref(xs, w1, 1, {2, 2}, {1, 1}, {0, 0}, {1, 1}), 1e-12);
  // phases whose outputs all fall before the first (a 1x1 input under a 5x5 window, stride 4,
  // padding 2): cut by their pads, not cropped to nothing by their convs
  NDArray x1 = tcref::random({1, 2, 1, 1}, 18), w5 = tcref::random({2, 3, 5, 5}, 19);
  tcref::expect_close(
      tcref::tensor(x1, tc::dtypes::float64)
          .conv_transpose2d(tcref::tensor(w5, tc::dtypes::float64), {.stride = 4, .padding = 2}),
      conv_transpose_ref(x1, w5, 1, {4, 4}, {1, 1}, {2, 2}, {0, 0}), 1e-12);
}

TEST(ConvTranspose2d, GradientsByCentralDifferences) {
  tcgrad::check_grad(
      [](const std::vector<Tensor>& v) {
        return v[0].conv_transpose2d(v[1], v[2], {.stride = 2, .padding = 1, .output_padding = 1});
      },
      {{{1, 2, 2, 3}, tcgrad::mixed(12)},
       {{2, 1, 3, 2}, tcgrad::ramp(12, -1.1, 0.19)},
       {{1}, {0.25}}});
}

TEST(ConvTranspose2d, BadInputsThrow) {
  Tensor x = Tensor::zeros({1, 4, 3, 3});
  expect_error([&] { x.conv_transpose2d(Tensor::zeros({4, 2, 3})); }, "must have the same rank");
  expect_error([&] { x.conv_transpose2d(Tensor::zeros({2, 2, 3, 3})); }, "need 4 input channels");
  expect_error(
      [&] {
        x.conv_transpose2d(Tensor::zeros({4, 2, 3, 3}), {.groups = 3});
      },
      "divisible by groups 3");
  expect_error(
      [&] {
        x.conv_transpose2d(Tensor::zeros({4, 2, 3, 3}), {.output_padding = 1});
      },
      "output_padding (1, 1) must be smaller than stride");
  expect_error(
      [&] {
        x.conv_transpose2d(Tensor::zeros({4, 2, 3, 3}), {.padding = 3});
      },
      "leaves no output");
  expect_error(
      [&] {
        x.conv_transpose2d(Tensor::zeros({4, 2, 3, 3}), Tensor::zeros({3}), {.groups = 2});
      },
      "bias of shape (3,) does not match 4 output channels");
}

// ---------------------------------------------------------------- pools

TEST(AvgPool2d, MatchesTorch) {
  auto pool = [](tc::PoolOpts o) {
    return [o](const std::vector<Tensor>& v) { return v[0].avg_pool2d(o); };
  };
  check_fixture("avg_pool2d_pad", {"x"},
                pool({.kernel_size = {3, 2}, .stride = {2, 1}, .padding = 1}));
  check_fixture(
      "avg_pool2d_nopadcount", {"x"},
      pool({.kernel_size = {3, 2}, .stride = {2, 1}, .padding = 1, .count_include_pad = false}));
  check_fixture("avg_pool2d_ceil", {"x"},
                pool({.kernel_size = 3, .stride = 2, .padding = 1, .ceil_mode = true}));
  check_fixture("avg_pool2d_ceil_nopadcount", {"x"},
                pool({.kernel_size = 3,
                      .stride = 2,
                      .padding = 1,
                      .ceil_mode = true,
                      .count_include_pad = false}));
  check_fixture("avg_pool2d_default", {"x"}, pool({}));
  check_fixture("avg_pool1d", {"x"}, pool({.kernel_size = {3}, .stride = 2, .padding = 1}));
  check_fixture("avg_pool3d", {"x"}, pool({.kernel_size = {2, 3, 2}, .stride = {1, 2, 2}}));
}

TEST(MaxPool2d, MatchesTorchWithIndices) {
  struct Case {
    const char* name;
    tc::PoolOpts o;
  };
  std::vector<Case> cases = {
      {"max_pool2d_full",
       {.kernel_size = {3, 2}, .stride = {2, 1}, .dilation = {1, 2}, .padding = 1}},
      {"max_pool2d_ceil", {.kernel_size = 3, .stride = 2, .padding = 1, .ceil_mode = true}},
      {"max_pool2d_default", {}},
      {"max_pool1d", {.kernel_size = {3}, .stride = 2, .dilation = 2, .padding = 1}},
      {"max_pool3d", {.kernel_size = {2, 3, 2}, .stride = {1, 2, 2}, .padding = {0, 1, 1}}},
  };
  for (const Case& cs : cases) {
    tc::PoolOpts o = cs.o;
    check_fixture(
        cs.name, {"x"}, [o](const std::vector<Tensor>& v) { return v[0].max_pool2d(o); }, 0, 0);
    const tcfix::Case& c = tcfix::fixture("conv", cs.name);
    auto [values, indices] = c["x"].tensor().max_pool2d_with_indices(o);
    EXPECT_EQ(indices.dtype(), tc::dtypes::int32);
    tcfix::expect_matches(values, c["out"], 0, 0);
    tcfix::expect_matches(indices, c["indices"], 0, 0);
  }
}

TEST(Pools, NonContiguousAgainstNaiveLoops) {
  // dilation with avg pooling (PyTorch has none), a transposed input, batch 2
  NDArray xs = tcref::random({2, 3, 6, 7}, 15);
  Tensor x = tcref::tensor(xs, tc::dtypes::float64).transpose(2, 3);  // (2, 3, 7, 6)
  NDArray xr = tcref::transpose(xs, 2, 3);
  tc::PoolOpts o = {
      .kernel_size = {2, 3}, .stride = {2, 1}, .dilation = {2, 1}, .padding = {1, 1, 0, 1}};
  PoolRef r = pool_ref(xr, {2, 3}, {2, 1}, {2, 1}, {{0, 1}, {1, 1}});
  tcref::expect_close(x.avg_pool2d(o), r.avg_incl, 1e-12);
  o.count_include_pad = false;
  tcref::expect_close(x.avg_pool2d(o), r.avg_excl, 1e-12);
  tcref::expect_close(x.max_pool2d(o), r.max, 0, 0);
  tcref::expect_exact(x.max_pool2d_with_indices(o).second, r.argmax);
}

TEST(Pools, IntegerMaxPoolPadsWithTheLowestValue) {
  NDArray xs = tcref::random_int({1, 1, 4, 4}, 16, -100, -50);  // all negative: padding must lose
  Tensor y = tcref::tensor(xs, tc::dtypes::int32)
                 .max_pool2d({.kernel_size = 3, .stride = 2, .padding = 1});
  EXPECT_EQ(y.dtype(), tc::dtypes::int32);
  tcref::expect_exact(y, pool_ref(xs, {3, 3}, {2, 2}, {1, 1}, {{1, 1}, {1, 1}}).max);
  // avg of ints is float
  EXPECT_EQ(tcref::tensor(xs, tc::dtypes::int32).avg_pool2d().dtype(), tc::dtypes::float32);
}

TEST(Pools, GradientsByCentralDifferences) {
  std::vector<tcgrad::Input> in = {{{1, 2, 4, 5}, tcgrad::mixed(40)}};
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) {
                       return x.avg_pool2d({.kernel_size = {3, 2},
                                            .stride = 2,
                                            .padding = 1,
                                            .ceil_mode = true,
                                            .count_include_pad = false});
                     }),
                     in);
  tcgrad::check_grad(
      tcgrad::unary([](const Tensor& x) {
        return x.avg_pool2d({.kernel_size = 2, .stride = 1, .dilation = 2, .padding = 1});
      }),
      in);
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) {
                       return x.max_pool2d({.kernel_size = {2, 3}, .stride = {1, 2}, .padding = 1});
                     }),
                     in);
}

// max_pool2d's gradient (its own rule: per window offset, the windows' gradient spread back to
// what the offset read) against a naive loop: each window's gradient split evenly between its
// maxima, on inputs full of ties, with strides, dilation, padding and ceil mode.
TEST(Pools, MaxPoolGradientSplitsTiesAgainstNaiveLoops) {
  NDArray xs = tcref::random_int({2, 2, 7, 8}, 18, 0, 3), gs;
  std::vector<tc::PoolOpts> opts = {
      {.kernel_size = 3, .stride = 2, .padding = 1},
      {.kernel_size = {3, 2}, .stride = {2, 1}, .dilation = {1, 2}, .padding = 1},
      {.kernel_size = 3, .stride = 2, .padding = 1, .ceil_mode = true},
      {.kernel_size = 2}};
  for (const tc::PoolOpts& o : opts) {
    Tensor x = tcref::tensor(xs, tc::dtypes::float64);
    Tensor y = x.max_pool2d(o);
    const tc::Shape& ys = y.shape();
    gs = tcref::random({ys[0], ys[1], ys[2], ys[3]}, 19);
    std::vector<double> xv = xs.v, want(xs.v.size(), 0.0);
    int64_t kh = o.kernel_size.v[0], kw = o.kernel_size.v.back();
    int64_t sh = o.stride.v.empty() ? kh : o.stride.v[0],
            sw = o.stride.v.empty() ? kw : o.stride.v.back();
    int64_t dh = o.dilation.v[0], dw = o.dilation.v.back(), p = o.padding.v[0];
    for (int64_t nc = 0; nc < 4; nc++)
      for (int64_t oy = 0; oy < ys[2]; oy++)
        for (int64_t ox = 0; ox < ys[3]; ox++) {
          std::vector<int64_t> at;
          double best = -1e300;
          for (int64_t ky = 0; ky < kh; ky++)
            for (int64_t kx = 0; kx < kw; kx++) {
              int64_t iy = oy * sh - p + ky * dh, ix = ox * sw - p + kx * dw;
              if (iy < 0 || iy >= 7 || ix < 0 || ix >= 8) continue;
              int64_t i = (nc * 7 + iy) * 8 + ix;
              if (xv[i] > best) best = xv[i], at.clear();
              if (xv[i] == best) at.push_back(i);
            }
          for (int64_t i : at)
            want[i] += gs.v[(nc * ys[2] + oy) * ys[3] + ox] / static_cast<double>(at.size());
        }
    Tensor got = y.gradient({x}, tcref::tensor(gs, tc::dtypes::float64))[0];
    tcref::expect_close(got, NDArray(xs.shape, want), 1e-12);
  }
}

TEST(MaxUnpool2d, MatchesTorch) {
  check_fixture("max_unpool2d", {"v"}, [](const std::vector<Tensor>& v) {
    const tcfix::Case& c = tcfix::fixture("conv", "max_unpool2d");
    return v[0].max_unpool2d(c["idx"].tensor());
  });
  // overlapping windows (kernel 3, stride 2) send some elements to one place twice: the value is
  // written once, as PyTorch does (the gradient of such a duplicate is split between its two
  // sources, PyTorch gives each the whole: only the values are compared here)
  const tcfix::Case& c = tcfix::fixture("conv", "max_unpool2d_size");
  Tensor out = c["v"].tensor().max_unpool2d(
      c["idx"].tensor(tc::dtypes::int32),
      {.kernel_size = 3, .stride = 2, .padding = 1, .output_size = tc::Shape{5, 7}});
  tcfix::expect_matches(out, c["out"], 0, 0);
}

TEST(MaxUnpool2d, InvertsMaxPoolAndHasGradients) {
  NDArray xs = tcref::random({2, 3, 4, 6}, 17);
  Tensor x = tcref::tensor(xs);
  auto [v, idx] = x.max_pool2d_with_indices();
  Tensor back = v.max_unpool2d(idx);
  // the maxima back at their places, zeros elsewhere
  NDArray m = pool_ref(xs, {2, 2}, {2, 2}, {1, 1}, {{0, 0}, {0, 0}}).max;
  NDArray want(xs.shape, std::vector<double>(xs.v.size(), 0.0));
  for (double val : m.v)
    for (size_t i = 0; i < xs.v.size(); i++)
      if (xs.v[i] == val) want.v[i] = val;
  tcref::expect_close(back, want, 0, 0);
  std::vector<double> raw = idx.cast(tc::dtypes::float64).data<double>();
  tcgrad::check_grad(
      [raw](const std::vector<Tensor>& vals) {
        Tensor id = Tensor::from_vector<double>(raw, tc::Shape{2, 3, 2, 3}).cast(tc::dtypes::int32);
        return vals[0].max_unpool2d(id);
      },
      {{{2, 3, 2, 3}, tcgrad::mixed(36)}});
}

TEST(Pools, BadInputsThrow) {
  Tensor x = Tensor::zeros({1, 2, 4, 4});
  expect_error([&] { x.max_pool2d({.kernel_size = 5}); }, "larger than the (padded) input");
  expect_error([&] { x.avg_pool2d({.kernel_size = 3, .dilation = 2}); },
               "larger than the (padded) input");
  expect_error([&] { Tensor::zeros({4}).max_pool2d(); }, "needs at least 2 dimensions");
  expect_error([&] { x.avg_pool2d({.padding = {1, 2, 3}}); }, "padding (1, 2, 3)");
  expect_error(
      [&] {
        x.max_pool2d({.kernel_size = {2, 2}, .stride = {1, 1, 1}});
      },
      "stride (1, 1, 1) must be an int or have 2 entries");
  expect_error([&] { x.avg_pool2d({.kernel_size = 0}); }, "must be positive");
  expect_error(
      [&] {
        x.max_unpool2d(Tensor::zeros({1, 2, 4, 4}, tc::dtypes::int32).reshape({2, 1, 4, 4}));
      },
      "do not match");
  expect_error([&] { x.max_unpool2d(Tensor::zeros({1, 2, 4, 4})); }, "must be integers");
  expect_error(
      [&] {
        Tensor::zeros({2, 2}).max_unpool2d(Tensor::zeros({2, 2}, tc::dtypes::int32));
      },
      "needs (batch, channels, spatial...)");
}

// ---------------------------------------------------------------- interpolate

TEST(Interpolate, MatchesTorch) {
  auto interp = [](tc::Shape size, std::string mode, bool ac) {
    return [=](const std::vector<Tensor>& v) { return v[0].interpolate(size, mode, ac); };
  };
  check_fixture("interp_linear", {"x"}, interp({7}, "linear", false));
  check_fixture("interp_linear_ac", {"x"}, interp({7}, "linear", true));
  check_fixture("interp_bilinear", {"x"}, interp({5, 3}, "bilinear", false));
  check_fixture("interp_bilinear_ac", {"x"}, interp({5, 3}, "linear", true));
  check_fixture("interp_nearest", {"x"}, interp({7, 3}, "nearest", false));
  check_fixture("interp_nearest_exact", {"x"}, interp({7, 3}, "nearest-exact", false));
  check_fixture("interp_trilinear", {"x"}, interp({3, 2, 5}, "trilinear", false));
}

TEST(Interpolate, KeepsDtypeAndIgnoresInfElsewhere) {
  // a uint8 image upsampled keeps uint8: linear works in float, then truncates (tinygrad's cast)
  Tensor img = Tensor::from_vector<uint8_t>({0, 100, 200, 50}, tc::Shape{2, 2});
  Tensor up = img.interpolate({2, 4});
  EXPECT_EQ(up.dtype(), tc::dtypes::uint8);
  EXPECT_EQ(up.data<uint8_t>(), (std::vector<uint8_t>{0, 25, 75, 100, 200, 162, 87, 50}));
  // nearest never reads the other elements: an inf next door does not make NaN
  float inf = std::numeric_limits<float>::infinity();
  Tensor x = Tensor(std::vector<float>{1, inf, 3, 4});
  EXPECT_EQ(x.interpolate({2}, "nearest").data<float>(), (std::vector<float>{1, 3}));
}

TEST(Interpolate, GradientsByCentralDifferences) {
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) {
                       return x.interpolate({4, 3}, "linear", false);
                     }),
                     {{{1, 2, 3}, tcgrad::mixed(6)}});
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) {
                       return x.interpolate({3, 5}, "linear", true);
                     }),
                     {{{2, 2, 3}, tcgrad::mixed(12)}});
}

TEST(Interpolate, BadInputsThrow) {
  Tensor x = Tensor::zeros({1, 2, 4, 4});
  expect_error([&] { x.interpolate({4, 4}, "cubic"); }, "mode 'cubic' is not supported");
  expect_error([&] { x.interpolate({4}, "bilinear"); }, "bilinear needs 2 sizes");
  expect_error(
      [&] {
        x.interpolate({4, 4}, "nearest", true);
      },
      "align_corners can only be set with a linear mode");
  expect_error([&] { x.interpolate({}); }, "must have between 1 and 4 entries");
  expect_error([&] { x.interpolate({1, 1, 1, 1, 1}); }, "must have between 1 and 4 entries");
  expect_error([&] { x.interpolate({0, 3}); }, "must be positive");
}

}  // namespace

namespace {

// A conv's backward takes about twice its forward's work (the input's gradient is a transposed
// conv, the weight's a sum over batch and positions): no recomputation per window, and no sum
// over overlapping windows.
TEST(Conv2d, BackwardCostsAboutTwoForwards) {
  Tensor x = tcref::tensor(tcref::random({4, 8, 12, 12}, 51)).requires_grad_();
  Tensor w = tcref::tensor(tcref::random({8, 8, 5, 5}, 52)).requires_grad_();
  Tensor dy = tcref::tensor(tcref::random({4, 8, 8, 8}, 53));
  tc::engine::GlobalCounters::reset();
  Tensor(x.conv2d(w)).realize();  // the same node as below's: backward reads it, not recomputes
  double forward = tc::engine::GlobalCounters::global_ops;
  (x.conv2d(w).relu() * dy).sum().backward();
  tc::engine::GlobalCounters::reset();
  tc::realize_all({*x.grad(), *w.grad()});
  double backward = tc::engine::GlobalCounters::global_ops;
  EXPECT_GT(backward, 1.5 * forward);
  EXPECT_LT(backward, 5 * forward);  // input: a full conv of the padded gradient, plus relu
}

// A conv's input gradient computes the input's positions alone: a 3x3 conv's over a 4x4 map is 4x4
// outputs of 9 taps (not the 6x6 of the full transposed conv, cropped after), and a strided one's
// phases each compute only the positions they fill. Against a naive double scatter.
TEST(Conv2d, InputGradientComputesTheInputsPositionsAlone) {
  for (int64_t stride : {1, 2}) {
    const int64_t n = 2, c = 8, hw = 4 * stride, o = 4;
    NDArray xs = tcref::random({n, c, hw, hw}, 54), ws = tcref::random({c, c, 3, 3}, 55),
            dys = tcref::random({n, c, o, o}, 56);
    Tensor x = tcref::tensor(xs).requires_grad_(), w = tcref::tensor(ws);
    (x.conv2d(w, {.stride = stride, .padding = 1}) * tcref::tensor(dys)).sum().backward();
    tc::engine::GlobalCounters::reset();
    x.grad()->realize();
    double products = 2.0 * n * c * c * 9 * o * o;  // what the forward multiplies
    EXPECT_LT(tc::engine::GlobalCounters::global_ops, 1.25 * products) << "stride " << stride;
    NDArray dx = tcref::generate({n, c, hw, hw}, [](int64_t) { return 0.0; });
    for (int64_t b = 0; b < n; b++)
      for (int64_t co = 0; co < c; co++)
        for (int64_t ci = 0; ci < c; ci++)
          for (int64_t k = 0; k < 9; k++)
            for (int64_t oy = 0; oy < o; oy++)
              for (int64_t ox = 0; ox < o; ox++) {
                int64_t iy = oy * stride + k / 3 - 1, ix = ox * stride + k % 3 - 1;
                if (iy < 0 || iy >= hw || ix < 0 || ix >= hw) continue;
                dx.v[static_cast<size_t>(((b * c + ci) * hw + iy) * hw + ix)] +=
                    ws.v[static_cast<size_t>((co * c + ci) * 9 + k)] *
                    dys.v[static_cast<size_t>(((b * c + co) * o + oy) * o + ox)];
              }
    tcref::expect_close(*x.grad(), dx, 1e-4, 1e-4, "conv2d input gradient");
  }
}

}  // namespace
