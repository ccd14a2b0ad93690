#include "apps/bench/device_peak.h"

#include <vector>

#include "apps/bench/measure.h"
#ifdef TC_HAVE_CUDA
#include "tinycore/runtime/buffer.h"
#include "tinycore/runtime/cublas.h"
#include "tinycore/runtime/cuda_device.h"
#endif

namespace bench {

std::optional<VendorPeak> vendor_peak(const std::string& gpu_name) {
  // NVIDIA's datasheets; the more specific names first (an H100 PCIe is also an "H100").
  static const VendorPeak kTable[] = {
      {"H200", 67, 989, 4.8},
      {"H100 PCIe", 51, 756, 2.0},
      {"H100 NVL", 60, 835, 3.9},
      {"H100", 67, 989, 3.35},
      {"A100-SXM4-80GB", 19.5, 312, 2.04},
      {"A100 80GB PCIe", 19.5, 312, 1.94},
      {"A100", 19.5, 312, 1.56},
      {"L40S", 91.6, 362, 0.864},
      {"L4", 30.3, 121, 0.3},
      {"RTX 4090", 82.6, 165, 1.01},
      {"V100", 15.7, 125, 0.9},
      {"T4", 8.1, 65, 0.32},
  };
  for (const VendorPeak& p : kTable)
    if (gpu_name.find(p.gpu) != std::string::npos) return p;
  return std::nullopt;
}

double kernel_fma_gflops(int64_t n, int chain, int reps) {
  // a and b are tensors, not constants, so that no rewrite can fold the chain; each element's
  // chain is one kernel's work, with the loads of a and b hoisted out of it by the compiler.
  tc::Tensor x = random({n}), a = random({n}) * 0.01f + 1.0f, b = random({n}) * 0.01f;
  tc::Tensor y = x;
  for (int i = 0; i < chain; i++) y = y * a + b;
  double ms = time_ms(y, reps);
  return 2.0 * chain * static_cast<double>(n) / ms / 1e6;
}

double kernel_add_gbps(int64_t n, int reps) {
  tc::Tensor x = random({n}), y = random({n});
  double ms = time_ms(x + y, reps);
  return 3.0 * 4 * static_cast<double>(n) / ms / 1e6;
}

#ifdef TC_HAVE_CUDA
double cublas_gemm_ms(tc::DType dtype, int64_t m, int64_t k, int64_t n, int reps) {
  auto& gpu = dynamic_cast<tc::runtime::CudaDevice&>(device());
  tc::runtime::Cublas blas(gpu);
  auto upload = [&](int64_t rows, int64_t cols) {
    auto buf = std::make_unique<tc::runtime::Buffer>(gpu, dtype, rows * cols);
    std::vector<uint8_t> bytes = random({rows, cols}).cast(dtype).raw_bytes();
    buf->copyin(bytes.data(), bytes.size());
    return buf;
  };
  auto a = upload(m, k), b = upload(k, n);
  tc::runtime::Buffer c(gpu, dtype, m * n);
  return device_time_ms(
      [&] {
        blas.gemm(dtype, m, n, k, a->ensure_allocated(), b->ensure_allocated(),
                  c.ensure_allocated());
      },
      reps);
}
#endif

}  // namespace bench
