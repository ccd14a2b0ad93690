#include "apps/bench/model_suite.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/str_format.h"
#include "apps/bench/measure.h"
#include "apps/bench/torch_worker.h"
#include "apps/bench/train_step.h"
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
  int rounds;  // of the cases in turns with PyTorch's (bench::time_in_turns)
  const char* why;
};

Sizes pick_sizes(bool small) {
  if (small)
    return {.resnet_batch = 2,
            .resnet_side = 32,
            .gpt = {.vocab = 256, .context = 32, .layers = 2, .width = 64, .heads = 2},
            .gpt_batch = 2,
            .rounds = 2,
            .why = "--small: tiny sizes, a smoke test"};
  if (device().is_accelerator())
    return {.resnet_batch = 64,
            .resnet_side = 224,
            .gpt = {.vocab = 50257, .context = 1024, .layers = 12, .width = 768, .heads = 12},
            .gpt_batch = 8,
            .rounds = 5,
            .why = "full sizes (ResNet-50 b64 at 224x224, GPT-2 small)"};
  return {.resnet_batch = 8,
          .resnet_side = 128,
          .gpt = {.vocab = 256, .context = 128, .layers = 4, .width = 256, .heads = 4},
          .gpt_batch = 8,
          .rounds = 5,
          .why =
              "sizes for a device that is not an accelerator, under a minute (the full sizes, "
              "ResNet-50 b64 at 224x224 and GPT-2 small, are for accelerators)"};
}

}  // namespace

std::vector<Result> model_suite(bool small) {
  const Sizes s = pick_sizes(small);
  std::printf("model: %s\n", s.why);
  std::unique_ptr<TorchWorker> torch = cpu_torch_worker();
  std::vector<Result> results;
  // `ours` in turns with PyTorch's step of `setup` into a case whose rate is `items` a step
  auto measure = [&](Result r, const nlohmann::json& setup, const Workload& ours,
                     const std::string& unit, double items) {
    Turns t = time_with_pytorch(torch.get(), setup, ours, s.rounds, r);
    r.time_ms = t.median_ms(0);
    r.fields[unit] = items / r.time_ms * 1e3;
    if (t.ms.size() > 1) r.fields["pytorch_" + unit] = items / t.median_ms(1) * 1e3;
    print(r);
    results.push_back(std::move(r));
  };
  auto train = [&](std::string name, TrainStep& step, const nlohmann::json& setup,
                   const std::string& unit, double items) {
    step();  // the capture
    Result r{"model", std::move(name), false};
    r.fields["first_step_s"] = step.first_s();
    r.fields["kernels_per_step"] = static_cast<double>(step.jit().kernel_count());
    r.fields["peak_bytes"] = static_cast<double>(step.jit().planned_bytes());
    measure(std::move(r), setup, step.workload(), unit, items);
  };

  {
    Tensor::manual_seed(0);
    tc::nn::ResNet resnet({.depth = 50, .cifar = false, .in_channels = 3, .classes = 1000});
    const int64_t b = s.resnet_batch, side = s.resnet_side;
    Tensor x = random({b, 3, side, side}), y = labels({b}, 1000);
    const std::string size = absl::StrFormat("b%d %dx%d", b, side, side);
    {
      tc::nn::SGD opt(resnet.parameters(), {.lr = 0.01, .momentum = 0.9, .weight_decay = 5e-5});
      TrainStep step(resnet, opt, x, y);
      train("resnet50 train " + size, step,
            {{"setup", "resnet50_train"}, {"batch", b}, {"side", side}}, "images_per_s",
            static_cast<double>(b));
    }
    tc::TinyJit forward([&](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{resnet(in[0]).realize()};
    });
    double t0 = now();
    forward({x})[0].data<float>();
    Result r{"model", "resnet50 infer " + size, false};
    r.fields["first_step_s"] = now() - t0;
    forward({x});  // the capture
    r.fields["kernels_per_step"] = static_cast<double>(forward.kernel_count());
    measure(
        std::move(r), {{"setup", "resnet50_infer"}, {"batch", b}, {"side", side}},
        [&] {
          forward({x});
          device().synchronize();
        },
        "images_per_s", static_cast<double>(b));
  }
  {
    Tensor::manual_seed(0);
    const tc::nn::GPTConfig& g = s.gpt;
    tc::nn::GPT gpt(g);
    tc::nn::AdamW opt(gpt.parameters(), {.lr = 3e-4});
    TrainStep step(gpt, opt, labels({s.gpt_batch, g.context}, g.vocab),
                   labels({s.gpt_batch, g.context}, g.vocab - 1));
    train(absl::StrFormat("gpt train b%dx%d (%d layers, d%d, vocab %d)", s.gpt_batch, g.context,
                          g.layers, g.width, g.vocab),
          step,
          {{"setup", "gpt_train"},
           {"shape", {g.vocab, g.context, g.layers, g.width, g.heads}},
           {"batch", s.gpt_batch}},
          "tokens_per_s", static_cast<double>(s.gpt_batch * g.context));
  }
  return results;
}

}  // namespace bench
