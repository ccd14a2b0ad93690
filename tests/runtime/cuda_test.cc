// The CUDA device and NVRTC. NVRTC compiles for sm_90 with no GPU, so its tests run wherever the
// toolkit is; the device reports "no device" cleanly without a driver or GPU, and runs kernels
// for real where there is one (tests/gpu_check.sh).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <link.h>  // _DYNAMIC: this binary's dynamic section
#include <sys/stat.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "tests/error_message.h"
#include "tests/temp_cache_dir.h"
#include "tinycore/runtime/disk_cache.h"

#ifdef TC_HAVE_CUDA
#include "tinycore/runtime/cublas.h"
#include "tinycore/runtime/cuda_device.h"
#include "tinycore/runtime/nvrtc.h"
#include "tinycore/runtime/pinned.h"
#endif

namespace tc::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The libraries this test binary is linked against (its DT_NEEDED entries).
std::vector<std::string> needed_libraries() {
  const char* strtab = nullptr;
  for (const ElfW(Dyn)* d = _DYNAMIC; d->d_tag != DT_NULL; d++)
    if (d->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(d->d_un.d_ptr);
  std::vector<std::string> out;
  for (const ElfW(Dyn)* d = _DYNAMIC; d->d_tag != DT_NULL; d++)
    if (d->d_tag == DT_NEEDED && strtab) out.push_back(strtab + d->d_un.d_val);
  return out;
}

// Linking libcuda makes a binary fail to start where no driver is installed.
TEST(Cuda, BinariesDoNotLinkCudaLibraries) {
  std::vector<std::string> needed = needed_libraries();
  EXPECT_THAT(needed, ::testing::Contains(StartsWith("libstdc++")));  // the list is read right
  for (const std::string& lib : needed) {
    EXPECT_THAT(lib, ::testing::Not(StartsWith("libcuda")));
    EXPECT_THAT(lib, ::testing::Not(StartsWith("libnvrtc")));
  }
}

#ifndef TC_HAVE_CUDA

TEST(Nvrtc, NeedsTheCudaToolkit) {
  GTEST_SKIP() << "the CUDA toolkit is absent (no cuda.h and nvrtc.h at build time): the CUDA "
                  "device and NVRTC are left out of this build";
}

#else

// Hand-written kernels: tests of the device on their own, not tinycore compute kernels.
const char* kAdd = R"(
extern "C" __global__ void add(float* out, const float* a, const float* b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 1000) out[i] = a[i] + b[i];
}
)";

const char* kHalf = R"(
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void scale_half(half* out, const half* a, const __nv_bfloat16* b) {
  int i = threadIdx.x;
  out[i] = a[i] * __float2half(__bfloat162float(b[i])) + __float2half(1.0f);
}
)";

TEST(Nvrtc, IsAvailableWithTheToolkit) {
  std::string why;
  ASSERT_TRUE(nvrtc_available(&why)) << why;
  EXPECT_THAT(nvrtc_version(), ::testing::MatchesRegex("[0-9]+\\.[0-9]+"));
  EXPECT_THAT(nvrtc_supported_archs(), ::testing::Contains(90));
}

class NvrtcCache : public TempCacheDir {};

TEST_F(NvrtcCache, CompilesPtxForSm90WithoutAGpu) {
  std::string ptx = nvrtc_compile("add", kAdd, "sm_90", false);
  EXPECT_THAT(ptx, HasSubstr(".target sm_90"));
  EXPECT_THAT(ptx, HasSubstr(".entry add("));
  EXPECT_THAT(ptx, HasSubstr("add.f32"));
  EXPECT_EQ(ptx.find('\0'), std::string::npos);  // text, terminated by c_str()
}

TEST_F(NvrtcCache, CompilesCubinForSm90) {
  std::string cubin = nvrtc_compile("add", kAdd, "sm_90", true);
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4),
            "\x7f"
            "ELF");
}

