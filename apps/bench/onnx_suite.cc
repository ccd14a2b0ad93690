#include "apps/bench/onnx_suite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
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

// OpenCV's DNN module on the same file and input, as a workload that leaves the first image's
// logits in `logits`; nullopt where bench was built without it or it cannot read the model.
std::optional<Workload> opencv_dnn(const std::string& path, int64_t batch,
                                   std::vector<double>* logits) {
#ifdef TC_HAVE_OPENCV_DNN
  auto net = std::make_shared<cv::dnn::Net>();
  try {
    *net = cv::dnn::readNetFromONNX(path);
  } catch (const cv::Exception& e) {  // an operator it cannot read: no anchor, the suite goes on
    std::fprintf(stderr, "bench onnx: no OpenCV anchor for %s: %s\n", path.c_str(), e.what());
    return std::nullopt;
  }
  auto pixels = std::make_shared<std::vector<float>>(fixed_input(batch));
  return [net, pixels, batch, logits] {
    int dims[] = {static_cast<int>(batch), 3, kSide, kSide};
    net->setInput(cv::Mat(4, dims, CV_32F, pixels->data()));
    cv::Mat out = net->forward();
    const float* o = out.ptr<float>();
    logits->assign(o, o + std::min<int64_t>(8, static_cast<int64_t>(out.total())));
  };
#else
  (void)path, (void)batch, (void)logits;
  std::fprintf(stderr, "bench onnx: built without OpenCV's DNN module (libopencv-dnn-dev)\n");
  return std::nullopt;
#endif
}

// tinycore's forward under TinyJit in turns with OpenCV's and PyTorch's (`torch`, null: none) on
// the same weights and input, 5 rounds: the median time of each, ratios round by round, the
// faster anchor's too (ratio_vs_best_anchor, > 1 where tinycore beats both), and how far the
// logits are from each anchor's.
Result measure_model(const Model& m, const std::string& path, const std::string& dir, int64_t batch,
                     TorchWorker* torch) {
  constexpr int kRounds = 5;
  Result r{"onnx", absl::StrFormat("%s b%lld 224x224", m.name, static_cast<long long>(batch)),
           true};
  r.fields["first_run_s"] = cold_first_run_s(path, batch);

  tc::onnx::OnnxRunner runner(path);
  const std::string in = runner.input_names().at(0), out = runner.output_names().at(0);
  tc::TinyJit forward([&](const std::vector<Tensor>& x) {
    return std::vector<Tensor>{runner({{in, x[0]}}).at(out).realize()};
  });
  Tensor x = input_tensor(batch);
  std::vector<float> logits;
  Workload ours = [&] { logits = forward({x})[0].data<float>(); };
  ours(), ours();  // the first run and the capture: the turns time replays
  std::vector<double> opencv_logits;
  std::vector<Workload> others;
  if (std::optional<Workload> cv = opencv_dnn(path, batch, &opencv_logits)) others.push_back(*cv);
  const nlohmann::json setup = {
      {"setup", "onnx_infer"}, {"model", m.name}, {"dir", dir}, {"batch", batch}};
  Turns t = time_with_pytorch(torch, setup, ours, kRounds, r, others);
  r.time_ms = t.median_ms(0);
  r.rate = 2 * m.gmacs * static_cast<double>(batch) / r.time_ms * 1e3;
  auto anchor = [&](const std::string& name, size_t i, const std::vector<double>& want) {
    r.fields[name + "_ms"] = t.median_ms(i);
    r.fields["max_abs_diff_vs_" + name] = max_abs_diff(logits, want);
  };
  if (!others.empty()) {
    r.set_ratio("ratio_vs_opencv", t.ratio(1));
    anchor("opencv", 1, opencv_logits);
  }
  if (r.ratios.count("ratio_vs_pytorch"))
    anchor("pytorch", t.ms.size() - 1, torch->set_up()["onnx_logits"].get<std::vector<double>>());
  if (t.ms.size() > 1) {  // the faster anchor of each round
    std::vector<double> best = t.ms[1];
    for (size_t a = 2; a < t.ms.size(); a++)
      for (size_t i = 0; i < best.size(); i++) best[i] = std::min(best[i], t.ms[a][i]);
    t.ms.push_back(best);
    r.set_ratio("ratio_vs_best_anchor", t.ratio(t.ms.size() - 1));
  }
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
  std::unique_ptr<TorchWorker> torch = cpu_torch_worker();
  std::vector<Result> results;
  for (const Model& m : kModels)
    for (int64_t batch : batches) {
      results.push_back(measure_model(m, dir + "/" + m.name + ".onnx", dir, batch, torch.get()));
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
