// bench: tinycore's kernels measured side by side with the anchors in one run, on one device or
// on every device there is: on the CPU the machine's FMA peak and memory bandwidth, Eigen,
// OpenBLAS, BLIS and oneDNN; on an accelerator its peak and bandwidth measured with tinycore's own
// kernels, the vendor's figures where the GPU is known, and cuBLAS on CUDA. Prints a line a case
// and, at the end, a Markdown table; --json writes one object a case, --plot a PNG chart.
// `bench --help` lists the options.
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

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "apps/bench/anchors.h"
#include "apps/bench/device_peak.h"
#include "apps/bench/dist_suite.h"
#include "apps/bench/kernel_suites.h"
#include "apps/bench/llm_suite.h"
#include "apps/bench/measure.h"
#include "apps/bench/model_suite.h"
#include "apps/bench/onnx_suite.h"
#include "apps/bench/process.h"
#include "apps/bench/report.h"
#include "apps/bench/torch_worker.h"
#include "apps/bench/train_step.h"
#include "datasets/idx.h"
#include "datasets/image_folder.h"
#include "datasets/loader.h"
#include "nn/models.h"
#include "nn/optim.h"
#include "nn/resnet.h"
#include "nn/state.h"
#include "nn/transformer.h"
#include "tinycore/engine/realize.h"
#include "tinycore/jit/jit.h"
#include "tinycore/runtime/device.h"
#include "tinycore/runtime/thread_pool.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"
#ifdef TC_HAVE_CUDA
#include "tinycore/runtime/cuda_device.h"
#endif

using tc::Tensor;

namespace {

using bench::device;
using bench::now;
using bench::on_cpu;
using bench::Peaks;
using bench::print;
using bench::random;
using bench::Result;
using bench::run_again;
using bench::TempFolder;
using bench::time_ms;

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
  device().synchronize();
  double replay = (now() - t0) / reps;
  t0 = now();
  for (int r = 0; r < reps; r++) tc::realize_all(step({input}));
  device().synchronize();
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

// tinygrad's beautiful_mnist convnet (Adam) on random data, its training step under the JIT (the
// constructor runs the first step).
struct MnistStep {
  std::unique_ptr<tc::nn::Sequential> model;
  tc::nn::Adam opt;
  bench::TrainStep step;

  explicit MnistStep(int64_t batch)
      : model(convnet()),
        opt(model->parameters(), {.lr = 1e-3}),
        step(*model, opt, random({batch, 1, 28, 28}), labels(batch)) {}

