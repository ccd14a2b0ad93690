// The CL device on whatever OpenCL driver is installed (PoCL on the CPU in CI): hand-written
// OpenCL C kernels compiled, launched and checked against host loops; copies; the allocator's
// cache; build errors; the compile caches in memory and on disk. Without an OpenCL platform
// every test skips, saying why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/temp_cache_dir.h"
#include "tinycore/error.h"
#include "tinycore/runtime/cl_device.h"
#include "tinycore/runtime/disk_cache.h"

namespace tc::runtime {
namespace {

using ::testing::HasSubstr;

// PoCL keeps its own kernel cache in POCL_CACHE_DIR (else the home folder); it reads the
// variable once, at the first OpenCL call, so it is set before any test runs: the caller's
// (tools/test.sh shares one between runs), else a folder removed afterwards.
class PoclCacheDir : public ::testing::Environment {
 public:
  void SetUp() override {
    if (const char* d = std::getenv("POCL_CACHE_DIR"); d && *d) return;
    dir_ = std::filesystem::temp_directory_path() /
           ("tinycore-pocl-cache-test-" + std::to_string(::getpid()));
    setenv("POCL_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

 private:
  std::filesystem::path dir_;
};
const auto* const pocl_cache_dir = ::testing::AddGlobalTestEnvironment(new PoclCacheDir);

// Each test gets a fresh device (no compiled programs in memory) and a fresh disk cache.
class ClTest : public TempCacheDir {
 protected:
  void SetUp() override {
    TempCacheDir::SetUp();
    device_ = make_cl_device();
    if (!device_) GTEST_SKIP() << "no OpenCL device: " << cl_unavailable_reason();
  }
  Device& device() { return *device_; }
  std::unique_ptr<Device> device_;
};

// The device's copy of `host`, freed by the caller.
void* upload(Device& d, const std::vector<float>& host) {
  void* buf = d.allocator().alloc(host.size() * sizeof(float));
  d.allocator().copyin(buf, host.data(), host.size() * sizeof(float));
  return buf;
}
std::vector<float> download(Device& d, void* buf, size_t n) {
  std::vector<float> host(n);
  d.allocator().copyout(host.data(), buf, n * sizeof(float));
  return host;
}

constexpr int kN = 1000;
// out = a*scale + b over kN floats; the launch covers 8 x 128 = 1024 items, so it checks bounds.
std::string axpb_source(int scale) {
  return absl::StrCat(R"(
__kernel void axpb(__global float* out, __global const float* a, __global const float* b) {
  int i = get_global_id(0);
  if (i < 1000) out[i] = a[i] * )",
                      scale, R"(.0f + b[i];
}
)");
}
const std::string kAxpb = axpb_source(2);
LaunchSpec axpb_launch() {
  LaunchSpec launch;
  launch.global = {8, 1, 1};
  launch.local = {128, 1, 1};
  launch.nargs = 3;
  return launch;
}

// Runs `source` (an axpb) on `d` and checks every element against a host loop computing
// a*scale + b.
void expect_axpb_runs(Device& d, const LaunchSpec& launch, const std::string& source = kAxpb,
                      int scale = 2) {
  std::vector<float> a(kN), b(kN), sentinel(kN, -1.0f);
  for (int i = 0; i < kN; i++) a[i] = std::sin(0.1f * i) * 100, b[i] = 0.5f * i - 7;
  void* bufs[3] = {upload(d, sentinel), upload(d, a), upload(d, b)};
  d.compile("axpb", source, launch)->run(bufs);
  d.synchronize();
  std::vector<float> out = download(d, bufs[0], kN);
  for (int i = 0; i < kN; i++) ASSERT_EQ(out[i], a[i] * scale + b[i]) << "at " << i;
  for (void* buf : bufs) d.allocator().free(buf, kN * sizeof(float));
}

TEST_F(ClTest, DescribesItself) {
  EXPECT_EQ(device().name(), "CL");
  EXPECT_EQ(device().language(), runtime::Language::kOpenCl);
  EXPECT_EQ(cl_unavailable_reason(), "");
}

// Whether the CL device is a GPU is remembered on disk per set of installed drivers, so later
// programs choose their default device without loading the drivers.
TEST_F(ClTest, WhetherItIsAGpuIsRememberedOnDisk) {
  bool gpu = device().is_accelerator();
  EXPECT_EQ(cl_may_have_gpu(), gpu);
  auto stored = cache_entries("devices");
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].second, gpu ? "gpu" : "no gpu");
  EXPECT_EQ(cl_may_have_gpu(), gpu);  // read from the entry
  EXPECT_EQ(cache_entries("devices").size(), 1u);
}

TEST_F(ClTest, RunsAHandWrittenKernel) { expect_axpb_runs(device(), axpb_launch()); }

// Two dimensions: each item writes its own coordinates, so every global size is checked.
TEST_F(ClTest, LaunchesTwoDimensionalGrids) {
  const char* source = R"(
__kernel void coords(__global int* out) {
  int x = get_global_id(0), y = get_global_id(1);
  out[y * get_global_size(0) + x] = y * 1000 + x + get_local_size(0) * 1000000;
}
)";
  LaunchSpec launch;
  launch.global = {3, 5, 1};
  launch.local = {4, 2, 1};
  launch.nargs = 1;
  const int w = 12, h = 10;
  void* buf = device().allocator().alloc(w * h * sizeof(int));
  device().compile("coords", source, launch)->run(&buf);
  std::vector<int> out(w * h);
  device().allocator().copyout(out.data(), buf, out.size() * sizeof(int));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) ASSERT_EQ(out[y * w + x], y * 1000 + x + 4000000);
  device().allocator().free(buf, w * h * sizeof(int));
}

