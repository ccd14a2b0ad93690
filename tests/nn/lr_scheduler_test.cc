// Learning-rate schedules against PyTorch's (tests/fixtures/gen_lr.py): the optimizer's lr after
// construction and after each step, 40 steps; and their argument errors.
#include "nn/lr_scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "tests/tensor/fixture.h"
#include "tinycore/error.h"

namespace {

using tc::Tensor;
using ::testing::HasSubstr;

void check(const std::string& name, double base_lr,
           const std::function<std::unique_ptr<tc::nn::LRScheduler>(tc::nn::Optimizer&)>& make) {
  SCOPED_TRACE(name);
  const tcfix::FixtureTensor& want = tcfix::fixture("lr", name)["lr"];
  tc::nn::SGD opt({Tensor::zeros({1}).contiguous().realize()}, {.lr = base_lr});
  std::unique_ptr<tc::nn::LRScheduler> sched = make(opt);
  for (size_t s = 0; s < want.values.size(); s++) {
    // the optimizer holds it in float32
    EXPECT_NEAR(opt.lr().item<float>(), want.values[s], 1e-7 + 1e-6 * want.values[s])
        << "step " << s;
    EXPECT_NEAR(sched->lr_at(static_cast<int64_t>(s)), want.values[s], 1e-12) << "step " << s;
    sched->step();
  }
}

TEST(LRScheduler, StepLR) {
  check("step", 0.1,
        [](tc::nn::Optimizer& o) { return std::make_unique<tc::nn::StepLR>(o, 0.1, 7, 0.5); });
}

TEST(LRScheduler, CosineIsCosineAnnealingWithoutWarmup) {
  check("cosine", 0.1, [](tc::nn::Optimizer& o) {
    return std::make_unique<tc::nn::CosineWarmupLR>(o, 0.1, 0, 39, 0.001);
  });
}

TEST(LRScheduler, CosineWithWarmup) {
  check("cosine_warmup", 0.1, [](tc::nn::Optimizer& o) {
    return std::make_unique<tc::nn::CosineWarmupLR>(o, 0.1, 5, 30, 0.001);
  });
}

TEST(LRScheduler, OneCycle) {
  check("onecycle", 0.2,
        [](tc::nn::Optimizer& o) { return std::make_unique<tc::nn::OneCycleLR>(o, 0.2, 41); });
}

TEST(LRScheduler, Errors) {
  tc::nn::SGD opt({Tensor::zeros({1}).contiguous().realize()});
  EXPECT_THAT([&] { tc::nn::StepLR(opt, 0.1, 0); },
              ::testing::ThrowsMessage<tc::Error>(HasSubstr("step_size must be positive")));
  EXPECT_THAT([&] { tc::nn::CosineWarmupLR(opt, 0.1, 10, 10); },
              ::testing::ThrowsMessage<tc::Error>(HasSubstr("0 <= warmup < total_steps")));
  EXPECT_THAT([&] { tc::nn::OneCycleLR(opt, 0.1, 10, {.pct_start = 1.5}); },
              ::testing::ThrowsMessage<tc::Error>(HasSubstr("pct_start must be in (0, 1)")));
}

}  // namespace
