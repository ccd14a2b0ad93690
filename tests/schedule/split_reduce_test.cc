// Large reduces into few outputs are split in two kernels (partials over contiguous chunks, then
// their total); values match a double-precision reference.
#include <gtest/gtest.h>

#include <cmath>

#include "tinycore/engine/realize.h"
#include "tinycore/tensor.h"

namespace tc {
namespace {

std::vector<float> ramp(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; i++) v[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  return v;
}

int64_t kernels(Tensor t) {
  engine::GlobalCounters::reset();
  t.realize();
  return engine::GlobalCounters::kernel_count;
}

TEST(SplitReduce, SumOfAVector) {
  const int64_t n = 1 << 16;
  std::vector<float> v = ramp(n);
  Tensor x = Tensor(v).realize();
  Tensor s = x.sum();
  EXPECT_EQ(kernels(s), 2);
  double ref = 0;
  for (float f : v) ref += f;
  EXPECT_NEAR(s.item<double>(), ref, 1e-3 * std::max(1.0, std::abs(ref)));
}

TEST(SplitReduce, MaxOverAllAxes) {
  std::vector<float> v = ramp(64 * 1024);
  v[12345] = 7.5f;
  Tensor x = Tensor(v, Shape{64, 1024}).realize();
  Tensor m = x.max();
  EXPECT_EQ(kernels(m), 2);
  EXPECT_EQ(m.item<float>(), 7.5f);
}

TEST(SplitReduce, FewRowsOfLongSums) {
  const int64_t rows = 4, cols = 1 << 15;
  std::vector<float> v = ramp(rows * cols);
  Tensor x = Tensor(v, Shape{rows, cols}).realize();
  Tensor s = x.sum(1);
  EXPECT_EQ(kernels(s), 2);
  std::vector<float> got = s.data<float>();
  for (int64_t r = 0; r < rows; r++) {
    double ref = 0;
    for (int64_t c = 0; c < cols; c++) ref += v[r * cols + c];
    EXPECT_NEAR(got[r], ref, 1e-3 * std::max(1.0, std::abs(ref))) << "row " << r;
  }
}

TEST(SplitReduce, IntegerSumIsExact) {
  const int64_t n = 1 << 16;
  std::vector<int32_t> v(n);
  for (int64_t i = 0; i < n; i++) v[i] = static_cast<int32_t>(i % 1000) - 300;
  Tensor s = Tensor::from_vector(v).sum();
  EXPECT_EQ(kernels(s), 2);
  int64_t ref = 0;
  for (int32_t x : v) ref += x;
  EXPECT_EQ(s.item<int64_t>(), ref);
}

TEST(SplitReduce, ShortReducesStayOneKernel) {
  Tensor x = Tensor(ramp(2048 * 32), Shape{2048, 32}).realize();
  EXPECT_EQ(kernels(x.sum(1)), 1);  // 32 elements per output: nothing to split
  EXPECT_EQ(kernels(Tensor(ramp(1000)).sum()), 1);
}

}  // namespace
}  // namespace tc
