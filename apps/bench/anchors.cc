#include "apps/bench/anchors.h"

#include <cblas.h>
#include <dlfcn.h>
#include <immintrin.h>
#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
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

Workload stream_triad(int threads) {
  const size_t n = kTriadBytes / 3 / sizeof(double);
  auto a = std::make_shared<std::vector<double>>(n),
       b = std::make_shared<std::vector<double>>(n, 1.0),
       c = std::make_shared<std::vector<double>>(n, 2.0);
  return [=] {
    double *pa = a->data(), *pb = b->data(), *pc = c->data();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) pa[i] = pb[i] + 3.0 * pc[i];
  };
}

double stream_triad_gbps(int threads) {
  Workload triad = stream_triad(threads);
  double best = 0;
  for (int run = 0; run < 5; run++) {
    double t0 = now();
    triad();
    best = std::max(best, kTriadBytes / (now() - t0) / 1e9);
  }
  return best;
}

namespace {
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
}  // namespace

Workload eigen_sgemm(int m, int k, int n, int threads) {
  auto a = std::make_shared<RowMajor>(RowMajor::Random(m, k)),
       b = std::make_shared<RowMajor>(RowMajor::Random(k, n)), c = std::make_shared<RowMajor>(m, n);
  return [=] {
    Eigen::setNbThreads(threads);
    c->noalias() = *a * *b;
  };
}

namespace {

// The row-major operands of C = A*B (A m x k, B k x n) that the BLAS anchors own.
struct GemmOperands {
  std::vector<float> a, b, c;
};
std::shared_ptr<GemmOperands> gemm_operands(int m, int k, int n) {
  return std::make_shared<GemmOperands>(
      GemmOperands{std::vector<float>(static_cast<size_t>(m) * k, 0.5f),
                   std::vector<float>(static_cast<size_t>(k) * n, 0.25f),
                   std::vector<float>(static_cast<size_t>(m) * n)});
}

}  // namespace

Workload openblas_sgemm(int m, int k, int n, int threads) {
  auto g = gemm_operands(m, k, n);
  return [=] {
    openblas_set_num_threads(threads);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, g->a.data(), k,
                g->b.data(), n, 0.0f, g->c.data(), n);
  };
}

const char* openblas_core() { return openblas_get_corename(); }

namespace {

// BLIS 0.9's typed API as Debian builds it (its blis.h: dim_t and inc_t are gint_t, 64 bits on
// x86-64, checked when the library loads; trans_t is an int enum, BLIS_NO_TRANSPOSE = 0).
using BlisInt = int64_t;
constexpr int kBlisNoTranspose = 0;
struct Blis {
  void (*sgemm)(int transa, int transb, BlisInt m, BlisInt n, BlisInt k, const float* alpha,
                const float* a, BlisInt rsa, BlisInt csa, const float* b, BlisInt rsb, BlisInt csb,
                const float* beta, float* c, BlisInt rsc, BlisInt csc);
  void (*set_num_threads)(BlisInt n);
  std::string info;
};

// BLIS, loaded once (and kept for the process), or nullptr after saying why on stderr.
const Blis* blis() {
  static const std::optional<Blis> lib = []() -> std::optional<Blis> {
    auto skip = [](const char* why) {
      std::fprintf(stderr, "bench: no BLIS anchor (%s)\n", why);
      return std::nullopt;
    };
#if defined(__SANITIZE_ADDRESS__)
    return skip("the sanitizers' runtime refuses dlopen with RTLD_DEEPBIND");
#else
    void* h = dlopen("libblis.so.4", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!h) return skip(dlerror());
    auto int_size = reinterpret_cast<BlisInt (*)()>(dlsym(h, "bli_info_get_int_type_size"));
    auto version = reinterpret_cast<const char* (*)()>(dlsym(h, "bli_info_get_version_str"));
    auto arch_id = reinterpret_cast<int (*)()>(dlsym(h, "bli_arch_query_id"));
    auto arch_name = reinterpret_cast<const char* (*)(int)>(dlsym(h, "bli_arch_string"));
    Blis b{
        reinterpret_cast<decltype(Blis::sgemm)>(dlsym(h, "bli_sgemm")),
        reinterpret_cast<decltype(Blis::set_num_threads)>(dlsym(h, "bli_thread_set_num_threads")),
        ""};
    if (!b.sgemm || !b.set_num_threads || !int_size || !version || !arch_id || !arch_name ||
        int_size() != 64)
      return skip("libblis.so.4 is not a BLIS 0.9 with 64-bit dim_t");
    b.info = std::string("BLIS ") + version() + " (" + arch_name(arch_id()) + ")";
    return b;
#endif
  }();
  return lib ? &*lib : nullptr;
}

}  // namespace

std::optional<Workload> blis_sgemm(int m, int k, int n, int threads) {
  const Blis* lib = blis();
  if (!lib) return std::nullopt;
  auto g = gemm_operands(m, k, n);
  return [=] {
    const float one = 1, zero = 0;
    lib->set_num_threads(threads);
    // row-major: the row stride is the row's length, the column stride 1
    lib->sgemm(kBlisNoTranspose, kBlisNoTranspose, m, n, k, &one, g->a.data(), k, 1, g->b.data(), n,
               1, &zero, g->c.data(), n, 1);
  };
}

std::string blis_info() {
  const Blis* lib = blis();
  return lib ? lib->info : "";
}

Workload eigen_im2col_conv(const ConvShape& s, int threads) {
  const int oh = s.out_h(), ow = s.out_w(), kk = s.cin * s.k * s.k;
  auto x = std::make_shared<RowMajor>(RowMajor::Random(s.batch * s.cin, s.h * s.w));
  auto w = std::make_shared<RowMajor>(RowMajor::Random(s.cout, kk));
  auto cols = std::make_shared<RowMajor>(kk, oh * ow),
       out = std::make_shared<RowMajor>(s.cout, oh * ow);
  return [=] {
    Eigen::setNbThreads(threads);
    for (int b = 0; b < s.batch; b++) {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int r = 0; r < kk; r++) {
        int ci = r / (s.k * s.k), ky = r / s.k % s.k, kx = r % s.k;
        const float* plane = x->data() + static_cast<size_t>(b * s.cin + ci) * s.h * s.w;
        float* dst = cols->data() + static_cast<size_t>(r) * oh * ow;
        for (int oy = 0; oy < oh; oy++) {
          int iy = oy * s.stride - s.pad + ky;
          for (int ox = 0; ox < ow; ox++) {
            int ix = ox * s.stride - s.pad + kx;
            bool in = iy >= 0 && iy < s.h && ix >= 0 && ix < s.w;
            dst[oy * ow + ox] = in ? plane[iy * s.w + ix] : 0.0f;
          }
        }
      }
      out->noalias() = *w * *cols;
    }
  };
}

}  // namespace bench