TEST_F(NvrtcCache, CompilesHalfAndBfloat16Kernels) {
  std::string ptx = nvrtc_compile("scale_half", kHalf, "sm_90", false);
  EXPECT_THAT(ptx, HasSubstr(".entry scale_half("));
  EXPECT_THAT(ptx, HasSubstr("mul.f16"));
  EXPECT_THAT(ptx, HasSubstr("cvt.f32.bf16"));
  EXPECT_EQ(nvrtc_compile("scale_half", kHalf, "sm_90", true).substr(0, 4),
            "\x7f"
            "ELF");
}

TEST_F(NvrtcCache, SyntaxErrorNamesTheKernelAndNvrtcsMessage) {
  const char* broken = R"(extern "C" __global__ void broken_kernel(float* x) {
  x[0] = undefined_thing;
})";
  std::string msg = error_message([&] { nvrtc_compile("broken_kernel", broken, "sm_90", false); });
  EXPECT_THAT(msg, StartsWith("CUDA: kernel broken_kernel failed to compile: "));
  EXPECT_THAT(msg, HasSubstr("broken_kernel.cu(2): error: identifier \"undefined_thing\" is "
                             "undefined"));
  EXPECT_TRUE(cache_entries("nvrtc").empty());  // failures are not cached
}

TEST_F(NvrtcCache, RejectsAMalformedArchitecture) {
  for (const char* arch : {"90", "sm90", "compute_90", "sm_9", "sm_90x", ""}) {
    std::string msg = error_message([&] { nvrtc_compile("add", kAdd, arch, false); });
    EXPECT_THAT(msg, HasSubstr("kernel add"));
    EXPECT_THAT(msg, HasSubstr(absl::StrCat("'", arch, "' is not a GPU architecture")));
  }
  EXPECT_THAT(nvrtc_compile("add", kAdd, "sm_90a", false), HasSubstr(".target sm_90a"));
}

TEST_F(NvrtcCache, SecondCompileComesFromTheDiskCache) {
  std::string first = nvrtc_compile("add", kAdd, "sm_90", false);
  ASSERT_EQ(cache_entries("nvrtc").size(), 1u);
  EXPECT_EQ(nvrtc_compile("add", kAdd, "sm_90", false), first);
  EXPECT_EQ(cache_entries("nvrtc").size(), 1u);  // read, not compiled and stored again

  // Everything the output depends on is in the key: another arch, CUBIN, another source.
  EXPECT_THAT(nvrtc_compile("add", kAdd, "sm_80", false), HasSubstr(".target sm_80"));
  nvrtc_compile("add", kAdd, "sm_90", true);
  nvrtc_compile("add", std::string(kAdd) + "\n", "sm_90", false);
  EXPECT_EQ(cache_entries("nvrtc").size(), 4u);
}

TEST_F(NvrtcCache, CheckCompilesManyKernelsWithEqualNamesAsOneProgram) {
  // three kernels named alike, two with equal helper functions and the fp16 header each
  std::string helper = "__device__ inline float twice(float x) { return 2 * x; }\n";
  std::vector<NamedSource> kernels = {
      {"add", kAdd},
      {"add", absl::StrCat("#include <cuda_fp16.h>\n", helper,
                           "extern \"C\" __global__ void add(half* x) { x[0] = x[0] + x[0]; }")},
      {"twice", absl::StrCat("#include <cuda_fp16.h>\n", helper,
                             "extern \"C\" __global__ void twice_all(float* x) { x[0] = "
                             "twice(x[0]); }")}};
  nvrtc_check(kernels, "sm_90");
  EXPECT_EQ(cache_entries("nvrtc-check").size(), 3u);  // each remembered as compiling
  nvrtc_check(kernels, "sm_90");                       // and not compiled again
  EXPECT_EQ(cache_entries("nvrtc-check").size(), 3u);
}

TEST_F(NvrtcCache, CheckNamesTheKernelThatDoesNotCompile) {
  std::vector<NamedSource> kernels = {{"add", kAdd},
                                      {"broken_kernel",
                                       "extern \"C\" __global__ void broken_kernel(float* x) {\n"
                                       "  x[0] = undefined_thing;\n}"}};
  std::string msg = error_message([&] { nvrtc_check(kernels, "sm_90"); });
  EXPECT_THAT(msg, StartsWith("CUDA: kernel broken_kernel failed to compile: "));
  EXPECT_THAT(msg, HasSubstr("identifier \"undefined_thing\" is undefined"));
  EXPECT_TRUE(cache_entries("nvrtc-check").empty());  // nothing of a failed batch is remembered
}

