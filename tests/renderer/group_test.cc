// Grouped reductions in the C-style renderer: a work-group's threads share each output's long
// reduction (strided over the loop, combined in shared memory after a barrier). The kernels run
// for real on the CL device (PoCL in CI) and match double-precision references; their CUDA
// versions compile with NVRTC where the toolkit is (HIP's: tests/runtime/hiprtc_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/renderer/cache_dirs.h"
#include "tinycore/codegen/gpudims.h"
#include "tinycore/codegen/kernel.h"
#include "tinycore/codegen/linearize.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/codegen/render_check.h"
#include "tinycore/engine/realize.h"
#include "tinycore/renderer/cstyle.h"
#include "tinycore/runtime/device.h"
#ifdef TC_HAVE_CUDA
#include "tinycore/runtime/nvrtc.h"
#endif
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"

namespace tc::renderer {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const auto* const cache_dirs = ::testing::AddGlobalTestEnvironment(new CacheDirs);

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

class GroupedReduce : public ::testing::Test {
 protected:
  void SetUp() override {
    auto names = runtime::available_devices();
    if (std::find(names.begin(), names.end(), "CL") == names.end())
      GTEST_SKIP() << "no OpenCL device: " << runtime::unavailable_reason("CL");
  }
};

std::vector<double> uniform(int64_t n, double lo, double hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = static_cast<float>(u(rng));  // exactly representable as float
  return v;
}

// `values` (rows x cols) as a realized float32 tensor on the CL device.
Tensor on_cl(const std::vector<double>& values, int64_t rows, int64_t cols) {
  std::vector<float> f(values.begin(), values.end());
  Tensor t = Tensor::from_blob(f.data(), {rows, cols}, dtypes::float32, "CL");
  EXPECT_EQ(t.device(), "CL");
  return t;
}

std::vector<double> read(const Tensor& t) {
  std::vector<float> f = (t.dtype() == dtypes::float32 ? t : t.cast(dtypes::float32)).data<float>();
  return {f.begin(), f.end()};
}

// The last kernel of a schedule, rendered in OpenCL and CUDA as the GPU devices lower it (no
// opts).
struct Rendered {
  std::string name;
  RenderedKernel opencl, cuda;
};
Rendered render_last(const std::vector<schedule::ScheduleItem>& items) {
  codegen::LinearKernel k = codegen::linearize_kernel(codegen::lower(items.back().ast), {});
  return {k.name, codegen::render_gpu(runtime::Language::kOpenCl, k.name, k.program, k.output_dims),
          codegen::render_gpu(runtime::Language::kCuda, k.name, k.program, k.output_dims)};
}

// Computes `t`, checking that its last kernel shares each of its `outputs` among `threads`
// threads, in OpenCL and CUDA (whose version NVRTC compiles where it is here).
Tensor grouped(Tensor t, int64_t outputs, int64_t threads) {
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({t.uop()});
  Rendered k = render_last(items);
  const RenderedKernel& cl = k.opencl;
  EXPECT_EQ(cl.launch.global[0] * cl.launch.global[1] * cl.launch.global[2], outputs);
  EXPECT_EQ(cl.launch.local, (std::array<int64_t, 3>{threads, 1, 1})) << cl.source;
  EXPECT_THAT(cl.source, HasSubstr("barrier(CLK_LOCAL_MEM_FENCE);"));
  EXPECT_THAT(cl.source, HasSubstr("if (lidx == 0) "));
  EXPECT_EQ(k.cuda.launch.local, cl.launch.local);
  EXPECT_THAT(k.cuda.source, HasSubstr("__syncthreads();"));
  EXPECT_THAT(k.cuda.source, HasSubstr(absl::StrCat("__launch_bounds__(", threads, ")")));
#ifdef TC_HAVE_CUDA
  if (runtime::nvrtc_available()) {
    EXPECT_NO_THROW(codegen::compile_offline(runtime::Language::kCuda, k.name, k.cuda))
        << k.cuda.source;
  }
#endif
  engine::run_schedule(items);
  return t;
}

// Computes `t`, checking that `shared` of its kernels are grouped.
Tensor grouped_kernels(Tensor t, int shared) {
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({t.uop()});
  int n = 0;
  for (size_t i = 1; i <= items.size(); i++) {
    std::vector<schedule::ScheduleItem> first(items.begin(), items.begin() + i);
    n += render_last(first).opencl.source.find("barrier(") != std::string::npos;
  }
  EXPECT_EQ(n, shared);
  engine::run_schedule(items);
  return t;
}

// The OpenCL rendering of `t`'s last kernel, which is not run (`t` must not be read after).
RenderedKernel opencl_of(const Tensor& t) {
  return render_last(schedule::create_schedule({t.uop()})).opencl;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++)
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << "at " << i;
}