// a*b+c, a/b and sqrt(a) to the bit of the host's float arithmetic: no fused multiply-add
// (OpenCL C would fuse by default), division and square root correctly rounded.
TEST_F(ClTest, ArithmeticMatchesTheHostBitForBit) {
  const char* source = R"(
__kernel void arith(__global float* madd, __global float* quot, __global float* root,
                    __global const float* a, __global const float* b, __global const float* c) {
  int i = get_global_id(0);
  madd[i] = a[i] * b[i] + c[i];
  quot[i] = a[i] / b[i];
  root[i] = sqrt(a[i]);
}
)";
  const int n = 4096;
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; i++) {  // scattered over many binades, never 0
    a[i] = std::ldexp(1.0f + 0.61803f * (i % 97) / 97, i % 41 - 20);
    b[i] = std::ldexp(1.0f + 0.41421f * (i % 89) / 89, i % 37 - 18) * (i % 3 ? 1 : -1);
    c[i] = std::ldexp(1.0f + 0.73205f * (i % 83) / 83, i % 43 - 21) * (i % 5 ? -1 : 1);
  }
  LaunchSpec launch;
  launch.global = {n / 64, 1, 1};
  launch.local = {64, 1, 1};
  launch.nargs = 6;
  std::vector<float> zeros(n, 0.0f);
  void* bufs[6] = {upload(device(), zeros), upload(device(), zeros), upload(device(), zeros),
                   upload(device(), a),     upload(device(), b),     upload(device(), c)};
  device().compile("arith", source, launch)->run(bufs);
  std::vector<float> madd = download(device(), bufs[0], n), quot = download(device(), bufs[1], n),
                     root = download(device(), bufs[2], n);
  for (int i = 0; i < n; i++) {
    volatile float product = a[i] * b[i];  // rounded on its own, as the CPU's kernels do
    ASSERT_EQ(madd[i], product + c[i]) << "a*b+c at " << i;
    ASSERT_EQ(quot[i], a[i] / b[i]) << "a/b at " << i;
    ASSERT_EQ(root[i], std::sqrt(a[i])) << "sqrt(a) at " << i;
  }
  for (void* buf : bufs) device().allocator().free(buf, n * sizeof(float));
}

TEST_F(ClTest, CopiesRoundTripAtAnySize) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{3}, size_t{63}, size_t{65}, size_t{4099}}) {
    std::vector<unsigned char> in(bytes), out(bytes, 0xEE);
    for (size_t i = 0; i < bytes; i++) in[i] = static_cast<unsigned char>(i * 7 + 1);
    void* buf = device().allocator().alloc(bytes);
    ASSERT_NE(buf, nullptr);
    device().allocator().copyin(buf, in.data(), bytes);
    device().allocator().copyout(out.data(), buf, bytes);
    EXPECT_EQ(in, out) << bytes << " bytes";
    device().allocator().free(buf, bytes);
  }
}

TEST_F(ClTest, AllocatorReusesFreedBuffers) {
  Allocator& a = device().allocator();
  void* p = a.alloc(1000);
  std::vector<float> data(250, 3.5f);
  a.copyin(p, data.data(), 1000);
  a.free(p, 1000);
  EXPECT_GE(a.cached_bytes(), 1000u);
  void* q = a.alloc(1000);
  EXPECT_EQ(p, q);
  EXPECT_EQ(a.cache_hits(), 1u);
  EXPECT_EQ(download(device(), q, 250), data);  // the same cl_mem, contents intact
  void* r = a.alloc(5000);
  EXPECT_NE(r, q);
  a.free(q, 1000);
  a.free(r, 5000);
  a.clear_cache();
  EXPECT_EQ(a.cached_bytes(), 0u);
}

