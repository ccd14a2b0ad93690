// The walking skeleton's main job: build a few lazy expressions, realize them, and show each
// kernel with its time and GFLOP/s (DEBUG=2 is on unless DEBUG is set).
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tinycore/engine/realize.h"
#include "tinycore/tensor.h"

using tc::Tensor;

int main() {
  setenv("DEBUG", "2", /*overwrite=*/0);
  try {
    const int64_t n = 512;
    std::vector<float> av(n * n), bv(n * n);
    for (int64_t i = 0; i < n * n; i++) {
      av[i] = static_cast<float>((i * 7) % 13) / 13.0f - 0.5f;
      bv[i] = static_cast<float>((i * 5) % 11) / 11.0f - 0.5f;
    }
    Tensor a(av, tc::Shape{n, n}), b(bv, tc::Shape{n, n});

    std::printf("-- elementwise: (a + b) * 2 - 1, one fused kernel\n");
    Tensor e = ((a + b) * 2.0 - 1.0).realize();

    std::printf("-- reduce: ((a + b) * a).sum(1), elementwise fused into the reduce\n");
    Tensor r = ((a + b) * a).sum(1).realize();

    std::printf(
        "-- matmul %lldx%lld as broadcast-multiply-sum: (a[:, None, :] * b.T[None]).sum(2)\n",
        static_cast<long long>(n), static_cast<long long>(n));
    Tensor mm = (a.reshape({n, 1, n}) * b.permute({1, 0}).reshape({1, n, n})).sum(2);
    for (int run = 0; run < 3; run++)
      mm = (a.reshape({n, 1, n}) * b.permute({1, 0}).reshape({1, n, n})).sum(2).realize();

    // check one output element against a double-precision dot product
    std::vector<float> out = mm.data<float>();
    double ref = 0;
    for (int64_t k = 0; k < n; k++) ref += static_cast<double>(av[5 * n + k]) * bv[k * n + 7];
    std::printf("mm[5, 7] = %.6f (double reference %.6f)\n", out[5 * n + 7], ref);
    if (std::abs(out[5 * n + 7] - ref) > 1e-3) {
      std::fprintf(stderr, "error: the matmul does not match its reference\n");
      return 1;
    }
    std::printf("total: %lld kernels, %.3f GFLOP, %.2f ms\n",
                static_cast<long long>(tc::engine::GlobalCounters::kernel_count),
                tc::engine::GlobalCounters::global_ops / 1e9,
                tc::engine::GlobalCounters::time_sum_s * 1e3);
    return 0;
  } catch (const tc::Error& err) {
    std::fprintf(stderr, "error: %s\n", err.what());
    return 1;
  }
}
