// What tinycore is measured against, in the same process: the machine's FMA peak and memory
// bandwidth, Eigen (built -O3 -march=native with OpenMP, as in shared/reference) and OpenBLAS.
// Times are the best of a few runs, in milliseconds.
#pragma once

namespace bench {

double peak_fma_gflops(int threads);    // GFLOP/s
double stream_triad_gbps(int threads);  // a[i] = b[i] + s*c[i] over 3 x 64 MiB, GB/s
// C = A*B with A m x k, B k x n, fp32 row-major
double eigen_sgemm_ms(int m, int k, int n, int threads);
double openblas_sgemm_ms(int m, int k, int n, int threads);
const char* openblas_core();  // the kernels OpenBLAS chose ("SkylakeX", "Haswell", ...)

// A 2-D convolution (NCHW input, OIHW weight, no bias) as im2col + Eigen GEMM, the way a
// framework without a direct conv does it.
struct ConvShape {
  int batch, cin, h, w, cout, k, stride, pad;
  int out_h() const { return (h + 2 * pad - k) / stride + 1; }
  int out_w() const { return (w + 2 * pad - k) / stride + 1; }
};
double eigen_im2col_conv_ms(const ConvShape& s, int threads);

}  // namespace bench
