// The anchors of an accelerator (CL, CUDA, HIP), where Eigen and OpenBLAS mean nothing: its FMA
// peak and memory bandwidth measured with tinycore's own kernels, the vendor's datasheet figures
// where the GPU is known, and cuBLAS's GEMM on CUDA; and the peaks of a device, whichever it is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tinycore/dtype.h"

namespace bench {

// A GPU's datasheet peaks (dense, no sparsity): fp32 and fp16/bf16 tensor-core TFLOP/s (fp32
// accumulation), memory TB/s.
struct VendorPeak {
  const char* gpu;
  double fp32_tflops, fp16_tensor_tflops, memory_tbs;
};
// The figures for the GPU named `gpu_name` ("NVIDIA H200", "NVIDIA A100-SXM4-80GB", ...), or
// nullopt for a GPU not in bench's table.
std::optional<VendorPeak> vendor_peak(const std::string& gpu_name);

// The peak compute and bandwidth a device's cases are measured against.
struct Peaks {
  double gflops = 0, gbps = 0;
  std::optional<VendorPeak> vendor;
  bool cuda = false;  // cuBLAS is the GEMM anchor
  std::vector<tc::DType> gemm_dtypes = {tc::dtypes::float32};
};

// GFLOP/s of tinycore's kernel for a long chain of multiply-adds on each of `n` floats.
double kernel_fma_gflops(int64_t n, int chain, int reps);
// GB/s of tinycore's kernel for x + y over `n` floats (two reads and a write).
double kernel_add_gbps(int64_t n, int reps);

#ifdef TC_HAVE_CUDA
// Best milliseconds of cuBLAS's C = A @ B (A m x k, B k x n, row-major, in `dtype`, fp32
// accumulation) on the CUDA device; throws tc::Error saying why when cuBLAS cannot run.
double cublas_gemm_ms(tc::DType dtype, int64_t m, int64_t k, int64_t n, int reps);
#endif

}  // namespace bench
