// train.dtype (mixed precision): products in float16 or bfloat16 under Tensor::Autocast with
// float32 master weights, and for float16 a dynamic loss scale kept in the checkpoint, so a run
// stopped mid-way and resumed still ends bitwise where an uninterrupted run ends.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "apps/common/build_model.h"
#include "apps/train/trainer.h"
#include "nn/state.h"
#include "tests/train/tiny_run.h"
#include "tinycore/error.h"

namespace {

using tc::train::Outcome;
using tc::train::run_training;
using tc::train::RunResult;

// The shared tiny mnist run's config (6 steps over two epochs, checkpoints every 2) in `dtype`.
tc::config::Config mixed_config(const std::string& dir, const std::string& dtype,
                                std::vector<std::string> extra = {}) {
  extra.push_back("train.dtype=" + dtype);
  return tinyrun::mnist_run_config(dir, extra);
}

void expect_trained(const RunResult& r) {
  EXPECT_EQ(r.outcome, Outcome::kFinished);
  EXPECT_EQ(r.steps, 6);
  std::vector<tc::train::MetricRow> rows = tinyrun::metrics_of(r.dir);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_LT(rows.back().loss, 0.8 * rows.front().loss) << "the loss did not go down";
  ASSERT_TRUE(r.eval_accuracy);
}

TEST(MixedPrecision, Float16StepsFollowTheFloat32Run) {
  // a loss scale small enough that no gradient overflows: every step is taken, and the float32
  // master weights move as the float32 run's do, up to float16 rounding
  RunResult r = run_training(
      mixed_config(tinyrun::fresh_dir("float16"), "float16", {"train.loss_scale=1024"}),
      tinyrun::silent());
  expect_trained(r);
  tc::nn::StateDict saved = tc::nn::safe_load(r.dir + "/checkpoint.safetensors");
  ASSERT_TRUE(saved.count("scaler.scale") && saved.count("scaler.growth_tracker"));
  EXPECT_EQ(saved.at("scaler.scale").item<float>(), 1024.0f);
  EXPECT_EQ(saved.at("scaler.growth_tracker").item<float>(), 6.0f);
  // |w16 - w32| against how far the float32 run moved from the initial weights |w32 - w0|
  const tinyrun::SharedRun& fp32 = tinyrun::mnist_run();
  tc::Tensor::manual_seed(static_cast<uint64_t>(fp32.config.train.seed));
  tc::nn::StateDict initial = tc::config::build_model(fp32.config.model)->state_dict();
  tc::nn::StateDict w16 = tc::nn::safe_load(r.dir + "/model.safetensors"),
                    w32 = tc::nn::safe_load(fp32.result.dir + "/model.safetensors");
  double apart = 0, moved = 0;
  for (const auto& [name, t] : w32) {
    if (!tc::dtypes::is_float(t.dtype())) continue;  // batchnorm's step counts
    EXPECT_EQ(w16.at(name).dtype(), tc::dtypes::float32) << name;
    std::vector<float> a = w16.at(name).data<float>(), b = t.data<float>(),
                       w0 = initial.at(name).data<float>();
    for (size_t i = 0; i < b.size(); i++)
      apart += (a[i] - b[i]) * (a[i] - b[i]), moved += (b[i] - w0[i]) * (b[i] - w0[i]);
  }
  EXPECT_GT(moved, 0);
  EXPECT_LT(std::sqrt(apart), 0.1 * std::sqrt(moved));
}

TEST(MixedPrecision, Float16ResumesBitwise) {
  // the default scale, 65536, overflows at first: skipped steps and a smaller scale, all of it
  // state the checkpoint must carry. Stopped after step 3 as a killed run (last checkpoint at
  // step 2), then resumed: the same bytes as the uninterrupted run
  std::string root = tinyrun::fresh_dir("float16_resume");
  RunResult whole = run_training(mixed_config(root + "/a", "float16"), tinyrun::silent());
  expect_trained(whole);
  RunResult first =
      run_training(mixed_config(root + "/b", "float16", {"train.stop_after=3"}), tinyrun::silent());
  ASSERT_EQ(first.outcome, Outcome::kStopped);
  RunResult resumed =
      run_training(tc::config::load_config(first.dir + "/config.yaml"), tinyrun::silent(first.dir));
  EXPECT_EQ(resumed.outcome, Outcome::kFinished);
  for (const char* f : {"model.safetensors", "checkpoint.safetensors"})
    EXPECT_TRUE(tinyrun::file_bytes(resumed.dir + "/" + f) ==
                tinyrun::file_bytes(whole.dir + "/" + f))
        << f << " differs from the uninterrupted run's";
}

TEST(MixedPrecision, Bfloat16TrainsWithoutALossScale) {
  RunResult r =
      run_training(mixed_config(tinyrun::fresh_dir("bfloat16"), "bfloat16"), tinyrun::silent());
  expect_trained(r);
  tc::nn::StateDict saved = tc::nn::safe_load(r.dir + "/checkpoint.safetensors");
  EXPECT_EQ(saved.count("scaler.scale"), 0u);
}

TEST(MixedPrecision, AResumeInAnotherPrecisionIsAnError) {
  // the float32 run's checkpoint has no loss scale for a float16 resume to continue from
  const RunResult& ref = tinyrun::mnist_run().result;
  std::string copy = tinyrun::fresh_dir("precision_switch");
  std::filesystem::copy(ref.dir, copy, std::filesystem::copy_options::recursive);
  tc::config::Config c = tc::config::load_config(copy + "/config.yaml", {"train.dtype=float16"});
  try {
    run_training(c, tinyrun::silent(copy));
    ADD_FAILURE() << "no error";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("precision"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("scaler.scale"), std::string::npos) << e.what();
  }
}

}  // namespace
