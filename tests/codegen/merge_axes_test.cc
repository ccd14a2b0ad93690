// Merging a reduce's adjacent axes: merged where every access walks the two as one (a per-channel
// sum over feature maps), left alone where the merged loop would need a division (a read through
// a 2x upsample, a transposed view); results match a double-precision loop either way.
#include "tinycore/codegen/merge_axes.h"

#include <gtest/gtest.h>

#include "tests/codegen/random_values.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"

namespace tc::codegen {
namespace {

// The source shape of each REDUCE_AXIS in the kernel AST.
std::vector<Shape> reduce_inputs(const UOpRef& ast) {
  std::vector<Shape> out;
  for (const UOp* u : ast->toposort())
    if (u->op == Ops::REDUCE_AXIS) out.push_back(u->src[0]->shape());
  return out;
}

// The last kernel of `t`'s schedule (its reduce). Scheduling claims `t`'s graph: the values are
// computed from another tensor made the same way.
UOpRef last_kernel(const Tensor& t) { return schedule::create_schedule({t.uop()}).back().ast; }

TEST(MergeReduceAxes, PerChannelSumOverFeatureMapsIsOneLoopPerMap) {
  const int64_t N = 6, C = 4, H = 5, W = 7;
  std::vector<float> xv = random_values(N * C * H * W, 1), bv = random_values(C, 2);
  auto sums = [&] {
    Tensor x(xv, Shape{N, C, H, W}), b(bv, Shape{1, C, 1, 1});
    return (x + b).relu().sum({0, 2, 3});
  };
  // H and W are one axis of 35; N stays apart (C lies between)
  EXPECT_EQ(reduce_inputs(merge_reduce_axes(last_kernel(sums()))),
            (std::vector<Shape>{Shape{N, C, H * W}}));
  std::vector<float> got = sums().data<float>();
  for (int64_t c = 0; c < C; c++) {
    double want = 0;
    for (int64_t n = 0; n < N; n++)
      for (int64_t i = 0; i < H * W; i++)
        want += std::max(0.0, static_cast<double>(xv[(n * C + c) * H * W + i]) + bv[c]);
    EXPECT_NEAR(got[c], want, 1e-4) << "channel " << c;
  }
}

TEST(MergeReduceAxes, AReadThroughAnUpsampleKeepsItsAxes) {
  const int64_t C = 3, H = 4, W = 6;
  std::vector<float> xv = random_values(C * H * W, 3), gv = random_values(C * 2 * H * 2 * W, 4);
  auto sums = [&] {
    Tensor x(xv, Shape{C, H, 1, W, 1});
    // each element repeated 2x2, as a max pool's gradient is spread back
    Tensor up = x.expand({C, H, 2, W, 2}).reshape({C, 2 * H, 2 * W});
    return (up * Tensor(gv, Shape{C, 2 * H, 2 * W})).sum({1, 2});
  };
  UOpRef ast = last_kernel(sums());
  EXPECT_EQ(reduce_inputs(merge_reduce_axes(ast)), reduce_inputs(ast));
  std::vector<float> got = sums().data<float>();
  for (int64_t c = 0; c < C; c++) {
    double want = 0;
    for (int64_t h = 0; h < 2 * H; h++)
      for (int64_t w = 0; w < 2 * W; w++)
        want +=
            static_cast<double>(xv[(c * H + h / 2) * W + w / 2]) * gv[(c * 2 * H + h) * 2 * W + w];
    EXPECT_NEAR(got[c], want, 1e-4) << "channel " << c;
  }
}

TEST(MergeReduceAxes, ATransposedViewKeepsItsAxes) {
  const int64_t C = 3, H = 5, W = 4;
  std::vector<float> xv = random_values(C * H * W, 5), yv = random_values(C * W * H, 6);
  auto sums = [&] {
    Tensor x(xv, Shape{C, H, W}), y(yv, Shape{C, W, H});
    return (x.permute({0, 2, 1}) * y).sum({1, 2});  // y walks (W, H) as one, x does not
  };
  UOpRef ast = last_kernel(sums());
  EXPECT_EQ(reduce_inputs(merge_reduce_axes(ast)), reduce_inputs(ast));
  std::vector<float> got = sums().data<float>();
  for (int64_t c = 0; c < C; c++) {
    double want = 0;
    for (int64_t w = 0; w < W; w++)
      for (int64_t h = 0; h < H; h++)
        want += static_cast<double>(xv[(c * H + h) * W + w]) * yv[(c * W + w) * H + h];
    EXPECT_NEAR(got[c], want, 1e-4) << "channel " << c;
  }
}

TEST(MergeReduceAxes, AKernelWithNothingToMergeIsReturnedAsIs) {
  Tensor x(random_values(12, 7), Shape{3, 4});
  UOpRef ast = last_kernel(x.sum({1}));
  EXPECT_EQ(merge_reduce_axes(ast), ast);
}

}  // namespace
}  // namespace tc::codegen
