// The layouts the scheduler chooses for the products' operands (schedule/layout.h): which reduces
// the rule table reads from a copy and in which layout, the kernels that makes, and the values
// against naive double loops.
#include "tinycore/schedule/layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tinycore/engine/realize.h"
#include "tinycore/tensor.h"

namespace tc {
namespace {

std::vector<float> ramp(int64_t n, int64_t seed) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; i++)
    v[i] = static_cast<float>((i * 37 + seed * 11) % 101) / 50.0f - 1.0f;
  return v;
}

Tensor realized(const std::vector<float>& v, const Shape& s) { return Tensor(v, s).realize(); }

// The shapes of the copies the rule table puts under the reduces of `t`'s graph.
std::vector<Shape> copies(const Tensor& t) {
  std::vector<Shape> out;
  for (const UOp* r : t.uop()->toposort()) {
    if (r->op != Ops::REDUCE_AXIS) continue;
    UOpRef laid = schedule::choose_layouts().rewrite(r->ref());
    if (!laid) continue;
    for (const UOp* u : laid->toposort())
      if (u->op == Ops::CONTIGUOUS) out.push_back(u->shape());
  }
  return out;
}

int64_t kernels_to_realize(Tensor t) {
  engine::GlobalCounters::reset();
  t.realize();
  return engine::GlobalCounters::kernel_count;
}

// a (m, k) @ b (k, n), in doubles.
std::vector<double> naive_matmul(const std::vector<float>& a, const std::vector<float>& b,
                                 int64_t m, int64_t k, int64_t n) {
  std::vector<double> c(m * n, 0.0);
  for (int64_t i = 0; i < m; i++)
    for (int64_t l = 0; l < k; l++)
      for (int64_t j = 0; j < n; j++) c[i * n + j] += double(a[i * k + l]) * b[l * n + j];
  return c;
}

void expect_values(const Tensor& t, const std::vector<double>& want, const char* what) {
  std::vector<float> got = t.data<float>();
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++)
    ASSERT_NEAR(got[i], want[i], 1e-4 * std::max(1.0, std::abs(want[i]))) << what << " at " << i;
}

TEST(Layout, LargeProductsReadBlockedColumns) {
  // 96 rows, k 80, n 128: w is copied in 4 panels of 32 columns, (4, 80, 32), then one product
  std::vector<float> a = ramp(96 * 80, 1), b = ramp(80 * 128, 2);
  Tensor y = realized(a, {96, 80}).dot(realized(b, {80, 128}));
  EXPECT_EQ(copies(y), (std::vector<Shape>{{4, 80, 32}}));
  EXPECT_EQ(kernels_to_realize(y), 2);
  expect_values(y, naive_matmul(a, b, 96, 80, 128), "96x80 @ 80x128");
}

TEST(Layout, SmallProductsReadTheirOperandsAsTheyAre) {
  // fewer than 64 rows, or n not a multiple of 32: one kernel, no copy
  std::vector<float> a = ramp(32 * 80, 3), b = ramp(80 * 128, 4), c = ramp(80 * 100, 5);
  Tensor y = realized(a, {32, 80}).dot(realized(b, {80, 128}));
  EXPECT_EQ(copies(y), std::vector<Shape>{});
  EXPECT_EQ(kernels_to_realize(y), 1);
  expect_values(y, naive_matmul(a, b, 32, 80, 128), "32x80 @ 80x128");
  EXPECT_EQ(copies(realized(ramp(96 * 80, 6), {96, 80}).dot(realized(c, {80, 100}))),
            std::vector<Shape>{});
}

