// Merging a reduce's adjacent loops: merged where every access walks the two as one (a per-channel
// sum over feature maps), left alone where the merged loop would need a division (a read through
// a 2x upsample, a transposed view); results match a double-precision loop either way. The same
// for an elementwise kernel's short innermost output axes (an optimizer's update of conv weights).
#include "tinycore/codegen/merge_axes.h"

#include <gtest/gtest.h>

#include "tests/codegen/random_values.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"

namespace tc::codegen {
namespace {

// The sizes of each reduce's loops in a lowered kernel.
std::vector<Shape> reduce_loops(const LoweredKernel& k) {
  std::vector<Shape> out;
  for (const UOp* u : k.sink->toposort())
    if (u->op == Ops::REDUCE) {
      out.emplace_back();
      for (size_t i = 1; i < u->src.size(); i++) out.back().push_back(u->src[i]->src[0]->arg_int());
    }
  return out;
}

// The last kernel of `t`'s schedule (its reduce), lowered. Scheduling claims `t`'s graph: the
// values are computed from another tensor made the same way.
LoweredKernel last_kernel(const Tensor& t) {
  return lower(schedule::create_schedule({t.uop()}).back().ast);
}

TEST(MergeReduceAxes, PerChannelSumOverFeatureMapsIsOneLoopPerMap) {
  const int64_t N = 6, C = 4, H = 5, W = 7;
  std::vector<float> xv = random_values(N * C * H * W, 1), bv = random_values(C, 2);
  auto sums = [&] {
    Tensor x(xv, Shape{N, C, H, W}), b(bv, Shape{1, C, 1, 1});
    return (x + b).relu().sum({0, 2, 3});
  };
  // H and W are one axis of 35; N stays apart (C lies between)
  LoweredKernel k = merge_axes(last_kernel(sums()));
  EXPECT_EQ(reduce_loops(k), (std::vector<Shape>{Shape{N, H * W}}));
  EXPECT_EQ(k.name, "r_4_6_35");
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
  EXPECT_EQ(reduce_loops(merge_axes(last_kernel(sums()))),
            (std::vector<Shape>{Shape{2 * H, 2 * W}}));
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
  EXPECT_EQ(reduce_loops(merge_axes(last_kernel(sums()))), (std::vector<Shape>{Shape{W, H}}));
  std::vector<float> got = sums().data<float>();
  for (int64_t c = 0; c < C; c++) {
    double want = 0;
    for (int64_t w = 0; w < W; w++)
      for (int64_t h = 0; h < H; h++)
        want += static_cast<double>(xv[(c * H + h) * W + w]) * yv[(c * W + w) * H + h];
    EXPECT_NEAR(got[c], want, 1e-4) << "channel " << c;
  }
}

// Simplifying the merged kernel may drop a reduce whose value does not matter (an integer sum
// times 0): its loops are gone with it (a fuzz run from FUZZ_SEED=199417828 met one, and merging
// threw).
TEST(MergeReduceAxes, AReduceSimplifiedAwayLeavesNoLoops) {
  auto y = [] {
    Tensor x = Tensor::arange(0, 24, 1, dtypes::int32).reshape({2, 3, 4}).contiguous();
    return x.sum({1, 2}) * 0 + x.max();  // the max, reshaped before its broadcast, is a kernel
  };
  LoweredKernel plain = last_kernel(y());
  LoweredKernel k = merge_axes(plain);
  EXPECT_EQ(plain.innermost.size(), 1u);
  EXPECT_TRUE(k.innermost.empty());
  EXPECT_EQ(y().data<int32_t>(), (std::vector<int32_t>{23, 23}));
}

TEST(MergeReduceAxes, AKernelWithNothingToMergeIsReturnedAsIs) {
  Tensor x(random_values(12, 7), Shape{3, 4});
  LoweredKernel k = last_kernel(x.sum({1}));
  EXPECT_EQ(merge_axes(k).sink, k.sink);
}

TEST(MergeOutputAxes, ConvWeightUpdateIsOneLongLoopPerFilter) {
  const int64_t O = 6, I = 4, K = 3;
  std::vector<float> mv = random_values(O * I * K * K, 8), gv = random_values(O * I * K * K, 9);
  auto update = [&] {  // Adam's first moment
    return Tensor(mv, Shape{O, I, K, K}) * 0.9f + Tensor(gv, Shape{O, I, K, K}) * 0.1f;
  };
  // 3x3 becomes 9, then 4x9 becomes 36: long enough for SIMD lanes, where merging stops
  LoweredKernel k = merge_axes(last_kernel(update()));
  EXPECT_EQ(k.shape, (Shape{O, I * K * K}));
  EXPECT_EQ(k.name, "E_6_36");
  std::vector<float> got = update().data<float>();
  for (size_t i = 0; i < mv.size(); i++)
    EXPECT_NEAR(got[i], 0.9 * mv[i] + 0.1 * static_cast<double>(gv[i]), 1e-6) << i;
}

TEST(MergeOutputAxes, ATransposedReadKeepsItsAxes) {
  const int64_t C = 2, H = 3, W = 5;
  std::vector<float> xv = random_values(C * H * W, 10), yv = random_values(C * W * H, 11);
  auto sum = [&] {  // (C, W, H): y walks (W, H) as one, x does not
    return Tensor(xv, Shape{C, H, W}).permute({0, 2, 1}) + Tensor(yv, Shape{C, W, H});
  };
  EXPECT_EQ(merge_axes(last_kernel(sum())).shape, (Shape{C, W, H}));
  std::vector<float> got = sum().data<float>();
  for (int64_t c = 0; c < C; c++)
    for (int64_t w = 0; w < W; w++)
      for (int64_t h = 0; h < H; h++)
        EXPECT_NEAR(got[(c * W + w) * H + h],
                    static_cast<double>(xv[(c * H + h) * W + w]) + yv[(c * W + w) * H + h], 1e-6);
}

TEST(MergeOutputAxes, APointwiseConvsPositionsMergeWhereTheyFillLanes) {
  // a 1x1 conv's 8x8 positions are one axis of 64, a multiple of the widest lanes; 6x6 ones (36)
  // and a 3x3 conv's (its windows read them through a division) keep their axes
  const int64_t N = 2, C = 3, O = 5;
  for (int64_t side : {8, 6}) {
    std::vector<float> xv = random_values(N * C * side * side, 20), wv = random_values(O * C, 21);
    auto conv = [&] {
      return Tensor(xv, Shape{N, C, side, side}).conv2d(Tensor(wv, Shape{O, C, 1, 1}));
    };
    Shape want = side == 8 ? Shape{N, O, 64} : Shape{N, O, side, side};
    EXPECT_EQ(merge_axes(last_kernel(conv())).shape, want);
    std::vector<float> got = conv().data<float>();
    for (int64_t n = 0; n < N; n++)
      for (int64_t o = 0; o < O; o++)
        for (int64_t p = 0; p < side * side; p++) {
          double sum = 0;
          for (int64_t c = 0; c < C; c++)
            sum += static_cast<double>(xv[(n * C + c) * side * side + p]) * wv[o * C + c];
          EXPECT_NEAR(got[(n * O + o) * side * side + p], sum, 1e-5) << n << " " << o << " " << p;
        }
  }
  Tensor x = Tensor::empty({N, C, 8, 8}), w = Tensor::empty({O, C, 3, 3});
  EXPECT_EQ(merge_axes(last_kernel(x.conv2d(w, {.padding = 1}))).shape, (Shape{N, O, 8, 8}));
}

TEST(MergeOutputAxes, LongInnermostAxesAndReducesAreLeftAlone) {
  Tensor x(random_values(4 * 64, 12), Shape{4, 64});
  LoweredKernel k = last_kernel(x * 2.0f);
  EXPECT_EQ(merge_axes(k).sink, k.sink);
  Tensor y(random_values(6 * 3 * 3, 13), Shape{6, 3, 3});
  LoweredKernel reduce = merge_axes(last_kernel(y.sum({2})));
  EXPECT_EQ(reduce.shape, (Shape{6, 3}));
}

}  // namespace
}  // namespace tc::codegen