// Row sums and maxes in double; NaN wins a max.
std::vector<double> row_sums(const std::vector<double>& v, int64_t rows, int64_t cols) {
  std::vector<double> out(static_cast<size_t>(rows), 0.0);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) out[r] += v[r * cols + c];
  return out;
}
std::vector<double> row_maxes(const std::vector<double>& v, int64_t rows, int64_t cols) {
  std::vector<double> out(static_cast<size_t>(rows), -kInf);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      double x = v[r * cols + c];
      out[r] = std::isnan(out[r]) || std::isnan(x) ? kNaN : std::max(out[r], x);
    }
  return out;
}

TEST_F(GroupedReduce, RowSumsAndMaxes) {
  // 257 columns: the first thread takes two, the others one; 4096: sixteen each
  for (auto [rows, cols] :
       std::vector<std::pair<int64_t, int64_t>>{{3, 1000}, {1, 4096}, {7, 257}}) {
    SCOPED_TRACE(absl::StrCat(rows, " x ", cols));
    std::vector<double> v = uniform(rows * cols, -1, 1, static_cast<unsigned>(cols));
    Tensor x = on_cl(v, rows, cols);
    expect_close(read(grouped(x.sum(1), rows, 256)), row_sums(v, rows, cols),
                 1e-5 * std::sqrt(cols));
    if (cols == 257) {
      EXPECT_EQ(read(grouped(x.max(1), rows, 256)), row_maxes(v, rows, cols));
    }
  }
}

TEST_F(GroupedReduce, FullSums) {
  std::vector<double> v = uniform(100000, 0, 1, 1);
  Tensor x = on_cl(v, 1, 100000);
  // the schedule splits it into 32 partial sums of 3125, then sums those: both grouped
  expect_close(read(grouped_kernels(x.sum(), 2)), row_sums(v, 1, 100000), 1e-6);
  // two reduce loops, the inner one shared: for (ridx0 < 3) for (ridx1 = lidx; ...; += 256)
  std::vector<double> w = uniform(3000, -1, 1, 2);
  Tensor y = on_cl(w, 3, 1000);
  EXPECT_THAT(opencl_of(Tensor::empty({3, 1000}).sum()).source,
              HasSubstr("for (int ridx1 = lidx; ridx1 < 1000; ridx1 += 256) {"));
  expect_close(read(grouped(y.sum(), 1, 256)), row_sums(w, 1, 3000), 1e-5);
}

TEST_F(GroupedReduce, SoftmaxAndLayernormRows) {
  const int64_t rows = 5, cols = 1000;
  std::vector<double> v = uniform(rows * cols, -4, 4, 3);
  Tensor x = on_cl(v, rows, cols);
  std::vector<double> softmax(v.size()), layernorm(v.size());
  for (int64_t r = 0; r < rows; r++) {
    const double* row = &v[r * cols];
    double max = *std::max_element(row, row + cols), sum = 0, mean = 0, var = 0;
    for (int64_t c = 0; c < cols; c++) sum += std::exp(row[c] - max), mean += row[c] / cols;
    for (int64_t c = 0; c < cols; c++) var += (row[c] - mean) * (row[c] - mean) / cols;
    for (int64_t c = 0; c < cols; c++) {
      softmax[r * cols + c] = std::exp(row[c] - max) / sum;
      layernorm[r * cols + c] = (row[c] - mean) / std::sqrt(var + 1e-5);
    }
  }
  // their row reductions (max and sum; mean and variance) are each a grouped kernel
  expect_close(read(grouped_kernels(x.softmax(1), 2)), softmax, 1e-5);
  expect_close(read(grouped_kernels(x.layernorm(1), 2)), layernorm, 1e-4);
}

TEST_F(GroupedReduce, IntegerSumsAreExact) {
  const int64_t rows = 4, cols = 3000;
  std::vector<int32_t> v(rows * cols);
  std::mt19937 rng(4);
  for (int32_t& x : v) x = static_cast<int32_t>(rng() % 2001) - 1000;
  Tensor x = Tensor::from_blob(v.data(), {rows, cols}, dtypes::int32, "CL");
  std::vector<int64_t> want(rows, 0);
  for (int64_t i = 0; i < rows * cols; i++) want[i / cols] += v[i];
  EXPECT_EQ(grouped(x.sum(1).cast(dtypes::int64), rows, 256).data<int64_t>(), want);
}

TEST_F(GroupedReduce, MaxPropagatesNaN) {
  // NaN first (thread 0's), last (thread 231's second turn), among infinities; then none
  const int64_t rows = 4, cols = 1000;
  std::vector<double> v = uniform(rows * cols, -1, 1, 5);
  v[0] = kNaN;
  v[cols + 999] = kNaN;
  v[2 * cols + 517] = kNaN;
  v[2 * cols + 3] = kInf;
  std::fill(v.begin() + 3 * cols, v.end(), -kInf);
  v[3 * cols + 640] = 2.5;
  std::vector<double> got = read(grouped(on_cl(v, rows, cols).max(1), rows, 256));
  ASSERT_EQ(got.size(), 4u);
  EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1]) && std::isnan(got[2]))
      << got[0] << " " << got[1] << " " << got[2];
  EXPECT_EQ(got[3], 2.5);
}

