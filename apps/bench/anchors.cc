#include "apps/bench/anchors.h"

#include <immintrin.h>
#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace bench {
namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// 16 independent FMA chains per thread hide the FMA latency.
__attribute__((target("avx512f"))) float fma_avx512(long iters, int tid) {
  __m512 acc[16];
  for (int i = 0; i < 16; i++) acc[i] = _mm512_set1_ps(0.001f * (i + 1 + tid));
  __m512 a = _mm512_set1_ps(0.9999999f), b = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iters; it++) {
    for (int i = 0; i < 16; i++) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    __asm__ volatile("" : "+v"(a));
  }
  __m512 s = acc[0];
  for (int i = 1; i < 16; i++) s = _mm512_add_ps(s, acc[i]);
  float out[16], sum = 0;
  _mm512_storeu_ps(out, s);
  for (float f : out) sum += f;
  return sum;
}

__attribute__((target("avx2,fma"))) float fma_avx2(long iters, int tid) {
  __m256 acc[12];
  for (int i = 0; i < 12; i++) acc[i] = _mm256_set1_ps(0.001f * (i + 1 + tid));
  __m256 a = _mm256_set1_ps(0.9999999f), b = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iters; it++) {
    for (int i = 0; i < 12; i++) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    __asm__ volatile("" : "+x"(a));
  }
  float out[8], sum = 0;
  __m256 s = acc[0];
  for (int i = 1; i < 12; i++) s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(out, s);
  for (float f : out) sum += f;
  return sum;
}

}  // namespace

double peak_fma_gflops(int threads) {
  bool avx512 = __builtin_cpu_supports("avx512f");
  long iters = 20'000'000;
  double flops_per_iter = avx512 ? 16 * 16 * 2 : 12 * 8 * 2;
  double best = 0;
  float sink = 0;
  for (int run = 0; run < 4; run++) {
    double t0 = now();
#pragma omp parallel num_threads(threads)
    {
      float s =
          avx512 ? fma_avx512(iters, omp_get_thread_num()) : fma_avx2(iters, omp_get_thread_num());
#pragma omp atomic
      sink += s;
    }
    best = std::max(best, threads * iters * flops_per_iter / (now() - t0) / 1e9);
  }
  if (sink == 12345.f) std::printf(" ");  // keeps the chains from being optimized away
  return best;
}

double stream_triad_gbps(int threads) {
  const size_t n = 64 * 1024 * 1024 / sizeof(double);
  std::vector<double> a(n), b(n, 1.0), c(n, 2.0);
  double best = 0;
  for (int run = 0; run < 5; run++) {
    double t0 = now();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
    best = std::max(best, 3.0 * n * sizeof(double) / (now() - t0) / 1e9);
  }
  return best;
}

double eigen_sgemm_ms(int n, int threads) {
  Eigen::setNbThreads(threads);
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n), c(n, n);
  c.noalias() = a * b;  // warm-up
  double best = 1e30;
  for (int run = 0; run < 3; run++) {
    double t0 = now();
    c.noalias() = a * b;
    best = std::min(best, now() - t0);
  }
  return best * 1e3;
}

}  // namespace bench
