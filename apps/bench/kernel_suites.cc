#include "apps/bench/kernel_suites.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "apps/bench/anchors.h"
#include "apps/bench/dnnl_anchors.h"
#include "apps/bench/measure.h"
#include "tinycore/runtime/thread_pool.h"
#include "tinycore/tensor.h"

namespace bench {
namespace {

using tc::Tensor;

// Anchors by the name of the ratio each gives.
using Anchors = std::vector<std::pair<std::string, Workload>>;

// Adds the anchor that `make` sets up, or says on stderr why there is none (a shape oneDNN
// makes no primitive for is no reason to stop the run).
void add_anchor(Anchors& anchors, const std::string& ratio, const std::function<Workload()>& make) {
  try {
    anchors.emplace_back(ratio, make());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench: no %s: %s\n", ratio.c_str(), e.what());
  }
}

// The kernels of `t` timed in turns with `anchors` into r: its median time, a ratio an anchor.
void time_case(Result& r, const Tensor& t, const Anchors& anchors, int rounds) {
  std::vector<Workload> workloads;
  for (const auto& a : anchors) workloads.push_back(a.second);
  Turns turns = time_beside(t, workloads, rounds);
  r.time_ms = turns.median_ms(0);
  for (size_t i = 0; i < anchors.size(); i++) r.set_ratio(anchors[i].first, turns.ratio(i + 1));
}

// The libraries behind the CPU's anchors, said once.
void say_libraries(int threads) {
  static bool said = false;
  if (said || !on_cpu()) return;
  said = true;
  std::string blis = blis_info();
  std::printf("anchors: %s, %s\n", onednn_info(threads).c_str(),
              blis.empty() ? "no BLIS" : blis.c_str());
}

// The distinct conv layers of ResNet-18 and ResNet-50 (torchvision's: the stride of a bottleneck
// on its 3x3) at 224x224, batch left to the caller. A layer of both nets is named once.
struct ConvLayer {
  const char* name;
  ConvShape shape;
};
ConvShape layer(int cin, int side, int cout, int k, int stride) {
  return {1, cin, side, side, cout, k, stride, k / 2};
}
const std::vector<ConvLayer>& resnet_layers() {
  static const std::vector<ConvLayer> layers = {
      {"r18/r50 stem 7x7/2 3>64", layer(3, 224, 64, 7, 2)},
      {"r18/r50 l1 3x3 64", layer(64, 56, 64, 3, 1)},
      {"r18/r50 l2 3x3 128", layer(128, 28, 128, 3, 1)},
      {"r18/r50 l3 3x3 256", layer(256, 14, 256, 3, 1)},
      {"r18/r50 l4 3x3 512", layer(512, 7, 512, 3, 1)},
      {"r18 l2 3x3/2 64>128", layer(64, 56, 128, 3, 2)},
      {"r18 l2 down 1x1/2 64>128", layer(64, 56, 128, 1, 2)},
      {"r18 l3 3x3/2 128>256", layer(128, 28, 256, 3, 2)},
      {"r18 l3 down 1x1/2 128>256", layer(128, 28, 256, 1, 2)},
      {"r18 l4 3x3/2 256>512", layer(256, 14, 512, 3, 2)},
      {"r18 l4 down 1x1/2 256>512", layer(256, 14, 512, 1, 2)},
      {"r50 l1 1x1 64>64", layer(64, 56, 64, 1, 1)},
      {"r50 l1 1x1 256>64", layer(256, 56, 64, 1, 1)},
      {"r50 l1 1x1 64>256 (expand, down)", layer(64, 56, 256, 1, 1)},
      {"r50 l2 1x1 256>128 56x56", layer(256, 56, 128, 1, 1)},
      {"r50 l2 3x3/2 128", layer(128, 56, 128, 3, 2)},
      {"r50 l2 1x1 128>512", layer(128, 28, 512, 1, 1)},
      {"r50 l2 1x1 512>128", layer(512, 28, 128, 1, 1)},
      {"r50 l2 down 1x1/2 256>512", layer(256, 56, 512, 1, 2)},
      {"r50 l3 1x1 512>256 28x28", layer(512, 28, 256, 1, 1)},
      {"r50 l3 3x3/2 256", layer(256, 28, 256, 3, 2)},
      {"r50 l3 1x1 256>1024", layer(256, 14, 1024, 1, 1)},
      {"r50 l3 1x1 1024>256", layer(1024, 14, 256, 1, 1)},
      {"r50 l3 down 1x1/2 512>1024", layer(512, 28, 1024, 1, 2)},
      {"r50 l4 1x1 1024>512 14x14", layer(1024, 14, 512, 1, 1)},
      {"r50 l4 3x3/2 512", layer(512, 14, 512, 3, 2)},
      {"r50 l4 1x1 512>2048", layer(512, 7, 2048, 1, 1)},
      {"r50 l4 1x1 2048>512", layer(2048, 7, 512, 1, 1)},
      {"r50 l4 down 1x1/2 1024>2048", layer(1024, 14, 2048, 1, 2)},
  };
  return layers;
}

// max |a - b| over max |b|: how far tinycore's result is from oneDNN's, relative to its size (NaN
// where b is all zeros: agreeing with that proves nothing).
double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); i++) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return scale > 0 ? diff / scale : NAN;
}

}  // namespace