TEST_F(GroupedReduce, Float16) {
  const int64_t rows = 3, cols = 2048;
  std::vector<double> v = uniform(rows * cols, 0, 1, 6);
  Tensor h = on_cl(v, rows, cols).cast(dtypes::float16).realize();
  std::vector<double> halves = read(h);  // the inputs as float16 holds them
  // the sums, about 1000, rounded to float16 (spacing 0.5 there)
  expect_close(read(grouped(h.sum(1), rows, 256)), row_sums(halves, rows, cols), 1e-3);
  EXPECT_EQ(read(grouped(h.max(1), rows, 256)), row_maxes(halves, rows, cols));
}

TEST_F(GroupedReduce, BoolAnyAndAll) {
  // bool partial results are bytes in shared memory
  const int64_t rows = 3, cols = 1000;
  std::vector<double> v(rows * cols, 0.0);
  v[700] = 1;                                     // row 0: one true, far from thread 0
  std::fill(v.begin() + 2 * cols, v.end(), 1.0);  // row 2: all true
  Tensor x = on_cl(v, rows, cols).gt(0.5);
  EXPECT_EQ(read(grouped(x.any(1), rows, 256)), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(read(grouped(x.all(1), rows, 256)), (std::vector<double>{0, 0, 1}));
}

TEST(GroupedReduceChoice, OnlyLongReductionsOrFewOutputsAreShared) {
  auto threads = [](const Tensor& t) { return opencl_of(t).launch.local; };
  // few outputs: a group of the largest power of two the reduction fills
  EXPECT_EQ(threads(Tensor::empty({8, 100}).sum(1)), (std::array<int64_t, 3>{64, 1, 1}));
  // too short to share
  EXPECT_EQ(threads(Tensor::empty({8, 12}).sum(1)), (std::array<int64_t, 3>{8, 1, 1}));
  // many outputs, each reduction short: a thread per output
  EXPECT_EQ(threads(Tensor::empty({4096, 100}).sum(1)), (std::array<int64_t, 3>{256, 1, 1}));
  // past kManyOutputs a thread per output fills the GPU even for long reductions
  RenderedKernel many = opencl_of(Tensor::empty({70000, 300}).sum(1));
  EXPECT_THAT(many.source, Not(HasSubstr("barrier(")));
  EXPECT_THAT(many.source, HasSubstr("for (int ridx1 = 0; ridx1 < 300; ridx1++) {"));
}

TEST(GroupedReduceChoice, NestedReductionsKeepAThreadPerOutput) {
  // sum over j of (max over k of in[j, k]): the max's accumulator restarts in the j loop, so
  // that loop cannot be split among threads; built by hand (the scheduler splits such kernels)
  auto global = [](int64_t i, int64_t n) {
    return UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.as_ptr(), {}, std::vector<int64_t>{i, n});
  };
  UOpRef out = global(0, 1), in = global(1, 300 * 300);
  UOpRef j = UOp::make(Ops::RANGE, dtypes::index, {index_const(300)}, int64_t{0});
  UOpRef k = UOp::make(Ops::RANGE, dtypes::index, {index_const(300)}, int64_t{1});
  UOpRef x =
      UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, in->dtype, {in, j * 300 + k})});
  UOpRef row_max = UOp::make(Ops::REDUCE, dtypes::float32, {x, k}, static_cast<int64_t>(Ops::MAX));
  UOpRef total =
      UOp::make(Ops::REDUCE, dtypes::float32, {row_max, j}, static_cast<int64_t>(Ops::ADD));
  UOpRef st = UOp::make(Ops::STORE, dtypes::void_,
                        {UOp::make(Ops::INDEX, out->dtype, {out, index_const(0)}), total});
  std::vector<UOpRef> program = codegen::linearize(UOp::sink({st}));
  for (runtime::Language l : cstyle_languages()) {
    RenderedKernel k = codegen::render_gpu(l, "r_nested", program, 0);
    const char* lang = runtime::language_name(l);
    EXPECT_EQ(k.launch.local, (std::array<int64_t, 3>{1, 1, 1})) << lang;
    EXPECT_THAT(k.source, Not(HasSubstr("lidx"))) << lang;
    EXPECT_THAT(k.source, HasSubstr("for (int ridx1 = 0; ridx1 < 300; ridx1++) {")) << lang;
  }
}

}  // namespace
}  // namespace tc::renderer