TEST(CudaDevice, ReportsWhyThereIsNoDevice) {
  std::unique_ptr<Device> device = make_cuda_device();
  if (device) {
    EXPECT_EQ(cuda_unavailable_reason(), "");
    EXPECT_EQ(device->name(), "CUDA");
    return;
  }
  EXPECT_THAT(cuda_unavailable_reason(), HasSubstr("driver"));
}

// A GPU, where there is one: these run in the GPU check script and skip elsewhere.
class CudaGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { device_ = make_cuda_device().release(); }
  static void TearDownTestSuite() {
    delete device_;
    device_ = nullptr;
  }
  void SetUp() override {
    if (!device_) GTEST_SKIP() << "no CUDA device: " << cuda_unavailable_reason();
  }
  CudaDevice& gpu() { return dynamic_cast<CudaDevice&>(*device_); }

  // A device buffer holding `host`, freed with the test.
  template <typename T>
  void* upload(const std::vector<T>& host) {
    void* p = gpu().allocator().alloc(host.size() * sizeof(T));
    gpu().allocator().copyin(p, host.data(), host.size() * sizeof(T));
    buffers_.push_back({p, host.size() * sizeof(T)});
    return p;
  }
  template <typename T>
  std::vector<T> download(void* p, size_t n) {
    std::vector<T> out(n);
    gpu().allocator().copyout(out.data(), p, n * sizeof(T));
    return out;
  }
  void TearDown() override {
    for (auto [p, bytes] : buffers_) gpu().allocator().free(p, bytes);
  }

  static Device* device_;
  std::vector<std::pair<void*, size_t> > buffers_;
};
Device* CudaGpu::device_ = nullptr;

LaunchSpec blocks_of_128(int64_t n, int nargs) {
  LaunchSpec l;
  l.global = {(n + 127) / 128, 1, 1};
  l.local = {128, 1, 1};
  l.nargs = nargs;
  return l;
}

TEST_F(CudaGpu, DescribesItself) {
  EXPECT_EQ(gpu().name(), "CUDA");
  EXPECT_EQ(gpu().language(), runtime::Language::kCuda);
  EXPECT_TRUE(gpu().is_accelerator());
  EXPECT_THAT(gpu().arch(), ::testing::MatchesRegex("sm_[0-9]+"));
  EXPECT_FALSE(gpu().gpu_name().empty());
  EXPECT_GT(gpu().total_memory(), 0u);
  EXPECT_NE(gpu().stream(), nullptr);
}

TEST_F(CudaGpu, RunsAnAddKernel) {
  std::vector<float> a(1000), b(1000);
  for (int i = 0; i < 1000; i++) a[i] = 0.5f * i - 7, b[i] = std::sin(i * 0.1f);
  void* out = upload(std::vector<float>(1000, -1.0f));
  void* bufs[3] = {out, upload(a), upload(b)};
  auto program = gpu().compile("add", kAdd, blocks_of_128(1000, 3));
  program->run(bufs);
  std::vector<float> got = download<float>(out, 1000);  // waits for the launch
  for (int i = 0; i < 1000; i++)
    ASSERT_EQ(got[i], static_cast<float>(static_cast<double>(a[i]) + b[i])) << "at " << i;
  EXPECT_EQ(gpu().compile("add", kAdd, blocks_of_128(1000, 3)).get(), program.get());
}

TEST_F(CudaGpu, RunsAHalfKernel) {
  // half and bfloat16 bit patterns: 1.5 (0x3E00), 2.0 in bfloat16 (0x4000); 1.5 * 2 + 1 = 4.0
  void* out = upload(std::vector<uint16_t>(32, 0));
  void* bufs[3] = {out, upload(std::vector<uint16_t>(32, 0x3E00)),
                   upload(std::vector<uint16_t>(32, 0x4000))};
  LaunchSpec l;
  l.local = {32, 1, 1};
  l.nargs = 3;
  gpu().compile("scale_half", kHalf, l)->run(bufs);
  EXPECT_THAT(download<uint16_t>(out, 32), ::testing::Each(0x4400));  // 4.0 in half
}

