#include "apps/bench/onnx_suite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "apps/bench/measure.h"
#include "apps/bench/process.h"
#include "apps/bench/torch_worker.h"
#include "frontends/onnx/runner.h"
#include "tinycore/error.h"
#include "tinycore/jit/jit.h"
#ifdef TC_HAVE_OPENCV_DNN
#include <opencv2/dnn.hpp>
#endif

namespace bench {

namespace {

using tc::Tensor;

constexpr int64_t kSide = 224;

struct Model {
  const char* name;
  double gmacs;  // multiply-adds of one 224x224 image (torchvision's figures)
};
constexpr Model kModels[] = {{"resnet50", 4.089}, {"mobilenet_v2", 0.301}};

std::string models_dir() { return cache_folder("tinycore-bench-onnx", "TC_BENCH_ONNX_DIR"); }

// torch.linspace(-1, 1, n) in the shape of a batch of images: the input every runner is given.
std::vector<float> fixed_input(int64_t batch) {
  std::vector<float> v(batch * 3 * kSide * kSide);
  for (size_t i = 0; i < v.size(); i++)
    v[i] = static_cast<float>(-1.0 + 2.0 * static_cast<double>(i) / (v.size() - 1));
  return v;
}

double max_abs_diff(const std::vector<float>& got, const std::vector<double>& want) {
  double err = 0;
  for (size_t i = 0; i < want.size() && i < got.size(); i++)
    err = std::max(err, std::abs(want[i] - got[i]));
  return err;
}

Tensor input_tensor(int64_t batch) {
  return Tensor::from_vector<float>(fixed_input(batch), tc::Shape{batch, 3, kSide, kSide})
      .realize();
}

// tinycore's first run in a fresh process (this program again) whose kernel cache is an empty
// folder: the seconds from reading the file to the first batch's logits.
double cold_first_run_s(const std::string& path, int64_t batch) {
  TempFolder cache("tc_bench_onnx_cold_");
  const std::string answer = cache.path + "/first_run_s";
  double s = 0;
  if (!run_again({"bench"},
                 {"TC_CACHE_DIR=" + cache.path, std::string(kOnnxFirstRunEnv) + "=" + answer,
                  "TC_BENCH_ONNX_MODEL=" + path, "TC_BENCH_BATCH=" + std::to_string(batch),
                  "DEVICE=" + device().name()}) ||
      !(std::ifstream(answer) >> s))
    tc::fail("bench onnx: the first run of %s (TC_CACHE_DIR=%s) failed", path, cache.path);
  return s;
}

// OpenCV's DNN module on the same file and input: the median ms of `reps` runs after one, and the
// first image's logits; nullopt where bench was built without it.
struct AnchorRun {
  double ms = 0;
  std::vector<float> logits;
};
std::optional<AnchorRun> opencv_dnn(const std::string& path, int64_t batch, int reps) {
#ifdef TC_HAVE_OPENCV_DNN
  cv::dnn::Net net;
  try {
    net = cv::dnn::readNetFromONNX(path);
  } catch (const cv::Exception& e) {  // an operator it cannot read: no anchor, the suite goes on
    std::fprintf(stderr, "bench onnx: no OpenCV anchor for %s: %s\n", path.c_str(), e.what());
    return std::nullopt;
  }
  std::vector<float> pixels = fixed_input(batch);
  int dims[] = {static_cast<int>(batch), 3, kSide, kSide};
  cv::Mat blob(4, dims, CV_32F, pixels.data());
  std::vector<double> times;
  cv::Mat out;
  for (int i = 0; i < reps + 1; i++) {
    double t0 = now();
    net.setInput(blob);
    out = net.forward();
    times.push_back(now() - t0);
  }
  times.erase(times.begin());
  AnchorRun r{median(times) * 1e3, {}};
  const float* o = out.ptr<float>();
  r.logits.assign(o, o + std::min<int64_t>(8, static_cast<int64_t>(out.total())));
  return r;
#else
  (void)path, (void)batch, (void)reps;
  std::fprintf(stderr, "bench onnx: built without OpenCV's DNN module (libopencv-dnn-dev)\n");
  return std::nullopt;
#endif
}

Result measure_model(const Model& m, const std::string& path, const std::string& dir,
                     int64_t batch) {
  const int reps = batch == 1 ? 5 : 3;
  Result r{"onnx", absl::StrFormat("%s b%lld 224x224", m.name, static_cast<long long>(batch)),
           true};
  r.fields["first_run_s"] = cold_first_run_s(path, batch);

  tc::onnx::OnnxRunner runner(path);
  const std::string in = runner.input_names().at(0), out = runner.output_names().at(0);
  tc::TinyJit forward([&](const std::vector<Tensor>& x) {
    return std::vector<Tensor>{runner({{in, x[0]}}).at(out).realize()};
  });
  Tensor x = input_tensor(batch);
  std::vector<double> times;
  std::vector<float> logits;
  for (int i = 0; i < reps + 2; i++) {  // the first run and the capture, then the timed ones
    double t0 = now();
    logits = forward({x})[0].data<float>();
    times.push_back(now() - t0);
  }
  times.erase(times.begin(), times.begin() + 2);
  r.time_ms = median(times) * 1e3;
  r.rate = 2 * m.gmacs * static_cast<double>(batch) / r.time_ms * 1e3;

  double best_anchor_ms = 0;
  auto anchor = [&](const std::string& name, double ms, const std::vector<double>& want) {
    r.fields[name + "_ms"] = ms;
    r.fields["max_abs_diff_vs_" + name] = max_abs_diff(logits, want);
    r.ratios["ratio_vs_" + name] = ms / r.time_ms;
    best_anchor_ms = best_anchor_ms == 0 ? ms : std::min(best_anchor_ms, ms);
  };
  if (auto t = run_pytorch(absl::StrFormat("--onnx-model %s --dir %s --batch %lld --reps %d",
                                           m.name, dir, static_cast<long long>(batch), reps)))
    anchor("pytorch", (*t)["onnx_ms"].get<double>(),
           (*t)["onnx_logits"].get<std::vector<double>>());
  if (auto cv = opencv_dnn(path, batch, reps))
    anchor("opencv", cv->ms, std::vector<double>(cv->logits.begin(), cv->logits.end()));
  // the faster of the two: > 1 where tinycore beats both
  if (best_anchor_ms > 0) r.ratios["ratio_vs_best_anchor"] = best_anchor_ms / r.time_ms;
  return r;
}

}  // namespace

std::vector<Result> onnx_suite(const std::vector<int64_t>& batches) {
  const std::string dir = models_dir();
  if (!run_pytorch("--onnx-export " + dir)) {
    std::printf(
        "onnx: skipped: the suite exports its models with PyTorch and torchvision "
        "(apt-get install python3-torch python3-torchvision)\n");
    return {};
  }
  std::vector<Result> results;
  for (const Model& m : kModels)
    for (int64_t batch : batches) {
      results.push_back(measure_model(m, dir + "/" + m.name + ".onnx", dir, batch));
      print(results.back());
    }
  return results;
}

int onnx_first_run_child(const char* answer) {
  const char* path = std::getenv("TC_BENCH_ONNX_MODEL");
  const char* batch = std::getenv("TC_BENCH_BATCH");
  if (!path || !batch) tc::fail("bench onnx: TC_BENCH_ONNX_MODEL and TC_BENCH_BATCH must be set");
  Tensor x = input_tensor(std::atoll(batch));
  double t0 = now();
  tc::onnx::OnnxRunner runner(path);
  auto outs = runner({{runner.input_names().at(0), x}});
  std::vector<float> logits = outs.at(runner.output_names().at(0)).data<float>();
  double s = now() - t0;
  std::ofstream out(answer);
  return out << s << "\n" ? 0 : 1;
}

}  // namespace bench
