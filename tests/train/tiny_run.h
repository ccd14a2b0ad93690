// Tiny versions of the shipped configs for the train tests (a handful of samples, narrow models,
// a few steps, runs under a fresh temporary folder), and reading a run's files back.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "apps/common/build_model.h"
#include "apps/common/config.h"
#include "apps/train/metrics.h"
#include "apps/train/trainer.h"
#include "nn/state.h"

namespace tinyrun {

inline const std::string kRoot = TC_FIXTURE_DIR "/../..";

// The folders the tests made, removed when the test program exits.
struct TempDirs {
  std::vector<std::string> dirs;
  ~TempDirs() {
    std::error_code ec;
    for (const std::string& d : dirs) std::filesystem::remove_all(d, ec);
  }
};

// A folder of its own under the test's temporary directory, emptied first.
inline std::string fresh_dir(const std::string& name) {
  static TempDirs made;
  std::string d = testing::TempDir() + "/tc_train_test_" + std::to_string(getpid()) + "_" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  made.dirs.push_back(d);
  return d;
}

// configs/<name>.yaml shrunk to a few steps over `samples` training samples, batches of 16
// (gpt: 4 windows of 16 tokens over a small repetitive text), outputs under `dir`.
inline std::vector<std::string> tiny_overrides(const std::string& name, const std::string& dir,
                                               int64_t samples) {
  std::vector<std::string> o = {"log.dir=" + dir,           "data.limit=" + std::to_string(samples),
                                "data.workers=1",           "train.max_steps=6",
                                "train.eval_batch_size=16", "data.eval_limit=20",
                                "train.batch_size=16"};
  if (name == "resnet") o.push_back("model.width=4");
  if (name == "gpt") {
    std::string text_file = dir + "/corpus.txt";
    std::ofstream out(text_file);
    for (int i = 0; i < 60; i++) out << "the quick brown fox jumps over the lazy dog " << i << "\n";
    o.insert(o.end(), {"data.path=" + text_file, "model.layers=1", "model.dim=32", "model.heads=2",
                       "model.context=16", "train.batch_size=4", "train.eval_batch_size=4",
                       "data.eval_limit=6", "optim.lr=3e-3", "train.eval_every=0",
                       "train.checkpoint_every=0"});
  }
  return o;
}

inline tc::config::Config tiny_config(const std::string& name, const std::string& dir,
                                      int64_t samples = 16,
                                      const std::vector<std::string>& extra = {}) {
  std::vector<std::string> o = tiny_overrides(name, dir, samples);
  o.insert(o.end(), extra.begin(), extra.end());
  return tc::config::load_config(kRoot + "/configs/" + name + ".yaml", o);
}

// The mnist run the tests share (made once per process): 48 samples in batches of 16, so 3 steps
// per epoch; 6 steps, evaluating every 3 and checkpointing every 2 (mid-epoch).
inline const std::vector<std::string> kMnistRunKeys = {"train.checkpoint_every=2",
                                                       "train.eval_every=3"};
inline tc::config::Config mnist_run_config(const std::string& dir,
                                           std::vector<std::string> extra = {}) {
  extra.insert(extra.begin(), kMnistRunKeys.begin(), kMnistRunKeys.end());
  return tiny_config("mnist", dir, 48, extra);
}
struct SharedRun {
  tc::config::Config config;
  tc::train::RunResult result;
};
inline FILE* devnull() {
  static FILE* f = std::fopen("/dev/null", "w");
  return f;
}
inline tc::train::RunOptions silent(const std::string& resume_dir = "",
                                    const std::atomic<bool>* interrupt = nullptr) {
  return {.resume_dir = resume_dir,
          .quiet = true,
          .tty = false,
          .interrupt = interrupt,
          .log = devnull(),
          .bar = devnull()};
}
inline const SharedRun& mnist_run() {
  static const SharedRun run = [] {
    SharedRun r;
    r.config = mnist_run_config(fresh_dir("mnist_reference"));
    r.result = tc::train::run_training(r.config, silent());
    return r;
  }();
  return run;
}

inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::vector<tc::train::MetricRow> metrics_of(const std::string& run_dir) {
  tc::train::Metrics m(run_dir);
  m.resume(INT64_MAX);
  return m.rows();
}

// What every finished run of `c` must leave behind: its files, a loss that went down, the
// throughput of every step (in tokens too for gpt), a config.yaml that is `c` with model.vocab
// `vocab`, and a checkpoint that loads, strictly, into the model that config describes.
inline void expect_finished_run(const tc::config::Config& c, const tc::train::RunResult& r,
                                int64_t steps, int64_t vocab = 0) {
  EXPECT_EQ(r.outcome, tc::train::Outcome::kFinished);
  EXPECT_EQ(r.steps, steps);
  EXPECT_EQ(r.dir, c.log.dir + "/" + c.log.name);
  for (const char* f :
       {"config.yaml", "checkpoint.safetensors", "model.safetensors", "metrics.csv", "curves.png"})
    EXPECT_TRUE(std::filesystem::exists(r.dir + "/" + f)) << f;
  std::vector<tc::train::MetricRow> rows = metrics_of(r.dir);
  ASSERT_EQ(rows.size(), static_cast<size_t>(steps));
  EXPECT_LT(rows.back().loss, 0.8 * rows.front().loss)
      << c.model.name << ": the loss did not go down";
  EXPECT_TRUE(rows.back().eval_accuracy.has_value());
  for (const auto& row : rows) {
    EXPECT_GT(row.samples_per_s, 0);
    if (c.model.name != "gpt") {
      EXPECT_FALSE(row.tokens_per_s.has_value());
      continue;
    }
    ASSERT_TRUE(row.tokens_per_s.has_value());  // a sample is model.context tokens
    EXPECT_NEAR(*row.tokens_per_s / row.samples_per_s, c.model.context, 1e-4 * c.model.context);
  }
  tc::config::Config saved = tc::config::load_config(r.dir + "/config.yaml"), want = c;
  want.model.vocab = vocab;
  EXPECT_EQ(tc::config::to_yaml(saved), tc::config::to_yaml(want));
  auto model = tc::config::build_model(saved.model);
  tc::nn::StateDict sd = model->state_dict();
  EXPECT_TRUE(tc::nn::load_state_dict(sd, tc::nn::safe_load(r.dir + "/model.safetensors")).ok());
}

}  // namespace tinyrun