TEST_F(CudaGpu, LaunchesA2dGridFromAnotherThread) {
  const char* src = R"(
extern "C" __global__ void fill_index(int* out) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 20 && y < 6) out[y * 20 + x] = 100 * y + x;
})";
  void* out = upload(std::vector<int>(120, -1));
  LaunchSpec l;
  l.global = {3, 2, 1};
  l.local = {8, 4, 1};
  l.nargs = 1;
  auto program = gpu().compile("fill_index", src, l);
  std::thread([&] {
    void* bufs[1] = {out};
    program->run(bufs);
    gpu().synchronize();
  }).join();
  std::vector<int> got = download<int>(out, 120);
  for (int y = 0; y < 6; y++)
    for (int x = 0; x < 20; x++) ASSERT_EQ(got[y * 20 + x], 100 * y + x);
}

TEST_F(CudaGpu, TimesLaunchesWithEvents) {
  void* out = upload(std::vector<float>(1000));
  void* bufs[3] = {out, upload(std::vector<float>(1000, 1)), upload(std::vector<float>(1000, 2))};
  auto program = gpu().compile("add", kAdd, blocks_of_128(1000, 3));
  double ms = gpu().time_ms([&] {
    for (int i = 0; i < 10; i++) program->run(bufs);
  });
  EXPECT_GT(ms, 0);
  EXPECT_LT(ms, 1000);
  EXPECT_THAT(download<float>(out, 1000), ::testing::Each(3.0f));
}

TEST_F(CudaGpu, GraphsReplayCapturedLaunches) {
  const char* src = R"(
extern "C" __global__ void increment(float* x) { x[threadIdx.x] += 1.0f; })";
  void* x = upload(std::vector<float>(64, 10));
  void* bufs[1] = {x};
  LaunchSpec l;
  l.local = {64, 1, 1};
  l.nargs = 1;
  auto program = gpu().compile("increment", src, l);
  std::unique_ptr<CudaGraph> graph = gpu().capture([&] {
    program->run(bufs);
    program->run(bufs);
  });
  EXPECT_THAT(download<float>(x, 64), ::testing::Each(10.0f));  // captured, not run
  for (int i = 0; i < 3; i++) graph->replay();
  EXPECT_THAT(download<float>(x, 64), ::testing::Each(16.0f));
}

TEST_F(CudaGpu, CachesFreedDeviceMemory) {
  Allocator& a = gpu().allocator();
  void* p = a.alloc(4096);
  a.free(p, 4096);
  size_t hits = a.cache_hits();
  void* q = a.alloc(4096);
  EXPECT_EQ(q, p);
  EXPECT_EQ(a.cache_hits(), hits + 1);
  a.free(q, 4096);
}

// Pinned host memory is page-locked memory the DMA reads itself: copyin waits for the copy, so
// the caller may overwrite the source (a loader refilling a batch) as soon as it returns.
TEST_F(CudaGpu, CopiesFromPinnedHostMemory) {
  Allocator& a = gpu().allocator();
  const size_t n = 1 << 22;  // 16 MiB: a DMA that takes a while
  tc::runtime::PinnedVector<float> host(n, 0.0f, tc::runtime::PinnedAllocator<float>(&a));
  for (size_t i = 0; i < n; i++) host[i] = static_cast<float>(i % 1000) - 0.5f;
  void* p = a.alloc(n * sizeof(float));
  buffers_.push_back({p, n * sizeof(float)});
  a.copyin(p, host.data() + 1, (n - 1) * sizeof(float));  // from inside the block too
  std::fill(host.begin(), host.end(), -1.0f);
  std::vector<float> got = download<float>(p, n - 1);
  for (size_t i = 0; i + 1 < n; i++)
    ASSERT_EQ(got[i], static_cast<float>((i + 1) % 1000) - 0.5f) << "at " << i;
}

