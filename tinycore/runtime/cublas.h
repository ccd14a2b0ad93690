// cuBLAS, loaded at run time like the driver (never linked): the vendor GEMM that `bench`
// measures tinycore's CUDA kernels against, and an opt-in fast path (CUBLAS=1).
#pragma once

#include <cstdint>
#include <string>

#include "tinycore/dtype.h"
#include "tinycore/runtime/cuda_device.h"

namespace tc::runtime {

// Whether libcublas can be loaded; when it cannot, `why` (if given) says why.
bool cublas_available(std::string* why = nullptr);

// A cuBLAS handle on a CUDA device's stream, so its GEMMs are ordered with the device's kernels.
class Cublas {
 public:
  // Throws tc::Error saying why when cuBLAS cannot be loaded or started.
  explicit Cublas(CudaDevice& gpu);
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // c = a @ b for row-major a (m×k), b (k×n), c (m×n): device buffers (handles) of `dtype`
  // (float32, float16 or bfloat16), accumulated in float32 (no TF32), on tensor cores where
  // the dtype allows; enqueued like a kernel. Throws tc::Error naming what is wrong: another
  // dtype, sizes out of range, a cuBLAS failure.
  void gemm(DType dtype, int64_t m, int64_t n, int64_t k, const void* a, const void* b, void* c);

 private:
  CudaDevice& gpu_;
  void* handle_ = nullptr;  // cublasHandle_t
};

}  // namespace tc::runtime
