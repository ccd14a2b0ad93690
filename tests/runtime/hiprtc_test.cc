// HIP without an AMD GPU: the HIP device reports why it is unavailable, and hiprtc compiles
// rendered kernels for gfx90a. Its own process: ROCm's compiler cannot share one with PoCL, so
// DEVICE=CPU keeps the device registry from loading the OpenCL driver.
#include "tinycore/runtime/hiprtc.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/temp_cache_dir.h"
#include "tinycore/codegen/gpudims.h"
#include "tinycore/codegen/kernel.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/error.h"
#include "tinycore/renderer/cstyle.h"
#include "tinycore/runtime/device.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"

namespace tc::runtime {
namespace {

using ::testing::HasSubstr;

const bool cpu_only = setenv("DEVICE", "CPU", 1) == 0;

// A softmax's kernels, rendered as HIP, compile to AMD code objects (ELF).
TEST_F(TempCacheDir, RenderedKernelsCompileForGfx90a) {
  std::string why;
  if (!hiprtc_available(&why)) GTEST_SKIP() << "hiprtc is not here: " << why;
  Tensor x = Tensor::arange(24).reshape({4, 6}).cast(dtypes::float16).softmax(-1);
  std::vector<schedule::ScheduleItem> items = schedule::create_schedule({x.uop()});
  ASSERT_GE(items.size(), 1u);
  for (const schedule::ScheduleItem& item : items) {
    codegen::LinearKernel k = codegen::linearize_kernel(codegen::lower(item.ast), {});
    renderer::RenderedKernel r =
        codegen::render_gpu(runtime::Language::kHip, k.name, k.program, k.output_dims);
    std::string object = hiprtc_compile(k.name, r.source, "gfx90a");
    EXPECT_EQ(object.substr(0, 4),
              "\x7f"
              "ELF")
        << k.name;
    EXPECT_EQ(hiprtc_compile(k.name, r.source, "gfx90a"), object);  // cached on disk
  }
}

TEST(Hiprtc, CompileErrorsNameTheKernel) {
  std::string why;
  if (!hiprtc_available(&why)) GTEST_SKIP() << "hiprtc is not here: " << why;
  try {
    hiprtc_compile("broken_kernel", "extern \"C\" __global__ void broken_kernel() { nope; }");
    FAIL() << "no error for a broken kernel";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("broken_kernel"));
    EXPECT_THAT(e.what(), HasSubstr("nope"));
  }
}

// Reductions a work-group shares (shared arrays, barriers): float16, int and bool accumulators.
TEST_F(TempCacheDir, GroupedReductionsCompileForGfx90a) {
  std::string why;
  if (!hiprtc_available(&why)) GTEST_SKIP() << "hiprtc is not here: " << why;
  Tensor h = Tensor::empty({4, 1000}, dtypes::float16);
  Tensor i = Tensor::empty({3, 2000}, dtypes::int32);
  int grouped = 0;
  for (const Tensor& t : {h.softmax(-1), i.sum(1), h.gt(0).any(1)}) {
    for (const schedule::ScheduleItem& item : schedule::create_schedule({t.uop()})) {
      codegen::LinearKernel k = codegen::linearize_kernel(codegen::lower(item.ast), {});
      renderer::RenderedKernel r =
          codegen::render_gpu(runtime::Language::kHip, k.name, k.program, k.output_dims);
      if (r.source.find("__syncthreads();") == std::string::npos) continue;
      grouped++;
      EXPECT_THAT(r.source, HasSubstr("__shared__"));
      EXPECT_EQ(hiprtc_compile(k.name, r.source, "gfx90a").substr(0, 4),
                "\x7f"
                "ELF")
          << r.source;
    }
  }
  // softmax's max and sum (in one kernel: scheduled for the CPU here, which fuses a softmax's rows;
  // a GPU's schedule keeps a kernel for each), the int sum, the any
  EXPECT_EQ(grouped, 3);
}

// Last: listing the available devices in its error loads PoCL, after which hiprtc refuses.
TEST(HipDevice, ReportsWhyItIsUnavailable) {
  ASSERT_TRUE(cpu_only);
  std::string why = unavailable_reason("HIP");
  ASSERT_FALSE(why.empty()) << "an AMD GPU is here: this test expects none";
  EXPECT_THAT(why, ::testing::AnyOf(HasSubstr("no AMD GPU"), HasSubstr("not installed")));
  try {
    get_device("HIP");
    FAIL() << "no error for the HIP device";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(why));
  }
}

}  // namespace
}  // namespace tc::runtime
