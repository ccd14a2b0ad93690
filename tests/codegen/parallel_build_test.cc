// Kernels build on several threads at once (the CPU compiles a schedule's new kernels on every
// core): results match a double-precision loop, each kernel is built once per process however
// many threads ask for it.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "tests/temp_cache_dir.h"
#include "tinycore/codegen/kernel.h"
#include "tinycore/runtime/device.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"

namespace tc::codegen {
namespace {

using ParallelBuild = TempCacheDir;  // cold: every kernel goes through LLVM

std::vector<float> ramp(int64_t n, float scale) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; i++) v[i] = scale * static_cast<float>((i * 37) % 101 - 50) / 50;
  return v;
}

TEST_F(ParallelBuild, ManyNewKernelsInOneScheduleMatchADoubleLoop) {
  ASSERT_GE(runtime::get_device("CPU").compile_threads(), 1);
  const int64_t rows = 24, cols = 40;
  std::vector<float> a = ramp(rows * cols, 1.5f), b = ramp(rows * cols, -0.75f);
  Tensor ta = Tensor(a, Shape{rows, cols}).to("CPU").realize(),
         tb = Tensor(b, Shape{rows, cols}).to("CPU").realize();
  // twelve kernels no earlier test built: each constant is new (row sums of a*k + b, then exp)
  std::vector<Tensor> outs;
  for (int k = 0; k < 12; k++) outs.push_back((ta * (1.25 + k) + tb).sum(1).mul(0.01).exp());
  realize_all(outs);
  for (int k = 0; k < 12; k++) {
    std::vector<float> got = outs[k].data<float>();
    ASSERT_EQ(got.size(), static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; r++) {
      double s = 0;
      for (int64_t c = 0; c < cols; c++) s += a[r * cols + c] * (1.25 + k) + b[r * cols + c];
      EXPECT_NEAR(got[r], std::exp(0.01 * s), 1e-5 * std::exp(0.01 * s)) << "k " << k << " r " << r;
    }
  }
}

TEST_F(ParallelBuild, ThreadsAskingForOneKernelGetTheSameOne) {
  Tensor x = Tensor(ramp(64, 3.0f), Shape{8, 8}).to("CPU").realize();
  Tensor y = (x * 7.125 - 0.5).max(1);  // new to this process
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({y.uop()}, {});
  ASSERT_EQ(items.size(), 1u);
  runtime::Device& cpu = runtime::get_device("CPU");
  std::vector<std::shared_ptr<const Kernel>> got(6);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); t++)
    threads.emplace_back([&, t] { got[t] = get_kernel(items[0].ast, cpu); });
  for (std::thread& t : threads) t.join();
  std::set<const Kernel*> distinct;
  for (const auto& k : got) distinct.insert(k.get());
  EXPECT_EQ(distinct.size(), 1u);
  // and get_kernels over a list holding it twice
  auto both = get_kernels({items[0].ast, items[0].ast}, cpu);
  EXPECT_EQ(both[0].get(), got[0].get());
  EXPECT_EQ(both[1].get(), got[0].get());
}

}  // namespace
}  // namespace tc::codegen