TEST_F(CudaGpu, ErrorsNameTheKernelAndTheProblem) {
  LaunchSpec too_wide = blocks_of_128(1000, 3);
  too_wide.local = {2048, 1, 1};
  std::string msg = error_message([&] { gpu().compile("add", kAdd, too_wide); });
  EXPECT_THAT(msg, HasSubstr("CUDA: kernel add"));
  EXPECT_THAT(msg, HasSubstr("2048"));
  msg = error_message([&] { gpu().compile("nope", "extern \"C\" __global__ void nope( {}", {}); });
  EXPECT_THAT(msg, StartsWith("CUDA: kernel nope failed to compile: "));
  msg = error_message([&] { gpu().allocator().alloc(size_t{1} << 60); });
  EXPECT_THAT(msg, HasSubstr("cuMemAlloc of 1152921504606846976 bytes failed"));
}

TEST(Cublas, LoadsWithTheToolkit) {
  std::string why;
  EXPECT_TRUE(cublas_available(&why)) << why;
}

// Half and bfloat16 bit patterns of values they represent exactly.
uint16_t half_bits(float x) { return std::bit_cast<uint16_t>(static_cast<_Float16>(x)); }
float from_half_bits(uint16_t h) { return static_cast<float>(std::bit_cast<_Float16>(h)); }
uint16_t bfloat16_bits(float x) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(x) >> 16); }
float from_bfloat16_bits(uint16_t h) { return std::bit_cast<float>(uint32_t{h} << 16); }

TEST_F(CudaGpu, CublasGemmMatchesADoubleLoopInEachDtype) {
  Cublas blas(gpu());
  const int m = 70, n = 36, k = 50;
  // Small integers and halves: exact in every dtype, so only the products' sums can round.
  std::vector<float> a(m * k), b(k * n);
  for (int i = 0; i < m * k; i++) a[i] = static_cast<float>((i * 7) % 9 - 4) / 2;
  for (int i = 0; i < k * n; i++) b[i] = static_cast<float>((i * 5) % 7 - 3);
  std::vector<double> want(m * n, 0.0);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      for (int p = 0; p < k; p++) want[i * n + j] += double{a[i * k + p]} * b[p * n + j];

  void* c32 = upload(std::vector<float>(m * n));
  blas.gemm(dtypes::float32, m, n, k, upload(a), upload(b), c32);
  std::vector<float> got = download<float>(c32, m * n);
  for (int i = 0; i < m * n; i++) ASSERT_EQ(got[i], want[i]) << "float32 at " << i;

  // Sums are multiples of 0.5 below 300: exact in half; bfloat16's 8 bits round them.
  struct Format {
    DType dtype;
    uint16_t (*to_bits)(float);
    float (*from_bits)(uint16_t);
    double tolerance;
  };
  for (auto [dtype, to_bits, from_bits, tolerance] :
       {Format{dtypes::float16, half_bits, from_half_bits, 0.0},
        Format{dtypes::bfloat16, bfloat16_bits, from_bfloat16_bits, 1.0 / 256}}) {
    std::vector<uint16_t> a16(m * k), b16(k * n);
    for (int i = 0; i < m * k; i++) a16[i] = to_bits(a[i]);
    for (int i = 0; i < k * n; i++) b16[i] = to_bits(b[i]);
    void* c16 = upload(std::vector<uint16_t>(m * n));
    blas.gemm(dtype, m, n, k, upload(a16), upload(b16), c16);
    std::vector<uint16_t> bits = download<uint16_t>(c16, m * n);
    for (int i = 0; i < m * n; i++)
      ASSERT_NEAR(from_bits(bits[i]), want[i], tolerance * std::abs(want[i]))
          << dtype.name() << " at " << i;
  }

  EXPECT_THAT(error_message([&] { blas.gemm(dtypes::int32, m, n, k, c32, c32, c32); }),
              HasSubstr("cuBLAS gemm: dtype int32 is not float32, float16 or bfloat16"));
  EXPECT_THAT(error_message([&] { blas.gemm(dtypes::float32, 0, n, k, c32, c32, c32); }),
              HasSubstr("sizes m=0 n=36 k=50"));
}

#endif  // TC_HAVE_CUDA

}  // namespace
}  // namespace tc::runtime
