// --resume continues exactly: a run stopped mid-way (as a kill -9 would stop it, or by SIGINT)
// and resumed from its last checkpoint ends with the same bytes in its checkpoint files as an
// uninterrupted run, and a metrics.csv with each step's row once. The runs cross an epoch
// boundary, evaluate, and checkpoint mid-epoch.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "apps/train/metrics.h"
#include "apps/train/trainer.h"
#include "tests/train/tiny_run.h"
#include "tinycore/error.h"
#include "tinycore/tensor.h"

extern char** environ;

namespace {

using tc::train::Outcome;
using tc::train::run_training;
using tc::train::RunOptions;
using tc::train::RunResult;

using tinyrun::silent;

void expect_same_run(const std::string& dir) {
  const std::string& ref = tinyrun::mnist_run().result.dir;
  for (const char* f : {"model.safetensors", "checkpoint.safetensors"})
    EXPECT_TRUE(tinyrun::file_bytes(dir + "/" + f) == tinyrun::file_bytes(ref + "/" + f))
        << f << " differs from the uninterrupted run's";
  std::vector<tc::train::MetricRow> got = tinyrun::metrics_of(dir), want = tinyrun::metrics_of(ref);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) {
    EXPECT_EQ(got[i].step, want[i].step);
    EXPECT_EQ(got[i].epoch, want[i].epoch);
    EXPECT_EQ(got[i].loss, want[i].loss) << "step " << got[i].step;
    EXPECT_EQ(got[i].lr, want[i].lr) << "step " << got[i].step;
    EXPECT_EQ(got[i].eval_accuracy, want[i].eval_accuracy) << "step " << got[i].step;
  }
}

TEST(Resume, InterruptCheckpointsAfterTheCurrentStep) {
  std::string root = tinyrun::fresh_dir("interrupted");
  std::atomic<bool> interrupt{true};  // as if Ctrl-C came during step 1
  RunResult r = run_training(tinyrun::mnist_run_config(root), silent("", &interrupt));
  ASSERT_EQ(r.outcome, Outcome::kInterrupted);
  EXPECT_EQ(r.steps, 1);
  EXPECT_EQ(tinyrun::metrics_of(r.dir).size(), 1u);
  RunResult resumed = run_training(tc::config::load_config(r.dir + "/config.yaml"), silent(r.dir));
  EXPECT_EQ(resumed.outcome, Outcome::kFinished);
  expect_same_run(r.dir);
}

TEST(Resume, KilledProcessResumesToTheSameWeights) {
  const std::string train =
      std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "train";
  ASSERT_TRUE(std::filesystem::exists(train)) << train;
  std::string root = tinyrun::fresh_dir("killed");
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), train);
    args.push_back("--quiet");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t io;
    posix_spawn_file_actions_init(&io);
    posix_spawn_file_actions_addopen(&io, 1, (root + "/out.log").c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&io, 1, 2);
    pid_t pid;
    int status = -1;
    EXPECT_EQ(posix_spawn(&pid, train.c_str(), &io, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&io);
    waitpid(pid, &status, 0);
    return status;
  };
  std::vector<std::string> args = {"--config", tinyrun::kRoot + "/configs/mnist.yaml"};
  for (const std::string& o : tinyrun::tiny_overrides("mnist", root, 48)) args.push_back(o);
  args.insert(args.end(), tinyrun::kMnistRunKeys.begin(), tinyrun::kMnistRunKeys.end());
  args.push_back("train.stop_after=3");
  int status = run(args);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "status " << status << "\n"
      << tinyrun::file_bytes(root + "/out.log");
  // Resumed in this process (its kernels are compiled already), from what the killed one left.
  const std::string dir = root + "/mnist";
  RunResult resumed = run_training(tc::config::load_config(dir + "/config.yaml"), silent(dir));
  EXPECT_EQ(resumed.outcome, Outcome::kFinished);
  expect_same_run(dir);
}

