#include "apps/bench/model_suite.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_format.h"
#include "apps/bench/measure.h"
#include "nn/resnet.h"
#include "nn/transformer.h"
#include "tinycore/jit/jit.h"

namespace bench {
namespace {

using tc::Tensor;

// Integer labels (or tokens) in [0, classes), a fixed pattern.
Tensor labels(tc::Shape shape, int64_t classes) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int32_t> v(n);
  for (int64_t i = 0; i < n; i++) v[i] = static_cast<int32_t>(i * 7919 % classes);
  return Tensor::from_vector<int32_t>(v, shape).realize();
}

struct Sizes {
  int64_t resnet_batch, resnet_side;
  tc::nn::GPTConfig gpt;
  int64_t gpt_batch;
  int steps;
  const char* why;
};

Sizes pick_sizes(bool small) {
  if (small)
    return {.resnet_batch = 2,
            .resnet_side = 32,
            .gpt = {.vocab = 256, .context = 32, .layers = 2, .width = 64, .heads = 2},
            .gpt_batch = 2,
            .steps = 2,
            .why = "--small: tiny sizes, a smoke test"};
  if (device().is_accelerator())
    return {.resnet_batch = 64,
            .resnet_side = 224,
            .gpt = {.vocab = 50257, .context = 1024, .layers = 12, .width = 768, .heads = 12},
            .gpt_batch = 8,
            .steps = 5,
            .why = "full sizes (ResNet-50 b64 at 224x224, GPT-2 small)"};
  return {.resnet_batch = 8,
          .resnet_side = 128,
          .gpt = {.vocab = 256, .context = 128, .layers = 4, .width = 256, .heads = 4},
          .gpt_batch = 8,
          .steps = 4,
          .why =
              "sizes for a device that is not an accelerator, under a minute (the full sizes, "
              "ResNet-50 b64 at 224x224 and GPT-2 small, are for accelerators)"};
}

}  // namespace

StepTiming time_train_step(tc::nn::Module& model, tc::nn::Optimizer& opt, const Tensor& x,
                           const Tensor& y, int steps) {
  tc::TinyJit step([&](const std::vector<Tensor>& in) {
    Tensor::Train train;
    opt.zero_grad();
    Tensor loss = model(in[0]).sparse_categorical_crossentropy(in[1]);
    loss.backward();
    std::vector<Tensor> to_realize = opt.schedule_step();
    for (const Tensor& b : model.buffers()) to_realize.push_back(b);
    to_realize.push_back(loss);
    tc::realize_all(to_realize);
    return std::vector<Tensor>{loss};
  });
  StepTiming t;
  double t0 = now();
  step({x, y})[0].item<float>();
  t.first_s = now() - t0;
  if (steps == 0) return t;
  step({x, y});  // the capture
  device().synchronize();
  // the median step: one slow step (another process on a shared machine) does not move it
  std::vector<double> times;
  for (int s = 0; s < steps; s++) {
    t0 = now();
    step({x, y});
    device().synchronize();
    times.push_back(now() - t0);
  }
  std::nth_element(times.begin(), times.begin() + steps / 2, times.end());
  t.step_s = times[steps / 2];
  t.kernels = static_cast<double>(step.kernel_count());
  t.planned_bytes = static_cast<double>(step.planned_bytes());
  t.unplanned_bytes = static_cast<double>(step.unplanned_bytes());
  return t;
}

std::vector<Result> model_suite(bool small) {
  const Sizes s = pick_sizes(small);
  std::printf("model: %s\n", s.why);
  std::vector<Result> results;
  auto add = [&](Result r) {
    print(r);
    results.push_back(std::move(r));
  };
  auto train_result = [](std::string name, const StepTiming& t, const char* unit, double items) {
    Result r{"model", std::move(name), false};
    r.time_ms = t.step_s * 1e3;
    r.fields[unit] = items / t.step_s;
    r.fields["first_step_s"] = t.first_s;
    r.fields["kernels_per_step"] = t.kernels;
    r.fields["peak_bytes"] = t.planned_bytes;
    return r;
  };

  {
    Tensor::manual_seed(0);
    tc::nn::ResNet resnet({.depth = 50, .cifar = false, .in_channels = 3, .classes = 1000});
    const int64_t b = s.resnet_batch, side = s.resnet_side;
    Tensor x = random({b, 3, side, side}), y = labels({b}, 1000);
    const std::string size = absl::StrFormat("b%d %dx%d", b, side, side);
    {
      tc::nn::SGD opt(resnet.parameters(), {.lr = 0.01, .momentum = 0.9, .weight_decay = 5e-5});
      StepTiming t = time_train_step(resnet, opt, x, y, s.steps);
      add(train_result("resnet50 train " + size, t, "images_per_s", static_cast<double>(b)));
    }
    tc::TinyJit forward([&](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{resnet(in[0]).realize()};
    });
    double t0 = now();
    forward({x})[0].data<float>();
    double first = now() - t0;
    forward({x});  // the capture
    double ms = device_time_ms([&] { forward({x}); }, s.steps);
    Result r{"model", "resnet50 infer " + size, false};
    r.time_ms = ms;
    r.fields["images_per_s"] = static_cast<double>(b) / ms * 1e3;
    r.fields["first_step_s"] = first;
    r.fields["kernels_per_step"] = static_cast<double>(forward.kernel_count());
    add(r);
  }
  {
    Tensor::manual_seed(0);
    const tc::nn::GPTConfig& g = s.gpt;
    tc::nn::GPT gpt(g);
    tc::nn::AdamW opt(gpt.parameters(), {.lr = 3e-4});
    Tensor tokens = labels({s.gpt_batch, g.context}, g.vocab);
    Tensor targets = labels({s.gpt_batch, g.context}, g.vocab - 1);
    StepTiming t = time_train_step(gpt, opt, tokens, targets, s.steps);
    Result r = train_result(absl::StrFormat("gpt train b%dx%d (%d layers, d%d, vocab %d)",
                                            s.gpt_batch, g.context, g.layers, g.width, g.vocab),
                            t, "tokens_per_s", static_cast<double>(s.gpt_batch * g.context));
    // PyTorch's step of the same model on the same machine (its CPU build: no GPU anchor)
    if (!device().is_accelerator())
      if (auto torch = run_pytorch(
              absl::StrFormat("--gpt-train %d,%d,%d,%d,%d --batch %d --steps %d", g.vocab,
                              g.context, g.layers, g.width, g.heads, s.gpt_batch, s.steps))) {
        double torch_step_s = (*torch)["gpt_step_s"].get<double>();
        r.fields["pytorch_tokens_per_s"] =
            static_cast<double>(s.gpt_batch * g.context) / torch_step_s;
        r.ratios["ratio_vs_pytorch"] = torch_step_s / t.step_s;
      }
    add(r);
  }
  return results;
}

}  // namespace bench
