// A tiny end-to-end run of each shipped config (apps/train/trainer.h): the loss goes down, the
// outputs are written, the checkpoint loads into a freshly built model, and evaluation (a TinyJit
// over padded batches) gives what a plain forward of the saved weights gives.
#include "apps/train/trainer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "apps/common/build_model.h"
#include "datasets/idx.h"
#include "nn/state.h"
#include "tests/train/tiny_run.h"
#include "tinycore/error.h"

namespace {

using tc::config::Config;
using tc::train::run_training;
using tc::train::RunOptions;
using tc::train::RunResult;

RunResult run_tiny(const std::string& name) {
  Config c = tinyrun::tiny_config(name, tinyrun::fresh_dir(name));
  RunResult r = run_training(c, tinyrun::silent());
  tinyrun::expect_finished_run(c, r, 6);
  return r;
}

TEST(Trainer, MnistConvnetTrainsAndEvaluatesAsAPlainForward) {
  const Config& c = tinyrun::mnist_run().config;
  const RunResult& r = tinyrun::mnist_run().result;
  tinyrun::expect_finished_run(c, r, 6);
  ASSERT_TRUE(r.eval_accuracy && r.eval_loss);
  // Evaluation saw 20 test images in two padded batches of 16: recompute it without the JIT.
  auto model = tc::config::build_model(c.model);
  tc::nn::StateDict sd = model->state_dict();
  tc::nn::load_state_dict(sd, tc::nn::safe_load(r.dir + "/model.safetensors"));
  tc::datasets::MnistSplit test = tc::datasets::load_mnist(tc::datasets::kFashionMnistDir, false);
  std::vector<float> x(20 * 784);
  std::vector<int32_t> y(20);
  for (size_t i = 0; i < x.size(); i++) x[i] = (test.images.data[i] / 255.0 - 0.2860) / 0.3530;
  for (size_t i = 0; i < y.size(); i++) y[i] = test.labels.data[i];
  tc::Tensor logits = (*model)(tc::Tensor::from_vector<float>(x, tc::Shape{20, 1, 28, 28}));
  std::vector<float> l = logits.data<float>();
  int hits = 0;
  for (int i = 0; i < 20; i++)
    hits += std::max_element(&l[i * 10], &l[i * 10 + 10]) - &l[i * 10] == y[i];
  EXPECT_DOUBLE_EQ(*r.eval_accuracy, hits / 20.0);
  double loss =
      logits.sparse_categorical_crossentropy(tc::Tensor::from_vector<int32_t>(y)).item<float>();
  EXPECT_NEAR(*r.eval_loss, loss, 1e-5 * loss);
}

TEST(Trainer, ResnetTrains) { run_tiny("resnet"); }

TEST(Trainer, GptTrainsOnText) {
  RunResult r = run_tiny("gpt");
  // next-byte accuracy over 6 windows of 16 tokens: a fraction of 96
  ASSERT_TRUE(r.eval_accuracy);
  EXPECT_NEAR(*r.eval_accuracy * 96, std::round(*r.eval_accuracy * 96), 1e-6);
}

TEST(Trainer, AFreshRunNeverOverwritesAnEarlierOne) {
  std::string dir = tinyrun::fresh_dir("names");
  Config c = tinyrun::tiny_config("mnist", dir);
  EXPECT_EQ(tc::train::fresh_run_dir(c), dir + "/mnist");
  std::filesystem::create_directories(dir + "/mnist");
  EXPECT_EQ(tc::train::fresh_run_dir(c), dir + "/mnist");  // empty: still free
  std::ofstream(dir + "/mnist/config.yaml") << "x";
  EXPECT_EQ(tc::train::fresh_run_dir(c), dir + "/mnist-2");
}

TEST(Trainer, ConfigsThatDoNotFitTheDataNameTheKey) {
  auto error_of = [](const std::string& name, const std::vector<std::string>& extra) {
    std::string dir = tinyrun::fresh_dir("bad");
    try {
      run_training(tinyrun::tiny_config(name, dir, 16, extra), tinyrun::silent());
    } catch (const tc::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("mnist", {"train.batch_size=32"}),
            "train.batch_size: 32 is more than the 16 training samples (data.limit)");
  EXPECT_EQ(error_of("resnet", {"model.in_channels=3"}),
            "model.in_channels: fashion_mnist images have 1 channel, the model takes 3");
  EXPECT_EQ(error_of("mnist", {"model.classes=5"}),
            "model.classes: fashion_mnist has 10 classes, the model predicts 5");
  EXPECT_EQ(error_of("mnist", {"data.name=text"}),
            "data.name: text is for language models (model.name: gpt), not mnist_convnet");
  EXPECT_EQ(error_of("gpt", {"model.vocab=100"}),
            "model.vocab: text tokens are bytes (256 of them), the model has 100");
  EXPECT_EQ(error_of("mnist", {"optim.schedule=cosine", "optim.warmup=6"}),
            "optim.warmup: 6 warm-up steps leave nothing of a 6-step run");
}

}  // namespace