TEST(Layout, GradientsAreProductsToo) {
  // y = x.dot(w), x (96, 64), w (64, 128), loss sum(y * c): dx = c.dot(wᵀ) reads wᵀ (128, 64) in
  // 2 panels of 32 columns, dw = xᵀ.dot(c) reads c (96, 128) in 4 and xᵀ (64, 96), a transpose,
  // in 2 panels of 32 rows
  std::vector<float> a = ramp(96 * 64, 7), b = ramp(64 * 128, 8), cv = ramp(96 * 128, 9);
  Tensor x = realized(a, {96, 64}).requires_grad_(), w = realized(b, {64, 128}).requires_grad_();
  Tensor c = realized(cv, {96, 128});
  x.dot(w).mul(c).sum().backward();
  EXPECT_EQ(copies(*x.grad()), (std::vector<Shape>{{2, 128, 32}}));
  EXPECT_EQ(copies(*w.grad()), (std::vector<Shape>{{2, 96, 32}, {4, 96, 32}}));
  std::vector<float> bt(128 * 64), at(64 * 96);
  for (int64_t i = 0; i < 64; i++)
    for (int64_t j = 0; j < 128; j++) bt[j * 64 + i] = b[i * 128 + j];
  for (int64_t i = 0; i < 96; i++)
    for (int64_t j = 0; j < 64; j++) at[j * 96 + i] = a[i * 64 + j];
  expect_values(*x.grad(), naive_matmul(cv, bt, 96, 128, 64), "dx");
  expect_values(*w.grad(), naive_matmul(at, cv, 64, 96, 128), "dw");
}

// conv2d of x (bs, cin, h, w) with weights (cout, cin, 3, 3), no padding, stride 1, in doubles.
std::vector<double> naive_conv(const std::vector<float>& x, const std::vector<float>& w, int64_t bs,
                               int64_t cin, int64_t hw, int64_t cout) {
  int64_t o = hw - 2;
  std::vector<double> y(bs * cout * o * o, 0.0);
  for (int64_t b = 0; b < bs; b++)
    for (int64_t oc = 0; oc < cout; oc++)
      for (int64_t c = 0; c < cin; c++)
        for (int64_t i = 0; i < o; i++)
          for (int64_t j = 0; j < o; j++)
            for (int64_t ky = 0; ky < 3; ky++)
              for (int64_t kx = 0; kx < 3; kx++)
                y[((b * cout + oc) * o + i) * o + j] +=
                    double(x[((b * cin + c) * hw + i + ky) * hw + j + kx]) *
                    w[((oc * cin + c) * 3 + ky) * 3 + kx];
  return y;
}

TEST(Layout, ConvWeightsInBlocksOfOutputChannels) {
  // 64 output channels: the weight copied in blocks of 32, (2, 8, 3, 3, 32); 48 (not a multiple
  // of 32): output channels last, (8, 3, 3, 48); 4 (fewer than 8): no copy
  std::vector<float> xv = ramp(2 * 8 * 10 * 10, 10), wv = ramp(64 * 8 * 3 * 3, 11);
  Tensor x = realized(xv, {2, 8, 10, 10});
  Tensor y = x.conv2d(realized(wv, {64, 8, 3, 3}));
  EXPECT_EQ(copies(y), (std::vector<Shape>{{2, 8, 3, 3, 32}}));
  expect_values(y, naive_conv(xv, wv, 2, 8, 10, 64), "conv2d, 64 output channels");
  EXPECT_EQ(copies(x.conv2d(realized(ramp(48 * 72, 12), {48, 8, 3, 3}))),
            (std::vector<Shape>{{8, 3, 3, 48}}));
  EXPECT_EQ(copies(x.conv2d(realized(ramp(4 * 72, 13), {4, 8, 3, 3}))), std::vector<Shape>{});
}

