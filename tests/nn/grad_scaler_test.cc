// Dynamic loss scaling (nn/grad_scaler.h): a good step equals the unscaled step bit for bit; a
// step with an inf gradient changes no parameter and no optimizer state and backs the scale off;
// the scale grows after its interval of good steps. The last test runs a TinyJit step through a
// sequence of good and bad inputs against a host simulation in double.
#include "nn/grad_scaler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "nn/optim.h"
#include "tests/error_message.h"
#include "tinycore/error.h"
#include "tinycore/jit/jit.h"

namespace {

using tc::Tensor;
using tc::nn::GradScaler;
using ::testing::HasSubstr;

Tensor param(std::vector<float> v) {
  tc::Shape s{static_cast<int64_t>(v.size())};
  return Tensor(std::move(v), s).contiguous().realize();
}

// One step of `opt` on L = sum(k * w * w) through the scaler; returns whether it was applied.
bool scaled_step(GradScaler& scaler, tc::nn::Optimizer& opt, Tensor& w, const Tensor& k) {
  opt.zero_grad();
  scaler.scale((k * w * w).sum()).backward();
  Tensor finite = scaler.unscale(opt.params());
  std::vector<Tensor> out = opt.schedule_step(finite);
  for (const Tensor& t : scaler.update(finite)) out.push_back(t);
  out.push_back(finite);
  tc::realize_all(out);
  return finite.item<bool>();
}

std::vector<std::vector<float>> values(const tc::nn::StateDict& d) {
  std::vector<std::vector<float>> out;
  for (const auto& [name, t] : d) out.push_back(t.data<float>());
  return out;
}

TEST(GradScaler, AGoodStepEqualsTheUnscaledStep) {
  Tensor k = Tensor(std::vector<float>{0.3f, -1.5f, 2.0f}, tc::Shape{3});
  Tensor w1 = param({0.5f, -1.0f, 2.0f}), w2 = param({0.5f, -1.0f, 2.0f});
  tc::nn::AdamW plain({w1}, {.lr = 0.01}), scaled({w2}, {.lr = 0.01});
  GradScaler scaler({.init_scale = 1024});
  for (int s = 0; s < 3; s++) {
    plain.zero_grad();
    (k * w1 * w1).sum().backward();
    plain.step();
    EXPECT_TRUE(scaled_step(scaler, scaled, w2, k));
    EXPECT_EQ(w2.data<float>(), w1.data<float>()) << "step " << s;
  }
  EXPECT_EQ(values(scaled.state_dict()), values(plain.state_dict()));
  EXPECT_EQ(scaler.current_scale().item<float>(), 1024.0f);
  EXPECT_EQ(scaler.state_dict().at("growth_tracker").item<float>(), 3.0f);
}

TEST(GradScaler, AnInfiniteGradientSkipsTheStepAndBacksOff) {
  Tensor w = param({0.5f, -1.0f, 2.0f});
  tc::nn::SGD opt({w}, {.lr = 0.1, .momentum = 0.9});
  GradScaler scaler({.init_scale = 1024});
  Tensor good = Tensor(std::vector<float>{1.0f, 1.0f, 1.0f}, tc::Shape{3});
  ASSERT_TRUE(scaled_step(scaler, opt, w, good));
  std::vector<float> w_before = w.data<float>();
  std::vector<std::vector<float>> state_before = values(opt.state_dict());
  const float inf = std::numeric_limits<float>::infinity();
  for (float bad : {inf, std::nanf("")}) {
    Tensor k = Tensor(std::vector<float>{1.0f, bad, 1.0f}, tc::Shape{3});
    EXPECT_FALSE(scaled_step(scaler, opt, w, k));
    EXPECT_EQ(w.data<float>(), w_before);
    EXPECT_EQ(values(opt.state_dict()), state_before);
    EXPECT_EQ(scaler.state_dict().at("growth_tracker").item<float>(), 0.0f);
  }
  EXPECT_EQ(scaler.current_scale().item<float>(), 256.0f);
  // a gradient that overflows float32 only once scaled is caught too
  Tensor huge = Tensor(std::vector<float>{1e37f, 1.0f, 1.0f}, tc::Shape{3});
  EXPECT_FALSE(scaled_step(scaler, opt, w, huge));
  EXPECT_EQ(scaler.current_scale().item<float>(), 128.0f);
  EXPECT_TRUE(scaled_step(scaler, opt, w, good));
  EXPECT_NE(w.data<float>(), w_before);
}

TEST(GradScaler, GrowsAfterItsIntervalUnderTinyJit) {
  // L = sum(k * w): the gradient is k whatever w is, so the host can follow SGD with momentum
  Tensor w = param({0.5f, -1.0f, 2.0f});
  const double lr = 0.05, momentum = 0.5;
  tc::nn::SGD opt({w}, {.lr = lr, .momentum = momentum});
  GradScaler scaler({.init_scale = 8, .growth_interval = 3});
  tc::TinyJit step([&](const std::vector<Tensor>& in) {
    opt.zero_grad();
    scaler.scale((in[0] * w).sum()).backward();
    Tensor finite = scaler.unscale(opt.params());
    std::vector<Tensor> out = opt.schedule_step(finite);
    for (const Tensor& t : scaler.update(finite)) out.push_back(t);
    tc::realize_all(out);
    return std::vector<Tensor>{};
  });
  std::vector<double> hw = {0.5, -1.0, 2.0}, buf = {0, 0, 0};
  double scale = 8, tracker = 0;
  const double inf = std::numeric_limits<double>::infinity();
  for (int s = 0; s < 12; s++) {
    bool bad = s == 2 || s == 7;
    std::vector<double> k = {0.25 * s, bad ? inf : -1.0, 1.5};
    step({Tensor(std::vector<float>(k.begin(), k.end()), tc::Shape{3}).realize()});
    if (bad) {
      scale *= 0.5, tracker = 0;
    } else {
      for (int i = 0; i < 3; i++) buf[i] = momentum * buf[i] + k[i], hw[i] -= lr * buf[i];
      if (++tracker == 3) scale *= 2, tracker = 0;
    }
    SCOPED_TRACE("step " + std::to_string(s));
    EXPECT_EQ(scaler.current_scale().item<float>(), scale);
    EXPECT_EQ(scaler.state_dict().at("growth_tracker").item<float>(), tracker);
    std::vector<float> got = w.data<float>();
    for (int i = 0; i < 3; i++) EXPECT_NEAR(got[i], hw[i], 1e-5);
  }
}

TEST(GradScaler, BadUseThrows) {
  EXPECT_THAT(error_message([] { GradScaler({.init_scale = 0}); }), HasSubstr("init_scale"));
  EXPECT_THAT(error_message([] { GradScaler({.growth_factor = 1}); }), HasSubstr("growth_factor"));
  EXPECT_THAT(error_message([] { GradScaler({.backoff_factor = 1}); }),
              HasSubstr("backoff_factor"));
  EXPECT_THAT(error_message([] { GradScaler({.growth_interval = 0}); }),
              HasSubstr("growth_interval"));
  Tensor w = param({1.0f, 2.0f});
  tc::nn::SGD opt({w}, {.lr = 0.1});
  GradScaler scaler;
  EXPECT_THAT(error_message([&] { scaler.unscale(opt.params()); }), HasSubstr("no gradient"));
  (w * w).sum().backward();
  EXPECT_THAT(error_message([&] { opt.schedule_step(Tensor::ones({})); }),
              HasSubstr("0-d bool tensor"));
}

}  // namespace
