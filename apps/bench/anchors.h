// What tinycore is measured against, in the same process: the machine's FMA peak and memory
// bandwidth, Eigen (built -O3 -march=native with OpenMP, as in shared/reference), OpenBLAS and
// BLIS (oneDNN's anchors are in dnnl_anchors.h).
// The anchors of a case are workloads (a call runs them once, on buffers they own) that bench
// times in turns with tinycore's kernels (bench::best_ms_in_turns).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace bench {

using Workload = std::function<void()>;

double peak_fma_gflops(int threads);                  // GFLOP/s
constexpr size_t kTriadBytes = 3 * 64 * 1024 * 1024;  // moved by one STREAM triad
double stream_triad_gbps(int threads);                // best of a few triads, GB/s
// a[i] = b[i] + s*c[i] on doubles, kTriadBytes moved a run
Workload stream_triad(int threads);
// C = A*B with A m x k, B k x n, fp32 row-major
Workload eigen_sgemm(int m, int k, int n, int threads);
Workload openblas_sgemm(int m, int k, int n, int threads);
const char* openblas_core();  // the kernels OpenBLAS chose ("SkylakeX", "Haswell", ...)
// BLIS's own GEMM (bli_sgemm), from libblis.so.4 opened at run time: its BLAS and CBLAS symbols
// are OpenBLAS's too, so it is opened RTLD_LOCAL | RTLD_DEEPBIND, each library keeping its own.
// nullopt where BLIS cannot be loaded (why is said once, on stderr).
std::optional<Workload> blis_sgemm(int m, int k, int n, int threads);
std::string blis_info();  // "BLIS 0.9.0 (zen3)", or "" where it cannot be loaded

// A 2-D convolution (NCHW input, OIHW weight, no bias) as im2col + Eigen GEMM, the way a
// framework without a direct conv does it.
struct ConvShape {
  int batch, cin, h, w, cout, k, stride, pad;
  int out_h() const { return (h + 2 * pad - k) / stride + 1; }
  int out_w() const { return (w + 2 * pad - k) / stride + 1; }
};
Workload eigen_im2col_conv(const ConvShape& s, int threads);

}  // namespace bench
