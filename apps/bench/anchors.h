// What tinycore is measured against, in the same process: the machine's FMA peak and memory
// bandwidth, and Eigen's SGEMM (built -O3 -march=native with OpenMP, as in shared/reference).
#pragma once

namespace bench {

double peak_fma_gflops(int threads);        // best of a few runs
double stream_triad_gbps(int threads);      // a[i] = b[i] + s*c[i] over 3 x 64 MiB
double eigen_sgemm_ms(int n, int threads);  // C = A*B, n x n fp32, best of a few runs

}  // namespace bench