TEST(Resume, MetricsCsvHasEveryStepOnceWhicheverWriteOfACheckpointFails) {
  // A write that fails stands in for a kill between the two writes of a checkpoint step: a run
  // stopped after step 3 (checkpoint at step 2) is resumed with one write of step 4's checkpoint
  // blocked by a folder where its temporary file goes, then resumed again with it unblocked.
  for (const std::string& blocked :
       {std::string("metrics.csv.tmp"), "checkpoint.safetensors.tmp." + std::to_string(getpid())}) {
    SCOPED_TRACE(blocked);
    std::string root = tinyrun::fresh_dir("failed_write");
    RunResult first =
        run_training(tinyrun::mnist_run_config(root, {"train.stop_after=3"}), silent());
    ASSERT_EQ(first.outcome, Outcome::kStopped);
    tc::config::Config saved = tc::config::load_config(first.dir + "/config.yaml");
    std::filesystem::create_directories(first.dir + "/" + blocked);
    EXPECT_THROW(run_training(saved, silent(first.dir)), tc::Error);
    std::filesystem::remove_all(first.dir + "/" + blocked);
    RunResult resumed = run_training(saved, silent(first.dir));
    EXPECT_EQ(resumed.outcome, Outcome::kFinished);
    std::vector<int64_t> steps;
    for (const tc::train::MetricRow& row : tinyrun::metrics_of(first.dir))
      steps.push_back(row.step);
    EXPECT_EQ(steps, (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
    expect_same_run(first.dir);
  }
}

TEST(Resume, MetricsCsvReadsBackEveryColumn) {
  std::string dir = tinyrun::fresh_dir("metrics_columns");
  tc::train::Metrics m(dir);
  auto row = [](int64_t step, double samples, std::optional<double> tokens) {
    tc::train::MetricRow r;
    r.step = step;
    r.epoch = 1;
    r.loss = 2.5 - 0.25 * static_cast<double>(step);
    r.lr = 0.125 * static_cast<double>(step);
    r.samples_per_s = samples;
    r.tokens_per_s = tokens;
    return r;
  };
  m.add(row(1, 40, 640));
  m.add(row(2, 48, std::nullopt));
  m.set_eval(1.5, 0.75);
  m.add(row(3, 50, std::nullopt));
  m.write();
  tc::train::Metrics back(dir);
  back.resume(2);  // the rows up to a checkpoint at step 2
  ASSERT_EQ(back.rows().size(), 2u);
  const tc::train::MetricRow &a = back.rows()[0], &b = back.rows()[1];
  EXPECT_EQ(a.step, 1);
  EXPECT_EQ(a.epoch, 1);
  EXPECT_EQ(a.loss, 2.25);
  EXPECT_EQ(a.lr, 0.125);
  EXPECT_EQ(a.samples_per_s, 40);
  EXPECT_EQ(a.tokens_per_s, 640);
  EXPECT_FALSE(a.eval_loss.has_value());
  EXPECT_EQ(b.step, 2);
  EXPECT_EQ(b.samples_per_s, 48);
  EXPECT_FALSE(b.tokens_per_s.has_value());
  EXPECT_EQ(b.eval_loss, 1.5);
  EXPECT_EQ(b.eval_accuracy, 0.75);
  // a file with other columns is not misread
  std::ofstream(dir + "/metrics.csv") << "step,epoch,loss,lr,throughput,eval_loss,eval_accuracy\n"
                                         "1,1,2.5,0.1,40,,\n";
  try {
    back.resume(1);
    ADD_FAILURE() << "no error";
  } catch (const tc::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "resume: " + dir +
                  "/metrics.csv: its columns are 'step,epoch,loss,lr,throughput,eval_loss,eval_"
                  "accuracy', expected 'step,epoch,loss,lr,samples_per_s,tokens_per_s,eval_loss,"
                  "eval_accuracy'");
  }
}

TEST(Resume, ResumingWithoutACheckpointSaysSo) {
  std::string root = tinyrun::fresh_dir("empty");
  try {
    run_training(tinyrun::tiny_config("mnist", root, 48), silent(root));
    FAIL() << "no error";
  } catch (const tc::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "resume: " + root +
                  " has no checkpoint.safetensors (not a train run, or killed before its first "
                  "checkpoint)");
  }
}

TEST(Resume, RandomStateRoundTripsThroughRestore) {
  tc::Tensor::manual_seed(7);
  tc::Tensor::rand({5}).realize();
  tc::Tensor::RandomState s = tc::Tensor::rng_state();
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.counter, 5u);
  std::vector<float> next = tc::Tensor::rand({3}).data<float>();
  tc::Tensor::manual_seed(1);
  tc::Tensor::rand({11}).realize();
  tc::Tensor::set_rng_state(s);
  EXPECT_EQ(tc::Tensor::rand({3}).data<float>(), next);
  EXPECT_EQ(tc::Tensor::rng_state().counter, 8u);
}

}  // namespace