  static std::unique_ptr<tc::nn::Sequential> convnet() {
    Tensor::manual_seed(0);
    return tc::nn::mnist_convnet();
  }
  static Tensor labels(int64_t batch) {
    std::vector<int> v(batch);
    for (int64_t i = 0; i < batch; i++) v[i] = static_cast<int>(i * 7 % 10);
    return Tensor::from_vector<int>(v, tc::Shape{batch}).realize();
  }
};

constexpr const char* kFirstStepEnv = "TC_BENCH_FIRST_STEP";  // a child's file for its answer

// The MNIST step's first step in a process of its own (this program run again) whose disk cache
// is `cache_dir`: cold when the folder is empty, warm when a run before filled it.
double first_step_in_child(const std::string& cache_dir, int64_t batch) {
  const std::string answer = cache_dir + "/first_step_s";
  double s = 0;
  if (!run_again({"bench"},
                 {"TC_CACHE_DIR=" + cache_dir, std::string(kFirstStepEnv) + "=" + answer,
                  "TC_BENCH_BATCH=" + std::to_string(batch), "DEVICE=" + device().name()}) ||
      !(std::ifstream(answer) >> s))
    tc::fail("bench: the first-step run (TC_CACHE_DIR=%s) failed", cache_dir);
  return s;
}

// The child's side: the first step, written to the file the parent named.
int first_step_child(const char* answer) {
  const char* batch = std::getenv("TC_BENCH_BATCH");
  double s = MnistStep(batch ? std::atoll(batch) : 512).step.first_s();
  std::ofstream out(answer);
  return out << s << "\n" ? 0 : 1;
}

// One training step of the MNIST convnet under the JIT: steady steps per second in this process,
// and the time to the first step (graphs, schedules, kernels, the run) in fresh processes, with a
// cold disk cache (first_step_s: every kernel compiled) and then a warm one (first_step_warm_s);
// in `rounds` turns with PyTorch's step of the same model, batch and optimizer where it is
// installed.
Result mnist_step_suite(int64_t batch, int rounds) {
  TempFolder cache("tc_bench_first_step_");
  double cold = first_step_in_child(cache.path, batch);
  double warm = first_step_in_child(cache.path, batch);
  MnistStep mnist(batch);
  mnist.step();  // the capture
  Result r{"jit", absl::StrFormat("mnist convnet step b%lld", static_cast<long long>(batch)),
           false};
  std::unique_ptr<bench::TorchWorker> torch = bench::cpu_torch_worker();
  bench::Turns t = bench::time_with_pytorch(
      torch.get(), {{"setup", "mnist_train"}, {"batch", batch}}, mnist.step.workload(), rounds, r);
  r.time_ms = t.median_ms(0);
  r.fields["first_step_s"] = cold;
  r.fields["first_step_warm_s"] = warm;
  r.fields["steps_per_s"] = 1e3 / r.time_ms;
  r.fields["peak_bytes"] = static_cast<double>(mnist.step.jit().planned_bytes());
  r.fields["unplanned_bytes"] = static_cast<double>(mnist.step.jit().unplanned_bytes());
  r.fields["kernels_per_step"] = static_cast<double>(mnist.step.jit().kernel_count());
  if (t.ms.size() > 1) {
    r.fields["pytorch_steps_per_s"] = 1e3 / t.median_ms(1);
    r.fields["pytorch_first_step_s"] = torch->set_up()["first_s"].get<double>();
  }
  return r;
}

// Inference at batch 1, issue 8's targets: GPT decoding (configs/gpt.yaml's model) token by
// token through GPT::decode in one TinyJit, and ResNet-18 at 224x224 under a TinyJit, each in
// turns with PyTorch running the same weights (saved here, loaded there), whose outputs must
// agree. A round of decoding is a run of tokens, the same positions on both sides.
std::vector<Result> infer_suite(bool small) {
  std::vector<Result> results;
  TempFolder dir("tc_bench_infer_");
  bench::TorchWorker torch(tc::runtime::cpu_threads());
  tc::Tensor::manual_seed(0);

  tc::nn::GPTConfig g =
      small ? tc::nn::GPTConfig{256, 32, 1, 64, 2} : tc::nn::GPTConfig{256, 128, 4, 256, 4};
  tc::nn::GPT gpt(g);
  const std::string weights = dir.path + "/gpt.safetensors";
  tc::nn::safe_save(gpt.state_dict(), weights);
  tc::TinyJit decode([&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{gpt.decode(in[0], in[1]).realize()};
  });
  std::vector<int> made;  // the first pass over the context
  int32_t token = 0, pos = 0;
  // the next `n` tokens, greedy; after the context's last from token 0 again (the cache's slots
  // past the position are not read), so that there are as many rounds as wanted
  auto decode_tokens = [&](int n) {
    for (int i = 0; i < n; i++) {
      if (pos == g.context) pos = 0, token = 0;
      std::vector<float> logits = decode({Tensor::from_vector<int32_t>({token}, tc::Shape{1, 1}),
                                          Tensor::from_vector<int32_t>({pos++}, tc::Shape{1})})[0]
                                      .data<float>();
      token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
      if (static_cast<int64_t>(made.size()) < g.context) made.push_back(token);
    }
  };
  double t0 = now();
  decode_tokens(1);
  const double first = now() - t0;
  decode_tokens(1);  // the capture
  // a round's tokens: a few milliseconds' worth, rounds enough for a median the neighbours'
  // bursts do not move; the smoke test's cover its context once
  const int rounds = small ? 2 : 15, per_round = small ? 10 : 16;
  Result r{"infer",
           absl::StrFormat("gpt decode b1 (%d layers, d%d, ctx %d)", g.layers, g.width, g.context),
           false};
  bench::Turns t = bench::time_with_pytorch(
      &torch,
      {{"setup", "gpt_decode"},
       {"weights", weights},
       {"shape", {g.vocab, g.context, g.layers, g.width, g.heads}},
       {"tokens_per_run", per_round}},
      [&] { decode_tokens(per_round); }, rounds, r);
  r.time_ms = t.median_ms(0) / per_round;
  r.fields["tokens_per_s"] = 1e3 / r.time_ms;
  r.fields["tokens_per_round"] = per_round;
  r.fields["first_token_s"] = first;
  r.fields["kernels_per_token"] = static_cast<double>(decode.kernel_count());
  if (t.ms.size() > 1)  // as many tokens on both sides: the same first ones
    r.fields["same_tokens_as_pytorch"] = torch.last()["tokens"].get<std::vector<int>>() == made;
  print(r);
  results.push_back(r);

  if (!small) {  // ResNet-18's compile is more than the smoke test should pay
    tc::nn::ResNet resnet({.depth = 18, .cifar = false, .in_channels = 3, .classes = 1000});
    tc::nn::safe_save(resnet.state_dict(), dir.path + "/resnet18.safetensors");
    const int64_t side = 224;
    std::vector<float> pixels(3 * side * side);
    for (size_t i = 0; i < pixels.size(); i++)  // torch.linspace(-1, 1, n)
      pixels[i] = static_cast<float>(-1.0 + 2.0 * static_cast<double>(i) / (pixels.size() - 1));
    Tensor x = Tensor::from_vector<float>(pixels, tc::Shape{1, 3, side, side}).realize();
    tc::TinyJit forward([&](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{resnet(in[0]).realize()};
    });
    Result c{"infer", "resnet18 b1 224x224", true};
    t0 = now();
    std::vector<float> logits = forward({x})[0].data<float>();
    c.fields["first_run_s"] = now() - t0;
    forward({x});  // the capture
    bench::Turns turns = bench::time_with_pytorch(
        &torch,
        {{"setup", "resnet18_infer"},
         {"weights", dir.path + "/resnet18.safetensors"},
         {"side", side}},
        [&] { forward({x})[0].data<float>(); }, 10, c);
    c.time_ms = turns.median_ms(0);
    c.rate = 2 * 1.814e9 / c.time_ms / 1e6;  // ResNet-18 at 224: 1.814 GMACs
    if (turns.ms.size() > 1) {
      std::vector<double> want = torch.set_up()["logits"].get<std::vector<double>>();
      double err = 0;
      for (size_t i = 0; i < want.size(); i++) err = std::max(err, std::abs(want[i] - logits[i]));
      c.fields["max_abs_diff_vs_pytorch"] = err;
    }
    print(c);
    results.push_back(c);
  }
  return results;
}

// Images per second out of the DataLoader (loader construction included), into the device's
// pinned host memory: Fashion-MNIST bytes to floats in batches of 512, assembled inline and by
// workers, and a folder of 32x32 PNGs decoded and augmented by OpenCV (pad 4 and crop, flip,
// normalize) as CIFAR training does.
std::vector<Result> loader_suite(bool small) {
  namespace ds = tc::datasets;
  namespace fs = std::filesystem;
  std::vector<Result> results;
  const int workers = std::clamp(tc::runtime::cpu_threads(), 2, 8);
  auto measure = [&](const std::string& name, int64_t n, int64_t numel,
                     const ds::DataLoader::EpochFetch& fetch, int64_t batch, int epochs) {
    for (int w : {0, workers}) {
      double t0 = now();
      ds::DataLoader loader(
          n, numel, fetch,
          {.batch_size = batch, .seed = 1, .workers = w, .pin_memory = &device().allocator()});
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

const char kUsage[] = R"(usage: bench [options]
Measures tinycore's kernels beside the anchors (CPU: FMA peak, STREAM triad, Eigen, OpenBLAS,
BLIS, oneDNN; accelerators: peak FMA and bandwidth of tinycore kernels, the vendor's figures when
the GPU is known, cuBLAS on CUDA) and prints a line a case, then a Markdown table of them all.

  --device NAME|all  the device to run on (default: the default device, DEVICE or the fastest
                     available; devices here: %s). `all` runs the suites on
                     every available device, each in a process of its own, and merges the results
                     into one JSON, one table and one chart
  --suite LIST       comma-separated suites (default: all of them):
                     gemm,conv,elementwise,reduce,softmax,jit,loader,infer,model,llm,onnx,dist
                     (conv: the distinct conv layers of ResNet-18 and ResNet-50 at 224x224,
                     batch 1 and 8, forward, backward-data and backward-weights, beside oneDNN)
                     (llm: a Llama-3.2-1B-shaped model with random weights as GGUF F16, Q8_0,
                     Q4_0 and Q4_K (its output in Q6_K, like llama.cpp's Q4_K_S), written once
                     into $TC_BENCH_LLM_DIR or ~/.cache/tinycore-bench-llm (5.3 GB): load, prompt
                     processing, time to first token, generation at batch 1 and with concurrent
                     streams, resident memory, the bandwidth limit;
                     with --small a 2-layer model in a scratch folder, in seconds)
                     (onnx: ResNet-50 and MobileNetV2 exported by PyTorch, beside PyTorch and
                     OpenCV's DNN module; needs python3-torch and python3-torchvision; skipped
                     with --small)
                     (dist: all-reduce bus bandwidth, 4 KB to 64 MB, of tinycore's path in a
                     captured step beside raw MPI_Allreduce, over shared memory (2 ranks) and
                     TCP (two simulated hosts, tools/two_hosts.sh, as root); MNIST training on 2
                     ranks x 1 thread against 1 x 1; needs mpirun; --small: shared memory only)
                     (the peaks and bandwidths of the device are always measured)
  --onnx-batch LIST  comma-separated batch sizes of the onnx suite (default: 1,8)
  --llm-types LIST   the llm suite's model files: f16,q8_0,q4_0,q4_k (default: all four)
  --llm-prompt N     its prompt's tokens (default 512; 32 with --small)
  --llm-gen N        its tokens generated per sequence (default 128; 16 with --small)
  --llm-streams N    its concurrent streams (default 8; 2 with --small; 1: batch 1 only)
  --llama-cpp DIR    a llama.cpp build (CPU): its bin/llama-bench or llama-bench runs on the same
                     files as the llm suite's anchor (build it outside this repository: in a
                     clone of github.com/ggml-org/llama.cpp, `cmake -B build && cmake --build
                     build -j --target llama-bench`, then --llama-cpp <clone>/build; the
                     README shows how to take that source from npm's node-llama-cpp)
  --small            tiny sizes that run in seconds (the smoke test); without it, the model suite
                     runs full sizes on an accelerator and about a minute's worth on a CPU
  --json FILE        writes the cases as a JSON list: suite, case, device, time_ms, gflops or
                     gbps, ratio_vs_* / fraction_of_* against the anchors, other measurements
  --markdown FILE    writes the Markdown table to FILE too
  --plot FILE        a PNG chart: the ratios to the anchors (one device), or each case's speed
                     relative to the CPU, a bar a device (several devices)
  --no-table         does not print the Markdown table at the end
  --help             this text
)";

struct Options {
  std::vector<std::string> suites = {"gemm",   "conv",  "elementwise", "reduce", "softmax", "jit",
                                     "loader", "infer", "model",       "llm",    "onnx",    "dist"};
  std::vector<int64_t> onnx_batches = {1, 8};
  bench::LlmOptions llm;
  std::string device, json, plot, markdown;
  bool small = false, table = true;
  bool want(const char* suite) const {
    return std::find(suites.begin(), suites.end(), suite) != suites.end();
  }
};

Peaks measure_peaks(const std::string& name, bool small, std::vector<Result>& results) {
  Peaks p;
  tc::runtime::Device& dev = device();
  int threads = tc::runtime::cpu_threads();
  if (name == "CPU") {
    p.gflops = bench::peak_fma_gflops(threads);
    p.gbps = bench::stream_triad_gbps(threads);
    std::printf(
        "machine: %d threads, FMA peak %.1f GFLOP/s, STREAM triad %.1f GB/s, device %s, OpenBLAS "
        "core %s\n",
        threads, p.gflops, p.gbps, name.c_str(), bench::openblas_core());
    results.push_back({"peak", "fma fp32 (avx)", true, 0, p.gflops});
    results.push_back({"peak", "stream triad", false, 0, p.gbps});
  } else {
    // sized so that a GPU runs each kernel for a millisecond or so, a CPU-class device less
    const bool big = dev.is_accelerator() && !small;
    const int64_t n = big ? (16 << 20) : small ? (1 << 16) : (1 << 20);
    const int chain = big ? 512 : small ? 64 : 256;
    Result fma{"peak", absl::StrFormat("fma chain %d (tinycore)", chain), true};
    fma.rate = p.gflops = bench::kernel_fma_gflops(n, chain, small ? 2 : 5);
    fma.time_ms = 2.0 * chain * static_cast<double>(n) / p.gflops / 1e6;
    const int64_t bytes_n = big ? (64 << 20) : small ? (1 << 18) : (16 << 20);
    Result add{"peak", absl::StrFormat("add %lld (tinycore)", static_cast<long long>(bytes_n)),
               false};
    add.rate = p.gbps = bench::kernel_add_gbps(bytes_n, small ? 2 : 5);
    add.time_ms = 12.0 * static_cast<double>(bytes_n) / p.gbps / 1e6;
    std::string vendor = "vendor peak unknown";
#ifdef TC_HAVE_CUDA
    if (auto* gpu = dynamic_cast<tc::runtime::CudaDevice*>(&dev)) {
      p.cuda = true;
      p.gemm_dtypes.push_back(tc::dtypes::float16);
      if (std::stoi(gpu->arch().substr(3)) >= 80) p.gemm_dtypes.push_back(tc::dtypes::bfloat16);
      p.vendor = bench::vendor_peak(gpu->gpu_name());
      vendor = gpu->gpu_name() + " " + gpu->arch() + ": " +
               (p.vendor ? absl::StrFormat("vendor peak fp32 %.1f TFLOP/s, fp16/bf16 tensor %.0f "
                                           "TFLOP/s, memory %.2f TB/s",
                                           p.vendor->fp32_tflops, p.vendor->fp16_tensor_tflops,
                                           p.vendor->memory_tbs)
                         : std::string("vendor peak unknown"));
    }
#endif
    if (p.vendor) {
      fma.fields["vendor_gflops"] = p.vendor->fp32_tflops * 1e3;
      fma.ratios["fraction_of_vendor_peak"] = p.gflops / (p.vendor->fp32_tflops * 1e3);
      add.fields["vendor_gbps"] = p.vendor->memory_tbs * 1e3;
      add.ratios["fraction_of_vendor_peak"] = p.gbps / (p.vendor->memory_tbs * 1e3);
    }
    std::printf("device %s: FMA peak %.1f GFLOP/s, bandwidth %.1f GB/s (tinycore kernels); %s\n",
                name.c_str(), p.gflops, p.gbps, vendor.c_str());
    results.push_back(fma);
    results.push_back(add);
  }
  for (const Result& r : results) print(r);
  return p;
}

// The memory-bound suites: elementwise, reduce, softmax.
void memory_suites(const Options& o, const Peaks& p, std::vector<Result>& results) {
  const int reps = o.small ? 2 : 7;
  const int64_t big = o.small ? (1 << 16) : (16 << 20);  // floats: 64 MiB a tensor in full runs
  // Times `t`, moving `bytes`, into r. On the CPU a STREAM triad runs in turns with it and is
  // the bandwidth it is a fraction of; elsewhere the device's bandwidth measured at the start.
  std::vector<bench::Workload> triad;
  if (on_cpu()) triad.push_back(bench::stream_triad(tc::runtime::cpu_threads()));
  auto add = [&](Result r, const Tensor& t, double bytes) {
    bench::Turns turns = bench::time_beside(t, triad, reps);
    r.time_ms = turns.median_ms(0);
    r.rate = bytes / r.time_ms / 1e6;
    if (on_cpu()) {  // the triad's rate over ours, round by round: (bytes/ours) / (triad/its)
      bench::Ratio f = turns.ratio(1);
      const double scale = bytes / bench::kTriadBytes;
      r.set_ratio("fraction_of_bandwidth", {f.median * scale, f.min * scale, f.max * scale});
    } else {
      r.ratios["fraction_of_bandwidth"] = r.rate / p.gbps;
    }
    print(r);
    results.push_back(r);
  };
  if (o.want("elementwise")) {
    Tensor x = random({big}), y = random({big});
    Result r{"elementwise", absl::StrFormat("x*2+y %lld", static_cast<long long>(big)), false};
    add(r, x * 2 + y, 3.0 * big * 4);
  }
  if (o.want("reduce")) {
    Tensor x = random({big / 1024, 1024});
    Result r{"reduce", absl::StrFormat("sum %lld", static_cast<long long>(big)), false};
    add(r, x.sum(), 1.0 * big * 4);
  }
  if (o.want("softmax")) {
    int64_t rows = o.small ? 64 : 4096, cols = 1024;
    Tensor x = random({rows, cols});
    Tensor e = (x - x.max(1, true)).exp();
    Result r{
        "softmax",
        absl::StrFormat("%lldx%lld", static_cast<long long>(rows), static_cast<long long>(cols)),
        false};
    add(r, e / e.sum(1, true), 2.0 * rows * cols * 4);  // one read, one write at best
  }
}

// Writes the JSON, chart and Markdown files asked for, and prints the table.
void write_outputs(const Options& o, const bench::Rows& rows) {
  if (!o.json.empty()) bench::write_json(o.json, rows);
  if (!o.plot.empty()) bench::plot_rows(o.plot, rows);
  std::string table = bench::markdown_table(rows);
  if (!o.markdown.empty()) {
    std::ofstream f(o.markdown);
    if (!(f << table)) tc::fail("bench: cannot write %s", o.markdown);
  }
  if (o.table) std::printf("\n%s", table.c_str());
}

// Every suite on the default device.
int run_on_device(const Options& o) {
  const std::string name = device().name();
  const bool small = o.small;
  std::vector<Result> results;
  Peaks p = measure_peaks(name, small, results);
  if (o.want("gemm"))
    for (const Result& r : bench::gemm_suite(small, p)) results.push_back(r);
  if (o.want("conv"))
    for (const Result& r : bench::conv_suite(small, p)) results.push_back(r);
  memory_suites(o, p, results);
  if (o.want("jit")) {
    results.push_back(jit_suite(small));
    print(results.back());
    if (!small) {  // the smoke test skips it: its compile alone would double the run
      results.push_back(mnist_step_suite(512, 7));
      print(results.back());
    }
  }
  if (o.want("loader"))
    for (const Result& r : loader_suite(small)) results.push_back(r);
  if (o.want("infer"))
    for (const Result& r : infer_suite(small)) results.push_back(r);
  if (o.want("model"))
    for (const Result& r : bench::model_suite(small)) results.push_back(r);
  if (o.want("llm")) {
    bench::LlmOptions llm = o.llm;
    llm.small = small;
    for (const Result& r : bench::llm_suite(llm, p.gbps)) results.push_back(r);
  }
  if (o.want("dist") && on_cpu())
    for (const Result& r : bench::dist_suite(small)) results.push_back(r);
  if (o.want("onnx")) {
    if (small)  // full-size models only: their compile alone is more than the smoke test's run
      std::printf("onnx: skipped with --small\n");
    else
      for (const Result& r : bench::onnx_suite(o.onnx_batches)) results.push_back(r);
  }

  bench::Rows rows = bench::Rows::array();
  for (const Result& r : results) rows.push_back(bench::to_json(r, name));
  write_outputs(o, rows);
  return 0;
}

// `--device all`: this program again for each available device (a process each, so that each
// has the device registry, caches and memory to itself), its JSON merged. The loader suite uses
// no device, so only one run (the CPU's, else the first) does it.
int run_on_all_devices(const Options& o, bool small) {
  std::vector<std::string> devices = tc::runtime::available_devices();
  const std::string host_run =
      std::find(devices.begin(), devices.end(), "CPU") != devices.end() ? "CPU" : devices.at(0);
  TempFolder dir("tc_bench_all_");
  bench::Rows rows = bench::Rows::array();
  std::vector<std::string> failed;
  for (const std::string& d : devices) {
    std::vector<std::string> suites;
    for (const std::string& s : o.suites)
      if (s != "loader" || d == host_run) suites.push_back(s);
    if (suites.empty()) continue;
    const std::string json = dir.path + "/" + d + ".json";
    std::vector<std::string> args = {"bench", "--device",   d,         "--json",
                                     json,    "--no-table", "--suite", absl::StrJoin(suites, ",")};
    if (small) args.push_back("--small");
    const bench::LlmOptions& l = o.llm;  // the llm suite's flags, as given
    args.insert(args.end(), {"--llm-types", absl::StrJoin(l.types, ",")});
    for (const auto& [flag, n] :
         {std::pair{"--llm-prompt", l.prompt}, {"--llm-gen", l.gen}, {"--llm-streams", l.streams}})
      if (n > 0) args.insert(args.end(), {flag, std::to_string(n)});
    if (!l.llama_cpp.empty()) args.insert(args.end(), {"--llama-cpp", l.llama_cpp});
    std::printf("\n== bench --device %s ==\n", d.c_str());
    if (!run_again(args, {})) {
      failed.push_back(d);
      continue;
    }
    for (auto& row : bench::read_json(json)) rows.push_back(row);
  }
  write_outputs(o, rows);
  if (!failed.empty()) {
    std::fprintf(stderr, "bench: the run on %s failed\n", absl::StrJoin(failed, ", ").c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    std::string suites, batches, list;
    // true when the argument is `flag`, its value (a count >= 1) then in `out`; a value that is
    // not one ends the program
    auto count = [&](const char* flag, int64_t& out) {
      if (a != flag) return false;
      std::string v;
      if (!value(v) || !absl::SimpleAtoi(v, &out) || out < 1) {
        std::fprintf(stderr, "bench: %s wants a number >= 1, not '%s'\n", flag, v.c_str());
        std::exit(2);
      }
      return true;
    };
    if (a == "--help" || a == "-h") {
      std::printf(kUsage, absl::StrJoin(tc::runtime::available_devices(), ", ").c_str());
      return 0;
    } else if (a == "--suite" && value(suites)) {
      o.suites = absl::StrSplit(suites, ',');
    } else if (a == "--onnx-batch" && value(batches)) {
      o.onnx_batches.clear();
      for (absl::string_view b : absl::StrSplit(batches, ',')) {
        int64_t n = 0;
        if (!absl::SimpleAtoi(b, &n) || n < 1) {
          std::fprintf(stderr, "bench: --onnx-batch wants batch sizes >= 1, not '%s'\n",
                       std::string(b).c_str());
          return 2;
        }
        o.onnx_batches.push_back(n);
      }
    } else if (a == "--llm-types" && value(list)) {
      o.llm.types = absl::StrSplit(list, ',');
    } else if (count("--llm-prompt", o.llm.prompt) || count("--llm-gen", o.llm.gen) ||
               count("--llm-streams", o.llm.streams) ||
               (a == "--llama-cpp" && value(o.llm.llama_cpp))) {
    } else if ((a == "--json" && value(o.json)) || (a == "--plot" && value(o.plot)) ||
               (a == "--markdown" && value(o.markdown)) || (a == "--device" && value(o.device))) {
    } else if (a == "--small") {
      o.small = true;
    } else if (a == "--no-table") {
      o.table = false;
    } else {
      std::fprintf(stderr, "bench: unknown argument or missing value: '%s' (see bench --help)\n",
                   argv[i]);
      return 2;
    }
  }
  for (const std::string& s : o.suites)
    if (!Options{}.want(s.c_str())) {
      std::fprintf(stderr, "bench: no suite '%s' (see bench --help)\n", s.c_str());
      return 2;
    }
  // The anchors' environment, which both libraries read as they load (so: set it, run again).
  // OpenBLAS picks its kernels by CPU model: with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset,
  // unless it does not know this CPU (Debian's 0.3.21 takes Zen 5 for a "Prescott" and runs SSE3
  // code), then its AVX-512 kernels are forced. The OpenMP threads of the Eigen, BLIS and oneDNN
  // anchors must sleep, not spin, while OpenBLAS's and tinycore's own threads run; and OpenBLAS's
  // threads too, which otherwise spin for 2^28 cycles (about 0.1 s) after each call, on a core the
  // next case in the turns needs (tinycore's 1024^3 SGEMM after OpenBLAS's: 19 ms, alone 9.6 ms).
  if (!std::getenv("TC_BENCH_ENV")) {
    setenv("TC_BENCH_ENV", "1", 1);
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv("OPENBLAS_L2_SIZE");
    if (!std::getenv("OMP_WAIT_POLICY")) setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    if (!std::getenv("OPENBLAS_THREAD_TIMEOUT")) setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
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
  try {
    if (const char* answer = std::getenv(kFirstStepEnv)) return first_step_child(answer);
    if (const char* answer = std::getenv(bench::kDistRankEnv))
      return bench::dist_rank_child(answer, o.small);
    if (const char* answer = std::getenv(bench::kOnnxFirstRunEnv))
      return bench::onnx_first_run_child(answer);
    if (o.device == "all") return run_on_all_devices(o, o.small);
    // Before anything asks for the default device, so every tensor lands there.
    if (!o.device.empty()) tc::runtime::set_default_device(o.device);
    return run_on_device(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench: %s\n", e.what());
    return 1;
  }
}