std::vector<Result> gemm_suite(bool small, const Peaks& p) {
  using Shape3 = std::array<int64_t, 3>;
  std::vector<Shape3> shapes =
      small ? std::vector<Shape3>{{64, 64, 64}, {128, 128, 128}}
            : std::vector<Shape3>{
                  {512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 1024, 1024}};
  if (!small && device().is_accelerator()) shapes.push_back({4096, 4096, 4096});
  // 15 rounds: on a shared machine the neighbours' load comes and goes over seconds (the same
  // kernel takes 60 ms, then 110 ms), and more rounds give every workload its quiet moments
  const int threads = tc::runtime::cpu_threads(), reps = small ? 2 : 15;
  say_libraries(threads);
  std::vector<Result> results;
  for (tc::DType dtype : p.gemm_dtypes)
    for (const auto& [m, k, n] : shapes) {
      Tensor a = random({m, k}).cast(dtype).realize(), b = random({k, n}).cast(dtype).realize();
      std::string name = absl::StrFormat("%dx%dx%d", m, k, n);
      if (dtype != tc::dtypes::float32) name += " " + dtype.name();
      Result r{"gemm", name, true};
      const int mi = static_cast<int>(m), ki = static_cast<int>(k), ni = static_cast<int>(n);
      Anchors anchors;
      if (on_cpu()) {
        anchors = {{"ratio_vs_eigen", eigen_sgemm(mi, ki, ni, threads)},
                   {"ratio_vs_openblas", openblas_sgemm(mi, ki, ni, threads)}};
        if (std::optional<Workload> blis = blis_sgemm(mi, ki, ni, threads))
          anchors.emplace_back("ratio_vs_blis", *blis);
        add_anchor(anchors, "ratio_vs_onednn", [&] { return onednn_sgemm(mi, ki, ni, threads); });
      }
      time_case(r, a.matmul(b), anchors, reps);
      r.rate = 2.0 * m * n * k / r.time_ms / 1e6;
      if (dtype == tc::dtypes::float32) r.ratios["fraction_of_peak"] = r.rate / p.gflops;
      if (p.vendor)
        r.ratios["fraction_of_vendor_peak"] =
            r.rate / 1e3 /
            (dtype == tc::dtypes::float32 ? p.vendor->fp32_tflops : p.vendor->fp16_tensor_tflops);
#ifdef TC_HAVE_CUDA
      if (p.cuda) r.ratios["ratio_vs_cublas"] = cublas_gemm_ms(dtype, m, k, n, reps) / r.time_ms;
#endif
      print(r);
      results.push_back(r);
    }
  return results;
}

// Each layer at batch 1 and 8, in three passes: forward (y from x and w), backward-data (dx from
// the upstream gradient dy and w) and backward-weights (dw from x and dy), tinycore's passes being
// the gradients of its conv2d. On the CPU beside oneDNN's primitive for the same pass on the same
// values (its result compared once: max_rel_diff_vs_onednn), and forward beside im2col + Eigen.
std::vector<Result> conv_suite(bool small, const Peaks& p) {
  const std::vector<ConvLayer> tiny = {{"tiny 3x3", {1, 8, 16, 16, 8, 3, 1, 1}},
                                       {"tiny 1x1/2", {1, 8, 16, 16, 16, 1, 2, 0}}};
  const std::vector<int> batches = small ? std::vector<int>{2} : std::vector<int>{1, 8};
  const int threads = tc::runtime::cpu_threads(), rounds = small ? 2 : 5;
  const char* pass_names[] = {"fwd", "dx", "dw"};
  say_libraries(threads);
  std::vector<Result> results;
  for (int batch : batches)
    for (ConvLayer l : small ? tiny : resnet_layers()) {
      ConvShape c = l.shape;
      c.batch = batch;
      Tensor x = random({c.batch, c.cin, c.h, c.w}), w = random({c.cout, c.cin, c.k, c.k});
      Tensor y = x.conv2d(w, {.stride = c.stride, .padding = c.pad});
      // a seed of its own: were dy's values x's (same shape), a dw with its channels swapped and
      // its kernel flipped could pass for oneDNN's
      Tensor dy = random({c.batch, c.cout, c.out_h(), c.out_w()}, 777);
      // the gradients are taken before y is realized (by the check of its result)
      const Tensor passes[] = {y, y.gradient({x}, dy)[0], y.gradient({w}, dy)[0]};
      for (int i = 0; i < 3; i++) {
        const ConvPass pass = static_cast<ConvPass>(i);
        const Tensor& t = passes[i];
        Result r{"conv", absl::StrFormat("%s b%d %s", l.name, batch, pass_names[i]), true};
        Anchors anchors;
        std::function<std::vector<float>()> onednn_result;
        if (on_cpu()) {
          add_anchor(anchors, "ratio_vs_onednn", [&] {
            const Tensor& a = pass == ConvPass::kBackwardData ? dy : x;
            const Tensor& b = pass == ConvPass::kBackwardWeights ? dy : w;
            OnednnConv conv = onednn_conv(c, pass, a.data<float>(), b.data<float>(), threads);
            onednn_result = conv.result;
            return conv.run;
          });
          if (pass == ConvPass::kForward)
            anchors.emplace_back("ratio_vs_eigen_im2col", eigen_im2col_conv(c, threads));
        }
        time_case(r, t, anchors, rounds);
        // every anchor ran at least once: oneDNN's output holds its result
        if (onednn_result)
          r.fields["max_rel_diff_vs_onednn"] = max_rel_diff(t.data<float>(), onednn_result());
        r.rate =
            2.0 * c.batch * c.cout * c.out_h() * c.out_w() * c.cin * c.k * c.k / r.time_ms / 1e6;
        r.ratios["fraction_of_peak"] = r.rate / p.gflops;
        print(r);
        results.push_back(r);
      }
    }
  return results;
}

}  // namespace bench