// A 1x1 conv with a stride (ResNet's downsample shortcut) reads the positions its windows take
// from a compact copy, (2, 8, 5, 5) of the (2, 8, 10, 10) input (in the windows' view); unstrided,
// or with a 3x3 window (overlapping windows read every position), it reads the input in place.
TEST(Layout, StridedPointwiseConvReadsACompactCopy) {
  std::vector<float> xv = ramp(2 * 8 * 10 * 10, 19), wv = ramp(64 * 8, 20);
  Tensor x = realized(xv, {2, 8, 10, 10}), w = realized(wv, {64, 8, 1, 1});
  Tensor y = x.conv2d(w, {.stride = 2});
  EXPECT_EQ(copies(y), (std::vector<Shape>{{2, 1, 8, 1, 5, 5, 1, 1}, {2, 8, 1, 1, 32}}));
  std::vector<double> want(2 * 64 * 5 * 5, 0.0);
  for (int64_t b = 0; b < 2; b++)
    for (int64_t o = 0; o < 64; o++)
      for (int64_t c = 0; c < 8; c++)
        for (int64_t i = 0; i < 25; i++)
          want[(b * 64 + o) * 25 + i] +=
              double(xv[((b * 8 + c) * 10 + i / 5 * 2) * 10 + i % 5 * 2]) * wv[o * 8 + c];
  expect_values(y, want, "1x1 conv, stride 2");
  EXPECT_EQ(copies(x.conv2d(w)).size(), 1u);
  EXPECT_EQ(copies(x.conv2d(realized(ramp(64 * 72, 21), {64, 8, 3, 3}), {.stride = 2})).size(), 1u);
}

// dw[o][c][ky][kx] of a 3x3 conv without padding: the sum of g[b][o] times x's windows, in doubles.
std::vector<double> naive_conv_weight_gradient(const std::vector<float>& x,
                                               const std::vector<float>& g, int64_t bs, int64_t cin,
                                               int64_t hw, int64_t cout) {
  int64_t o = hw - 2;
  std::vector<double> dw(cout * cin * 9, 0.0);
  for (int64_t b = 0; b < bs; b++)
    for (int64_t oc = 0; oc < cout; oc++)
      for (int64_t ch = 0; ch < cin; ch++)
        for (int64_t k = 0; k < 9; k++)
          for (int64_t i = 0; i < o; i++)
            for (int64_t j = 0; j < o; j++)
              dw[(oc * cin + ch) * 9 + k] += double(g[((b * cout + oc) * o + i) * o + j]) *
                                             x[((b * cin + ch) * hw + i + k / 3) * hw + j + k % 3];
  return dw;
}

TEST(Layout, ConvWeightGradientReadsItsLaneChannelsInBlocksOrChannelsLast) {
  // 8 input channels on the lanes: the input copied channels-last, (2, 10, 10, 8); 64: in blocks
  // of 32 channels, (2, 2, 10, 10, 32); 3 input channels and 16 output channels: the output
  // channels on the lanes, the gradient copied channels-last, (2, 8, 8, 16)
  std::vector<float> cv = ramp(2 * 16 * 8 * 8, 16);
  Tensor c = realized(cv, {2, 16, 8, 8});
  for (auto [cin, copy] :
       {std::pair<int64_t, Shape>{8, {2, 10, 10, 8}}, {64, {2, 2, 10, 10, 32}}}) {
    std::vector<float> xv = ramp(2 * cin * 10 * 10, 14), wv = ramp(16 * cin * 9, 15);
    Tensor w = realized(wv, {16, cin, 3, 3}).requires_grad_();
    realized(xv, {2, cin, 10, 10}).conv2d(w).mul(c).sum().backward();
    EXPECT_EQ(copies(*w.grad()), (std::vector<Shape>{copy})) << cin << " input channels";
    expect_values(*w.grad(), naive_conv_weight_gradient(xv, cv, 2, cin, 10, 16),
                  "conv2d weight gradient");
  }
  Tensor w3 = realized(ramp(16 * 3 * 9, 17), {16, 3, 3, 3}).requires_grad_();
  realized(ramp(2 * 3 * 10 * 10, 18), {2, 3, 10, 10}).conv2d(w3).mul(c).sum().backward();
  EXPECT_EQ(copies(*w3.grad()), (std::vector<Shape>{{2, 8, 8, 16}}));
}

}  // namespace
}  // namespace tc
