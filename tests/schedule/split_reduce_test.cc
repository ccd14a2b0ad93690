// Large reduces into few outputs, or very large ones into many, are split in two kernels
// (partials over contiguous chunks, then their total); values match a double-precision reference.
#include <gtest/gtest.h>

#include <cmath>

#include "tinycore/engine/realize.h"
#include "tinycore/schedule/schedule.h"
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

TEST(SplitReduce, ManyOutputsOfLongSumsAreBlocked) {
  // 32x32 outputs of 16384-long dot products (a conv weight gradient's shape): split in 64
  // chunks, the partials' kernel looping over chunks outermost so each chunk's slab of the
  // inputs is read from cache by all outputs; then the chunks are summed
  const int64_t n = 32, k = 16384;
  std::vector<float> a = ramp(n * k), b = ramp(k * n);
  for (float& x : b) x = -x * 0.5f;
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule(
      {Tensor::empty({n, k}).matmul(Tensor::empty({k, n})).uop()});  // (marks it as computed)
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].bufs[0]->arg_ints()[1], 64 * n * n);  // the partials
  Tensor c = Tensor(a, Shape{n, k}).realize().matmul(Tensor(b, Shape{k, n}).realize());
  EXPECT_EQ(kernels(c), 2);
  std::vector<float> got = c.data<float>();
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      double ref = 0;
      for (int64_t l = 0; l < k; l++) ref += double(a[i * k + l]) * b[l * n + j];
      ASSERT_NEAR(got[i * n + j], ref, 1e-3 * std::max(1.0, std::abs(ref))) << i << "," << j;
    }
}

TEST(SplitReduce, AHugeSumIsSplitOnce) {
  // 16M floats: 8192 partials of 2048 contiguous elements each, too few to be split again (a
  // second split, with its chunks first, would have every core read 256 strided runs)
  std::vector<schedule::ScheduleItem> items =
      schedule::create_schedule({Tensor::empty({16384, 1024}).sum().uop()});
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].bufs[0]->arg_ints()[1], 8192);  // the partials
  const int64_t n = 1 << 20;
  std::vector<float> v = ramp(n);
  Tensor s = Tensor(v, Shape{1024, 1024}).realize().sum();
  EXPECT_EQ(kernels(s), 2);
  double ref = 0;
  for (float f : v) ref += f;
  EXPECT_NEAR(s.item<double>(), ref, 1e-3 * std::max(1.0, std::abs(ref)));
}

TEST(SplitReduce, AOneHotAlongAKeptAxisDoesNotStopTheSplit) {
  // column sums of x times a one-hot of labels over 10 classes (a loss's gradient): the one-hot
  // runs along the kept axis, so this is no gather to narrow, and the long reduce is split
  const int64_t n = 1 << 16, classes = 10;
  std::vector<float> v = ramp(n * classes);
  std::vector<int32_t> labels(n);
  for (int64_t i = 0; i < n; i++) labels[i] = static_cast<int32_t>(i * 7 % classes);
  Tensor onehot = Tensor::from_vector(labels, Shape{n, 1})
                      .realize()
                      .eq(Tensor::arange(classes).cast(dtypes::int32).reshape({1, classes}))
                      .cast(dtypes::float32);
  Tensor s = (Tensor(v, Shape{n, classes}).realize() * onehot).sum(0);
  EXPECT_EQ(kernels(s), 2);
  std::vector<float> got = s.data<float>();
  for (int64_t c = 0; c < classes; c++) {
    double ref = 0;
    for (int64_t i = 0; i < n; i++) ref += labels[i] == c ? v[i * classes + c] : 0.0;
    EXPECT_NEAR(got[c], ref, 1e-3 * std::max(1.0, std::abs(ref))) << "class " << c;
  }
}

TEST(SplitReduce, ShortReducesStayOneKernel) {
  Tensor x = Tensor(ramp(2048 * 32), Shape{2048, 32}).realize();
  EXPECT_EQ(kernels(x.sum(1)), 1);  // 32 elements per output: nothing to split
  EXPECT_EQ(kernels(Tensor(ramp(1000)).sum()), 1);
}

}  // namespace
}  // namespace tc