TEST_F(ClTest, BuildErrorNamesTheKernelAndShowsTheLog) {
  const char* source = "__kernel void broken(__global float* x) {\n  x[0] = no_such_name;\n}\n";
  LaunchSpec launch;
  launch.nargs = 1;
  try {
    device().compile("broken", source, launch);
    FAIL() << "no error for a kernel that does not build";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("CL: kernel broken failed to build: "));
    EXPECT_THAT(e.what(), HasSubstr("no_such_name"));  // the compiler's own message
    EXPECT_THAT(e.what(), HasSubstr(":2:"));           // at the source's own line
  }
}

TEST_F(ClTest, MismatchedLaunchesAreErrors) {
  LaunchSpec two_args = axpb_launch();
  two_args.nargs = 2;
  EXPECT_THROW(
      {
        try {
          device().compile("axpb", kAxpb, two_args);
        } catch (const Error& e) {
          EXPECT_THAT(e.what(), HasSubstr("kernel axpb takes 3 arguments but is launched with 2"));
          throw;
        }
      },
      Error);
  EXPECT_THROW(
      {
        try {
          device().compile("missing", kAxpb, axpb_launch());
        } catch (const Error& e) {
          EXPECT_THAT(e.what(), HasSubstr("kernel missing: clCreateKernel failed"));
          throw;
        }
      },
      Error);
  LaunchSpec huge_group = axpb_launch();
  huge_group.local = {1 << 20, 1, 1};
  EXPECT_THROW(
      {
        try {
          device().compile("axpb", kAxpb, huge_group);
        } catch (const Error& e) {
          EXPECT_THAT(e.what(), HasSubstr("a work-group of 1048576 threads"));
          throw;
        }
      },
      Error);
  LaunchSpec empty = axpb_launch();
  empty.global[1] = 0;
  EXPECT_THROW(device().compile("axpb", kAxpb, empty), Error);
}

TEST_F(ClTest, SameSourceIsCompiledOnce) {
  auto first = device().compile("axpb", kAxpb, axpb_launch());
  EXPECT_EQ(device().compile("axpb", kAxpb, axpb_launch()).get(), first.get());
  // Another launch of the same source is another program, built from the same binary.
  LaunchSpec other = axpb_launch();
  other.global = {4, 1, 1};
  other.local = {256, 1, 1};
  EXPECT_NE(device().compile("axpb", kAxpb, other).get(), first.get());
  expect_axpb_runs(device(), other);
}

// Program binaries go to the disk cache, and a fresh device runs the cached binary (shown by
// planting one kernel's binary under another's source); a binary the driver rejects is built
// from source again.
TEST_F(ClTest, ProgramBinariesAreCachedOnDisk) {
  std::string times3 = axpb_source(3);
  expect_axpb_runs(device(), axpb_launch());
  expect_axpb_runs(device(), axpb_launch(), times3, 3);
  auto stored = cache_entries("cl");  // (key, program binary)
  ASSERT_EQ(stored.size(), 2u);
  if (stored[0].first.find("* 3.0f") != std::string::npos) std::swap(stored[0], stored[1]);
  EXPECT_THAT(stored[1].first, HasSubstr(times3));  // its key holds the source
  EXPECT_FALSE(stored[1].second.empty());

  // a later entry for a key stands in for the earlier one
  cache_store("cl", stored[1].first, stored[0].second);
  expect_axpb_runs(*make_cl_device(), axpb_launch(), times3, 2);  // what the binary computes

  cache_store("cl", stored[1].first, "not a program binary");
  expect_axpb_runs(*make_cl_device(), axpb_launch(), times3, 3);
}

TEST_F(ClTest, ThreadsCompileAndRunAtOnce) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++)
    threads.emplace_back([&] { expect_axpb_runs(device(), axpb_launch()); });
  for (std::thread& t : threads) t.join();
}

// A bad CL_DEVICE is no device, with the reason, not a crash or an exception.
TEST(ClDevice, BadDeviceIndexIsNoDevice) {
  std::optional<std::string> saved;
  if (const char* v = std::getenv("CL_DEVICE")) saved = v;
  setenv("CL_DEVICE", "99", 1);
  std::unique_ptr<Device> d = make_cl_device();
  std::string reason = cl_unavailable_reason();
  if (saved)
    setenv("CL_DEVICE", saved->c_str(), 1);
  else
    unsetenv("CL_DEVICE");
  EXPECT_EQ(d, nullptr);
  if (reason.find("no OpenCL library") == std::string::npos) {
    EXPECT_THAT(reason, HasSubstr("CL_DEVICE=99 is not the index of an OpenCL device"));
  }
}

}  // namespace
}  // namespace tc::runtime
