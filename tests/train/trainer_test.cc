// A tiny end-to-end run of each shipped config (apps/train/trainer.h): the loss goes down, the
// outputs are written, the checkpoint loads into a freshly built model, and evaluation (a TinyJit
// over padded batches) gives what a plain forward of the saved weights gives.
#include "apps/train/trainer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
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

// A finished tiny run of configs/<name>.yaml whose config.yaml has model.vocab `vocab`.
RunResult run_tiny(const std::string& name, int64_t vocab = 0) {
  Config c = tinyrun::tiny_config(name, tinyrun::fresh_dir(name));
  RunResult r = run_training(c, tinyrun::silent());
  tinyrun::expect_finished_run(c, r, 6, vocab);
  return r;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// metrics.csv of a 6-step run: the header, and the fields of its last row.
std::vector<std::string> last_csv_row(const std::string& run_dir) {
  std::vector<std::string> lines = lines_of(run_dir + "/metrics.csv");
  EXPECT_EQ(lines.size(), 7u);
  if (lines.size() != 7u) return {};
  EXPECT_EQ(lines[0], "step,epoch,loss,lr,samples_per_s,tokens_per_s,eval_loss,eval_accuracy");
  std::vector<std::string> f = absl::StrSplit(lines[6], ',');
  EXPECT_EQ(f.size(), 8u) << lines[6];
  EXPECT_EQ(f[0], "6");
  return f;
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
  RunResult r = run_tiny("gpt", 256);  // model.vocab 0: bytes are 256 tokens
  // next-byte accuracy over 6 windows of 16 tokens: a fraction of 96
  ASSERT_TRUE(r.eval_accuracy);
  EXPECT_NEAR(*r.eval_accuracy * 96, std::round(*r.eval_accuracy * 96), 1e-6);
  EXPECT_FALSE(std::filesystem::exists(r.dir + "/vocab.bin"));  // infer knows bytes
  // throughput in samples (windows of 16 tokens) and tokens per second
  std::vector<std::string> f = last_csv_row(r.dir);
  ASSERT_EQ(f.size(), 8u);
  double samples = 0, tokens = 0;
  ASSERT_TRUE(absl::SimpleAtod(f[4], &samples) && absl::SimpleAtod(f[5], &tokens));
  EXPECT_NEAR(tokens / samples, 16, 1e-4);
}

TEST(Trainer, GptTrainsOnTheCharactersOfItsText) {
  std::string dir = tinyrun::fresh_dir("gpt_chars");
  // 38 tokens start nearer the text's entropy than 256: a higher rate shows the loss fall in 6
  // steps
  Config c = tinyrun::tiny_config("gpt", dir, 16, {"data.vocab=chars", "optim.lr=1e-2"});
  // the tiny corpus: a pangram's 26 letters, the space, 10 digits and the newline, in byte order
  std::string chars = "\n 0123456789abcdefghijklmnopqrstuvwxyz";
  std::string corpus = tinyrun::file_bytes(c.data.path);
  ASSERT_EQ(std::set<char>(corpus.begin(), corpus.end()),
            std::set<char>(chars.begin(), chars.end()));
  RunResult r = run_training(c, tinyrun::silent());
  tinyrun::expect_finished_run(c, r, 6, 38);  // the model has a row per character
  EXPECT_EQ(tinyrun::file_bytes(r.dir + "/vocab.bin"), chars);
  // a resume checks the text still has those characters: as many, but 'Z' for 'z'
  std::replace(corpus.begin(), corpus.end(), 'z', 'Z');
  std::ofstream(c.data.path, std::ios::binary) << corpus;
  Config saved = tc::config::load_config(r.dir + "/config.yaml", {"train.max_steps=7"});
  EXPECT_EQ(saved.data.vocab, "chars");
  try {
    run_training(saved, tinyrun::silent(r.dir));
    ADD_FAILURE() << "no error";
  } catch (const tc::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "data.path: the text's characters differ from those the run trained on (" + r.dir +
                  "/vocab.bin)");
  }
}

TEST(Trainer, MetricsCsvOfAnImageModelHasSamplesPerSecondAndNoTokens) {
  std::vector<std::string> f = last_csv_row(tinyrun::mnist_run().result.dir);
  ASSERT_EQ(f.size(), 8u);
  double samples = 0;
  EXPECT_TRUE(absl::SimpleAtod(f[4], &samples) && samples > 0) << f[4];
  EXPECT_EQ(f[5], "");
}

TEST(Trainer, TheProgressBarEndsWhereMaxStepsEndsTheRun) {
  // 3 steps per epoch, 4 steps in all: epoch 1 is whole, epoch 2 one step long
  std::string dir = tinyrun::fresh_dir("progress");
  Config c = tinyrun::mnist_run_config(dir, {"train.max_steps=4", "log.print_every=1"});
  std::string bar_file = dir + "/bar.txt";
  FILE* bar = std::fopen(bar_file.c_str(), "w");
  ASSERT_TRUE(bar);
  RunOptions opts = tinyrun::silent();
  opts.quiet = false;
  opts.bar = bar;
  run_training(c, opts);
  std::fclose(bar);
  std::vector<std::string> lines = lines_of(bar_file);
  std::vector<std::string> want = {"epoch 1 1/3  step 1  ", "epoch 1 2/3  step 2  ",
                                   "epoch 1 3/3  step 3  ", "epoch 2 1/1  step 4  "};
  ASSERT_EQ(lines.size(), want.size()) << absl::StrJoin(lines, "\n");
  for (size_t i = 0; i < want.size(); i++) {
    EXPECT_EQ(lines[i].substr(0, want[i].size()), want[i]) << lines[i];
    EXPECT_NE(lines[i].find(" samples/s  ETA "), std::string::npos) << lines[i];
    EXPECT_EQ(lines[i].find("tokens/s"), std::string::npos) << lines[i];
  }
  EXPECT_EQ(lines[3].substr(lines[3].size() - 9), " ETA 0:00");  // nothing left of the run
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
            "model.vocab: text tokens are bytes (256 of them), the model has 100 (0: as many as "
            "the text has)");
  EXPECT_EQ(error_of("gpt", {"data.vocab=chars", "model.vocab=37"}),
            "model.vocab: the text has 38 characters (data.vocab: chars), the model has 37 (0: as "
            "many as the text has)");
  EXPECT_EQ(error_of("mnist", {"optim.schedule=cosine", "optim.warmup=6"}),
            "optim.warmup: 6 warm-up steps leave nothing of a 6-step run");
}

}  // namespace
