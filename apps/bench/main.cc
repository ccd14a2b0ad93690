// bench: tinycore's kernels measured side by side with the anchors (the machine's FMA peak and
// memory bandwidth, Eigen and OpenBLAS) in one run. Prints a table; --json writes one object a
// case, --plot a PNG bar chart of the ratios.
//
//   bench [--suite gemm,conv,elementwise,reduce,softmax,jit,loader,infer] [--small] [--json FILE]
//         [--plot FILE]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "apps/bench/anchors.h"
#include "apps/common/plot.h"
#include "datasets/idx.h"
#include "datasets/image_folder.h"
#include "datasets/loader.h"
#include "nn/models.h"
#include "nn/optim.h"
#include "nn/resnet.h"
#include "nn/state.h"
#include "nn/transformer.h"
#include "tinycore/engine/jit.h"
#include "tinycore/engine/realize.h"
#include "tinycore/runtime/device.h"
#include "tinycore/runtime/thread_pool.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"

using tc::Tensor;

namespace {

struct Result {
  std::string suite, name;
  bool flops = true;  // rate in GFLOP/s, else GB/s
  double time_ms = 0, rate = 0;
  std::map<std::string, double> ratios = {};  // vs the anchors: printed, in --json and --plot
  std::map<std::string, double> fields = {};  // other measurements: printed and in --json
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Tensor random(tc::Shape shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(n);
  uint32_t s = 12345;
  for (float& x : v)
    x = static_cast<float>((s = s * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
  return Tensor(v, shape).realize();
}

// Best wall time of running the kernels that compute `t` (compiled once, before timing).
double time_ms(const Tensor& t, int reps) {
  auto items = tc::schedule::create_schedule({t.uop()});
  tc::engine::run_schedule(items);  // compile and warm up
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    tc::engine::run_schedule(items);
    best = std::min(best, now() - t0);
  }
  return best * 1e3;
}

void print(const Result& r) {
  std::string ratios;
  for (const auto& [k, v] : r.ratios) ratios += absl::StrFormat("  %s %.3f", k, v);
  for (const auto& [k, v] : r.fields) ratios += absl::StrFormat("  %s %.4g", k, v);
  std::string rate = r.rate > 0
                         ? absl::StrFormat("%9.2f %s", r.rate, r.flops ? "GFLOP/s" : "GB/s   ")
                         : std::string(17, ' ');
  std::printf("%-12s %-24s %10.3f ms %s%s\n", r.suite.c_str(), r.name.c_str(), r.time_ms,
              rate.c_str(), ratios.c_str());
  std::fflush(stdout);
}

// A step of `n` tiny kernels (one elementwise op each on 16 floats), run with and without the
// JIT: per-kernel overheads, the first call's time, and replays per second.
Result jit_suite(bool small) {
  const int n = small ? 100 : 1000, reps = small ? 5 : 50;
  auto step = [n](const std::vector<Tensor>& in) {
    Tensor x = in[0];
    for (int i = 0; i < n; i++) x = (x * 1.0001f + 0.5f).contiguous();
    return std::vector<Tensor>{x};
  };
  Tensor input = random({16});
  double t0 = now();
  tc::TinyJit jit(step);
  jit({input});
  double first = now() - t0;
  jit({input});  // the capture
  t0 = now();
  for (int r = 0; r < reps; r++) jit({input});
  double replay = (now() - t0) / reps;
  t0 = now();
  for (int r = 0; r < reps; r++) tc::realize_all(step({input}));
  double plain = (now() - t0) / reps;
  Result r{"jit", absl::StrFormat("%d tiny kernels", n), false};
  r.time_ms = replay * 1e3;
  r.fields["replay_overhead_us_per_kernel"] = replay / n * 1e6;  // includes the kernels' run time
  r.fields["nojit_overhead_us_per_kernel"] = plain / n * 1e6;
  r.fields["first_step_s"] = first;
  r.fields["steps_per_s"] = 1 / replay;
  r.fields["peak_bytes"] = static_cast<double>(jit.planned_bytes());
  r.fields["kernels_per_step"] = static_cast<double>(jit.kernel_count());
  r.ratios["jit_speedup"] = plain / replay;
  return r;
}

// One training step of tinygrad's beautiful_mnist convnet (batch 512, Adam) under the JIT: the
// first step (graphs, schedules, compiles) and steady steps per second, on random data.
Result mnist_step_suite(int64_t batch, int steps) {
  tc::Tensor::manual_seed(0);
  auto model = tc::nn::mnist_convnet();
  tc::nn::Adam opt(model->parameters(), {.lr = 1e-3});
  tc::TinyJit step([&](const std::vector<Tensor>& in) {
    tc::Tensor::Train train;
    opt.zero_grad();
    Tensor loss = (*model)(in[0]).sparse_categorical_crossentropy(in[1]);
    loss.backward();
    std::vector<Tensor> to_realize = opt.schedule_step();
    for (const Tensor& b : model->buffers()) to_realize.push_back(b);
    to_realize.push_back(loss);
    tc::realize_all(to_realize);
    return std::vector<Tensor>{loss};
  });
  Tensor x = random({batch, 1, 28, 28});
  std::vector<int> labels(batch);
  for (int64_t i = 0; i < batch; i++) labels[i] = static_cast<int>(i * 7 % 10);
  Tensor y = Tensor::from_vector<int>(labels, tc::Shape{batch}).realize();
  double t0 = now();
  step({x, y});
  double first = now() - t0;
  step({x, y});  // the capture
  t0 = now();
  for (int s = 0; s < steps; s++) step({x, y})[0].realize();
  double per = (now() - t0) / steps;
  Result r{"jit", absl::StrFormat("mnist convnet step b%lld", static_cast<long long>(batch)),
           false};
  r.time_ms = per * 1e3;
  r.fields["first_step_s"] = first;
  r.fields["steps_per_s"] = 1 / per;
  r.fields["peak_bytes"] = static_cast<double>(step.planned_bytes());
  r.fields["unplanned_bytes"] = static_cast<double>(step.unplanned_bytes());
  r.fields["kernels_per_step"] = static_cast<double>(step.kernel_count());
  return r;
}

// The PyTorch anchor of the infer suite: apps/bench/torch_infer.py (beside this program's source)
// run by /usr/bin/python3 with `args`; nullopt (and why, on stderr) where PyTorch is missing.
std::optional<nlohmann::json> run_torch_infer(const std::string& args) {
  namespace fs = std::filesystem;
  fs::path script =
      fs::read_symlink("/proc/self/exe").parent_path() / "../../apps/bench/torch_infer.py";
  if (!fs::exists(script) || !fs::exists("/usr/bin/python3")) {
    std::fprintf(stderr, "bench: no PyTorch anchor (%s or /usr/bin/python3 missing)\n",
                 script.c_str());
    return std::nullopt;
  }
  std::string cmd = "/usr/bin/python3 " + script.string() + " " + args + " 2>/dev/null";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    if (pclose(p) != 0) out.clear();
  }
  nlohmann::json j = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    std::fprintf(stderr,
                 "bench: no PyTorch anchor (torch_infer.py failed: is python3-torch "
                 "installed?)\n");
    return std::nullopt;
  }
  return j;
}

// Inference at batch 1, issue 8's targets: GPT decoding (configs/gpt.yaml's model) token by
// token through GPT::decode in one TinyJit, and ResNet-18 at 224x224 under a TinyJit, each beside
// PyTorch running the same weights (saved here, loaded there), whose outputs must agree.
std::vector<Result> infer_suite(bool small) {
  std::vector<Result> results;
  std::string dir =
      std::filesystem::temp_directory_path() / ("tc_bench_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  tc::Tensor::manual_seed(0);

  tc::nn::GPTConfig g =
      small ? tc::nn::GPTConfig{256, 32, 1, 64, 2} : tc::nn::GPTConfig{256, 128, 4, 256, 4};
  tc::nn::GPT gpt(g);
  tc::nn::safe_save(gpt.state_dict(), dir + "/gpt.safetensors");
  tc::TinyJit decode([&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{gpt.decode(in[0], in[1]).realize()};
  });
  std::vector<int> made;
  int32_t token = 0;
  double t0 = now(), first = 0;
  for (int32_t pos = 0; pos < g.context; pos++) {
    if (pos == 2) t0 = now();  // after the run and the capture
    std::vector<float> logits = decode({Tensor::from_vector<int32_t>({token}, tc::Shape{1, 1}),
                                        Tensor::from_vector<int32_t>({pos}, tc::Shape{1})})[0]
                                    .data<float>();
    if (pos == 0) first = now() - t0;
    token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    made.push_back(token);
  }
  Result r{"infer",
           absl::StrFormat("gpt decode b1 (%d layers, d%d, ctx %d)", g.layers, g.width, g.context),
           false};
  r.time_ms = (now() - t0) / static_cast<double>(g.context - 2) * 1e3;
  r.fields["tokens_per_s"] = 1e3 / r.time_ms;
  r.fields["first_token_s"] = first;
  r.fields["kernels_per_token"] = static_cast<double>(decode.kernel_count());
  if (auto t = run_torch_infer(
          absl::StrFormat("--gpt %s/gpt.safetensors --gpt-shape %d,%d,%d,%d,%d --tokens %d", dir,
                          g.vocab, g.context, g.layers, g.width, g.heads, g.context))) {
    r.ratios["ratio_vs_pytorch"] =
        r.fields["tokens_per_s"] / (*t)["gpt_tokens_per_s"].get<double>();
    r.fields["same_tokens_as_pytorch"] = (*t)["gpt_tokens"].get<std::vector<int>>() == made;
  }
  print(r);
  results.push_back(r);

  if (!small) {  // ResNet-18's compile is more than the smoke test should pay
    tc::nn::ResNet resnet({.depth = 18, .cifar = false, .in_channels = 3, .classes = 1000});
    tc::nn::safe_save(resnet.state_dict(), dir + "/resnet18.safetensors");
    const int64_t side = 224;
    std::vector<float> pixels(3 * side * side);
    for (size_t i = 0; i < pixels.size(); i++)  // torch.linspace(-1, 1, n)
      pixels[i] = static_cast<float>(-1.0 + 2.0 * static_cast<double>(i) / (pixels.size() - 1));
    Tensor x = Tensor::from_vector<float>(pixels, tc::Shape{1, 3, side, side}).realize();
    tc::TinyJit forward([&](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{resnet(in[0]).realize()};
    });
    std::vector<double> times;
    std::vector<float> logits;
    const int reps = 10;
    for (int i = 0; i < reps + 2; i++) {
      double s = now();
      logits = forward({x})[0].data<float>();
      times.push_back(now() - s);
    }
    std::sort(times.begin() + 2, times.end());
    Result c{"infer", "resnet18 b1 224x224", true};
    c.time_ms = times[2 + reps / 2] * 1e3;
    c.rate = 2 * 1.814e9 / c.time_ms / 1e6;  // ResNet-18 at 224: 1.814 GMACs
    c.fields["first_run_s"] = times[0];
    if (auto t = run_torch_infer(absl::StrFormat(
            "--resnet %s/resnet18.safetensors --side %d --reps %d", dir, side, reps))) {
      c.ratios["ratio_vs_pytorch"] = (*t)["resnet_ms"].get<double>() / c.time_ms;
      std::vector<double> want = (*t)["resnet_logits"].get<std::vector<double>>();
      double err = 0;
      for (size_t i = 0; i < want.size(); i++) err = std::max(err, std::abs(want[i] - logits[i]));
      c.fields["max_abs_diff_vs_pytorch"] = err;
    }
    print(c);
    results.push_back(c);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return results;
}

// Images per second out of the DataLoader (loader construction included): Fashion-MNIST bytes to
// floats in batches of 512, assembled inline and by workers, and a folder of 32x32 PNGs decoded
// and augmented by OpenCV (pad 4 and crop, flip, normalize) as CIFAR training does.
std::vector<Result> loader_suite(bool small) {
  namespace ds = tc::datasets;
  namespace fs = std::filesystem;
  std::vector<Result> results;
  const int workers = std::clamp(tc::runtime::cpu_threads(), 2, 8);
  auto measure = [&](const std::string& name, int64_t n, int64_t numel,
                     const ds::DataLoader::EpochFetch& fetch, int64_t batch, int epochs) {
    for (int w : {0, workers}) {
      double t0 = now();
      ds::DataLoader loader(n, numel, fetch, {.batch_size = batch, .seed = 1, .workers = w});
      int64_t images = 0, batches = 0;
      for (int e = 0; e < epochs; e++) {
        if (e > 0) loader.start_epoch(e);
        while (std::optional<ds::Batch> b = loader.next()) images += b->size, batches++;
      }
      double s = now() - t0;
      Result r{"loader", absl::StrFormat("%s b%d w%d", name, batch, w), false};
      r.time_ms = s / static_cast<double>(batches) * 1e3;  // per batch
      r.fields["images_per_s"] = static_cast<double>(images) / s;
      print(r);
      results.push_back(r);
    }
  };

  ds::MnistSplit mnist = ds::load_mnist(ds::kFashionMnistDir, /*train=*/!small);
  const int64_t pixels = 28 * 28;
  measure(
      "fashion-mnist", mnist.labels.shape[0], pixels,
      [&](int64_t i, int64_t, float* x, int32_t* y) {
        const uint8_t* px = &mnist.images.data[i * pixels];
        for (int64_t k = 0; k < pixels; k++) x[k] = px[k] * (1.0f / 255);
        *y = mnist.labels.data[i];
      },
      512, small ? 1 : 3);

  // 256 random 32x32 PNGs in 4 classes, in a folder removed afterwards
  struct TempDir {
    fs::path path =
        fs::temp_directory_path() / ("tinycore-bench-images-" + std::to_string(getpid()));
    ~TempDir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } dir;
  uint32_t seed = 1;
  for (int i = 0; i < 256; i++) {
    cv::Mat image(32, 32, CV_8UC3);
    for (int k = 0; k < 32 * 32 * 3; k++)
      image.data[k] = (seed = seed * 1664525u + 1013904223u) >> 24;
    fs::path p = dir.path / absl::StrFormat("class%d", i % 4) / absl::StrFormat("%03d.png", i);
    fs::create_directories(p.parent_path());
    if (!cv::imwrite(p.string(), image)) tc::fail("bench loader: cannot write %s", p.string());
  }
  ds::ImageFolder folder(dir.path.string(), {.augment = {.crop_h = 32,
                                                         .crop_w = 32,
                                                         .pad = 4,
                                                         .hflip = true,
                                                         .mean = {0.4914f, 0.4822f, 0.4465f},
                                                         .std = {0.2470f, 0.2435f, 0.2616f}}});
  measure("png32 folder aug", folder.size(), folder.sample_numel(), folder.fetch(), 64,
          small ? 1 : 8);
  return results;
}

}  // namespace

int main(int argc, char** argv) {
  // The anchors' environment, which both libraries read as they load (so: set it, run again).
  // OpenBLAS picks its kernels by CPU model: with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset,
  // unless it does not know this CPU (Debian's 0.3.21 takes Zen 5 for a "Prescott" and runs SSE3
  // code), then its AVX-512 kernels are forced. The OpenMP threads of the Eigen anchor must
  // sleep, not spin, while OpenBLAS's own threads run.
  if (!std::getenv("TC_BENCH_ENV")) {
    setenv("TC_BENCH_ENV", "1", 1);
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv("OPENBLAS_L2_SIZE");
    if (!std::getenv("OMP_WAIT_POLICY")) setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    execv("/proc/self/exe", argv);
    std::perror("bench: re-running with the anchors' environment");
    return 1;
  }
  if (std::string(bench::openblas_core()) == "Prescott" && __builtin_cpu_supports("avx512f") &&
      !std::getenv("OPENBLAS_CORETYPE")) {
    setenv("OPENBLAS_CORETYPE", "SKYLAKEX", 1);
    execv("/proc/self/exe", argv);
    std::perror("bench: re-running with OPENBLAS_CORETYPE=SKYLAKEX");
    return 1;
  }
  std::vector<std::string> suites = {"gemm",    "conv", "elementwise", "reduce",
                                     "softmax", "jit",  "loader",      "infer"};
  std::string json, plot_file;
  bool small = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--suite" && i + 1 < argc)
      suites = absl::StrSplit(argv[++i], ',');
    else if (a == "--json" && i + 1 < argc)
      json = argv[++i];
    else if (a == "--plot" && i + 1 < argc)
      plot_file = argv[++i];
    else if (a == "--small")
      small = true;
    else {
      std::fprintf(stderr,
                   "bench: unknown argument '%s'\nusage: bench [--suite "
                   "gemm,conv,elementwise,reduce,softmax,jit,loader,infer] [--small] [--json FILE] "
                   "[--plot FILE]\n",
                   argv[i]);
      return 2;
    }
  }
  try {
    int threads = tc::runtime::cpu_threads();
    const std::string device = tc::runtime::default_device();
    double peak = bench::peak_fma_gflops(threads);
    double triad = bench::stream_triad_gbps(threads);
    std::printf(
        "machine: %d threads, FMA peak %.1f GFLOP/s, STREAM triad %.1f GB/s, device %s, OpenBLAS "
        "core %s\n",
        threads, peak, triad, device.c_str(), bench::openblas_core());
    std::vector<Result> results;
    auto want = [&](const char* s) {
      return std::find(suites.begin(), suites.end(), s) != suites.end();
    };
    int reps = small ? 2 : 5;

    if (want("gemm")) {
      std::vector<std::vector<int64_t>> shapes =
          small ? std::vector<std::vector<int64_t>>{{64, 64, 64}, {128, 128, 128}}
                : std::vector<std::vector<int64_t>>{
                      {512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 1024, 1024}};
      for (const auto& s : shapes) {
        int64_t m = s[0], k = s[1], n = s[2];
        Tensor a = random({m, k}), b = random({k, n});
        Tensor c = a.matmul(b);
        Result r{"gemm", absl::StrFormat("%dx%dx%d", m, k, n), true};
        r.time_ms = time_ms(c, reps);
        r.rate = 2.0 * m * n * k / r.time_ms / 1e6;
        int mi = static_cast<int>(m), ki = static_cast<int>(k), ni = static_cast<int>(n);
        r.ratios["ratio_vs_eigen"] = bench::eigen_sgemm_ms(mi, ki, ni, threads) / r.time_ms;
        r.ratios["ratio_vs_openblas"] = bench::openblas_sgemm_ms(mi, ki, ni, threads) / r.time_ms;
        r.ratios["fraction_of_peak"] = r.rate / peak;
        print(r);
        results.push_back(r);
      }
    }
    if (want("conv")) {
      // ResNet-18's conv layers (batch 8, forward) as conv2d, against im2col + Eigen GEMM
      std::vector<std::pair<std::string, bench::ConvShape>> layers =
          small
              ? std::vector<std::pair<std::string, bench::ConvShape>>{{"tiny 3x3",
                                                                       {1, 8, 16, 16, 8, 3, 1, 1}}}
              : std::vector<std::pair<std::string, bench::ConvShape>>{
                    {"conv1 7x7/2", {8, 3, 224, 224, 64, 7, 2, 3}},
                    {"layer1 3x3", {8, 64, 56, 56, 64, 3, 1, 1}},
                    {"layer2 3x3/2", {8, 64, 56, 56, 128, 3, 2, 1}},
                    {"layer2 3x3", {8, 128, 28, 28, 128, 3, 1, 1}},
                    {"layer2 down 1x1/2", {8, 64, 56, 56, 128, 1, 2, 0}},
                    {"layer3 3x3/2", {8, 128, 28, 28, 256, 3, 2, 1}},
                    {"layer3 3x3", {8, 256, 14, 14, 256, 3, 1, 1}},
                    {"layer4 3x3/2", {8, 256, 14, 14, 512, 3, 2, 1}},
                    {"layer4 3x3", {8, 512, 7, 7, 512, 3, 1, 1}}};
      for (const auto& [name, c] : layers) {
        Tensor x = random({c.batch, c.cin, c.h, c.w}), w = random({c.cout, c.cin, c.k, c.k});
        Tensor y = x.conv2d(w, {.stride = c.stride, .padding = c.pad});
        Result r{"conv", name, true};
        r.time_ms = time_ms(y, small ? 1 : 3);
        r.rate =
            2.0 * c.batch * c.cout * c.out_h() * c.out_w() * c.cin * c.k * c.k / r.time_ms / 1e6;
        r.ratios["ratio_vs_eigen_im2col"] = bench::eigen_im2col_conv_ms(c, threads) / r.time_ms;
        r.ratios["fraction_of_peak"] = r.rate / peak;
        print(r);
        results.push_back(r);
      }
    }
    int64_t big = small ? (1 << 16) : (16 << 20);  // floats: 64 MiB per tensor in the full run
    if (want("elementwise")) {
      Tensor x = random({big}), y = random({big});
      Result r{"elementwise", absl::StrFormat("x*2+y %lld", static_cast<long long>(big)), false};
      r.time_ms = time_ms(x * 2 + y, reps);
      r.rate = 3.0 * big * 4 / r.time_ms / 1e6;
      r.ratios["fraction_of_bandwidth"] = r.rate / triad;
      print(r);
      results.push_back(r);
    }
    if (want("reduce")) {
      Tensor x = random({big / 1024, 1024});
      Result r{"reduce", absl::StrFormat("sum %lld", static_cast<long long>(big)), false};
      r.time_ms = time_ms(x.sum(), reps);
      r.rate = 1.0 * big * 4 / r.time_ms / 1e6;
      r.ratios["fraction_of_bandwidth"] = r.rate / triad;
      print(r);
      results.push_back(r);
    }
    if (want("softmax")) {
      int64_t rows = small ? 64 : 4096, cols = 1024;
      Tensor x = random({rows, cols});
      Tensor e = (x - x.max(1, true)).exp();
      Result r{
          "softmax",
          absl::StrFormat("%lldx%lld", static_cast<long long>(rows), static_cast<long long>(cols)),
          false};
      r.time_ms = time_ms(e / e.sum(1, true), reps);
      r.rate = 2.0 * rows * cols * 4 / r.time_ms / 1e6;  // one read, one write at best
      r.ratios["fraction_of_bandwidth"] = r.rate / triad;
      print(r);
      results.push_back(r);
    }
    if (want("jit")) {
      results.push_back(jit_suite(small));
      print(results.back());
      if (!small) {  // the smoke test skips it: its compile alone would double the run
        results.push_back(mnist_step_suite(512, 2));
        print(results.back());
      }
    }

    if (want("loader"))
      for (const Result& r : loader_suite(small)) results.push_back(r);
    if (want("infer"))
      for (const Result& r : infer_suite(small)) results.push_back(r);

    if (!json.empty()) {
      std::ofstream f(json);
      if (!f) {
        std::fprintf(stderr, "bench: cannot write %s\n", json.c_str());
        return 1;
      }
      std::vector<std::string> rows;
      for (const Result& r : results) {
        std::string row =
            absl::StrFormat(R"({"suite": "%s", "case": "%s", "device": "%s", "time_ms": %.4f)",
                            r.suite, r.name, device, r.time_ms);
        if (r.rate > 0)
          row += absl::StrFormat(R"(, "%s": %.3f)", r.flops ? "gflops" : "gbps", r.rate);
        for (const auto& [k, v] : r.ratios) row += absl::StrFormat(R"(, "%s": %.4f)", k, v);
        for (const auto& [k, v] : r.fields) row += absl::StrFormat(R"(, "%s": %.6g)", k, v);
        rows.push_back(row + "}");
      }
      f << "[\n  " << absl::StrJoin(rows, ",\n  ") << "\n]\n";
    }
    if (!plot_file.empty()) {
      std::vector<plot::Bar> bars;
      for (const Result& r : results)
        for (const auto& [k, v] : r.ratios) bars.push_back({r.suite + " " + r.name + " " + k, v});
      plot::bar_chart(plot_file, "tinycore vs anchors (" + device + ", higher is better)", bars);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench: %s\n", e.what());
    return 1;
  }
}
