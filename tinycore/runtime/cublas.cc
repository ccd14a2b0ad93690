#include "tinycore/runtime/cublas.h"

#include <cublas_api.h>

#include <climits>

#include "tinycore/error.h"
#include "tinycore/runtime/dynamic_library.h"

#ifndef TC_CUDA_ROOT
#define TC_CUDA_ROOT "/usr/local/cuda"
#endif

namespace tc::runtime {
namespace {

// cublas_api.h overloads cublasGemmEx in C++, so the entry points are spelled out.
using CreateFn = cublasStatus_t (*)(cublasHandle_t*);
using DestroyFn = cublasStatus_t (*)(cublasHandle_t);
using SetStreamFn = cublasStatus_t (*)(cublasHandle_t, cudaStream_t);
using StatusStringFn = const char* (*)(cublasStatus_t);
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);

struct CublasApi {
  DynamicLibrary lib{{"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                      TC_CUDA_ROOT "/lib64/libcublas.so.13", TC_CUDA_ROOT "/lib64/libcublas.so"}};
  std::string unavailable;  // why cuBLAS cannot be used; empty when it can
  CreateFn create = nullptr;
  DestroyFn destroy = nullptr;
  SetStreamFn set_stream = nullptr;
  StatusStringFn status_string = nullptr;
  GemmExFn gemm_ex = nullptr;

  CublasApi() {
    if (!lib.loaded()) {
      unavailable = "libcublas cannot be loaded (" + lib.error() + ")";
      return;
    }
    try {
      create = lib.get<CreateFn>("cublasCreate_v2");
      destroy = lib.get<DestroyFn>("cublasDestroy_v2");
      set_stream = lib.get<SetStreamFn>("cublasSetStream_v2");
      status_string = lib.get<StatusStringFn>("cublasGetStatusString");
      gemm_ex = lib.get<GemmExFn>("cublasGemmEx");
    } catch (const Error& e) {
      unavailable = e.what();
    }
  }
  void check(cublasStatus_t s, const char* call) const {
    if (s != CUBLAS_STATUS_SUCCESS) fail("cuBLAS: %s failed: %s", call, status_string(s));
  }
};

const CublasApi& api() {
  static const CublasApi a;
  if (!a.unavailable.empty()) fail("cuBLAS is not available: %s", a.unavailable);
  return a;
}

cublasHandle_t as_handle(void* h) { return static_cast<cublasHandle_t>(h); }

}  // namespace

bool cublas_available(std::string* why) {
  try {
    api();
    return true;
  } catch (const Error& e) {
    if (why) *why = e.what();
    return false;
  }
}

Cublas::Cublas(CudaDevice& gpu) : gpu_(gpu) {
  const CublasApi& cu = api();
  gpu.make_current();
  cublasHandle_t h = nullptr;
  cu.check(cu.create(&h), "cublasCreate");
  handle_ = h;
  try {
    cu.check(cu.set_stream(h, static_cast<cudaStream_t>(gpu.stream())), "cublasSetStream");
  } catch (const Error&) {
    cu.destroy(h);
    throw;
  }
}

Cublas::~Cublas() {
  gpu_.make_current();
  api().destroy(as_handle(handle_));
}

void Cublas::gemm(DType dtype, int64_t m, int64_t n, int64_t k, const void* a, const void* b,
                  void* c) {
  cudaDataType type;
  if (dtype == dtypes::float32)
    type = CUDA_R_32F;
  else if (dtype == dtypes::float16)
    type = CUDA_R_16F;
  else if (dtype == dtypes::bfloat16)
    type = CUDA_R_16BF;
  else
    fail("cuBLAS gemm: dtype %s is not float32, float16 or bfloat16", dtype.name());
  for (int64_t size : {m, n, k})
    if (size < 1 || size > INT_MAX)
      fail("cuBLAS gemm: sizes m=%d n=%d k=%d must be in 1..%d", m, n, k, INT_MAX);
  const CublasApi& cu = api();
  gpu_.make_current();
  // cuBLAS is column-major: row-major c = a @ b is column-major cᵀ = bᵀ aᵀ.
  const float one = 1, zero = 0;
  int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  cu.check(cu.gemm_ex(as_handle(handle_), CUBLAS_OP_N, CUBLAS_OP_N, ni, mi, ki, &one, b, type, ni,
                      a, type, ki, &zero, c, type, ni, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
           "cublasGemmEx");
}

}  // namespace tc::runtime
