// Optimizers step for step against PyTorch (tests/fixtures/gen_optim.py): the same start, the
// same quadratic loss, three steps, every parameter compared after each. Then the pieces around
// them: lr changes in place, gradient clipping against a host computation, errors, and a step
// under TinyJit matching the plain step.
#include "nn/optim.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>

#include "nn/layers.h"
#include "tests/tensor/fixture.h"
#include "tinycore/error.h"
#include "tinycore/jit/jit.h"

namespace {

using tc::Tensor;
using ::testing::HasSubstr;
using MakeOpt = std::function<std::unique_ptr<tc::nn::Optimizer>(std::vector<Tensor>)>;

Tensor loss_of(const tcfix::Case& c, const Tensor& w, const Tensor& b) {
  return (c["cw2"].tensor() * w * w + c["cw1"].tensor() * w).sum() +
         (c["cb2"].tensor() * b * b + c["cb1"].tensor() * b).sum();
}

void check_against_torch(const std::string& name, const MakeOpt& make, double tol) {
  SCOPED_TRACE(name);
  const tcfix::Case& c = tcfix::fixture("optim", name);
  Tensor w = c["w"].tensor().contiguous().realize(), b = c["b"].tensor().contiguous().realize();
  std::unique_ptr<tc::nn::Optimizer> opt = make({w, b});
  for (int s = 0; s < 3; s++) {
    opt->zero_grad();
    loss_of(c, w, b).backward();
    opt->step();
    tcfix::expect_matches(w, c["w" + std::to_string(s)], tol, tol);
    tcfix::expect_matches(b, c["b" + std::to_string(s)], tol, tol);
  }
}

template <typename Opt, typename Opts>
MakeOpt make(Opts o) {
  return [o](std::vector<Tensor> p) { return std::make_unique<Opt>(std::move(p), o); };
}

TEST(Optim, SGD) {
  check_against_torch("sgd", make<tc::nn::SGD>(tc::nn::SGDOpts{.lr = 0.1}), 1e-5);
  check_against_torch("sgd_momentum",
                      make<tc::nn::SGD>(tc::nn::SGDOpts{.lr = 0.1, .momentum = 0.9}), 1e-5);
  check_against_torch(
      "sgd_nesterov_wd",
      make<tc::nn::SGD>(tc::nn::SGDOpts{
          .lr = 0.05, .momentum = 0.8, .weight_decay = 0.1, .nesterov = true, .classic = false}),
      1e-5);
}

TEST(Optim, AdamAndAdamW) {
  check_against_torch("adam", make<tc::nn::Adam>(tc::nn::AdamOpts{.lr = 0.01}), 1e-5);
  check_against_torch(
      "adamw", make<tc::nn::AdamW>(tc::nn::AdamWOpts{.lr = 0.01, .weight_decay = 0.1}), 1e-5);
}

TEST(Optim, LAMBAndMuon) {
  check_against_torch("lamb",
                      make<tc::nn::LAMB>(tc::nn::LAMBOpts{
                          .lr = 0.01, .b1 = 0.9, .b2 = 0.999, .eps = 1e-6, .weight_decay = 0.05}),
                      1e-5);
  check_against_torch(
      "muon", make<tc::nn::Muon>(tc::nn::MuonOpts{.lr = 0.02, .momentum = 0.95, .nesterov = true}),
      1e-4);
}

TEST(Optim, SetLrChangesTheNextStepInPlace) {
  Tensor w = Tensor(std::vector<float>{1, 2}, tc::Shape{2}).realize();
  tc::nn::SGD opt({w}, {.lr = 0.5});
  const void* lr_buffer = opt.lr().uop()->src.empty() ? opt.lr().uop().get() : nullptr;
  (w * w).sum().backward();  // grad 2w
  opt.step();
  EXPECT_EQ(w.data<float>(), (std::vector<float>{0, 0}));
  opt.set_lr(0.25);
  EXPECT_EQ(opt.lr().uop().get(), lr_buffer);  // the same buffer, rewritten
  opt.zero_grad();
  Tensor v = Tensor(std::vector<float>{4, 8}, tc::Shape{2}).realize();
  w.assign(v).realize();
  (w * w).sum().backward();
  opt.step();
  EXPECT_EQ(w.data<float>(), (std::vector<float>{2, 4}));
}

TEST(Optim, ClipGradNormScalesToTheMaximum) {
  Tensor a = Tensor(std::vector<float>{3, 0}, tc::Shape{2}).realize();
  Tensor b = Tensor(std::vector<float>{0, 0, 4}, tc::Shape{3}).realize();
  a.requires_grad_(), b.requires_grad_();
  ((a * a).sum() * 0.5f + (b * b).sum() * 0.5f).backward();  // grads = the values: norm 5
  Tensor norm = tc::nn::clip_grad_norm({a, b}, 1.0);
  EXPECT_NEAR(norm.item<float>(), 5.0f, 1e-5);
  std::vector<float> ga = a.grad()->data<float>(), gb = b.grad()->data<float>();
  EXPECT_NEAR(ga[0], 3.0 / (5 + 1e-6), 1e-6);
  EXPECT_NEAR(gb[2], 4.0 / (5 + 1e-6), 1e-6);
  // under the maximum: unchanged
  Tensor n2 = tc::nn::clip_grad_norm({a, b}, 10.0);
  EXPECT_NEAR(n2.item<float>(), 1.0f, 1e-5);
  EXPECT_NEAR(a.grad()->data<float>()[0], 0.6f, 1e-5);
}

TEST(Optim, LayersBuiltAlikeAreTrainedEachByItsOwnGradient) {
  // Two LayerNorms start with equal biases (zeros). Each must be a tensor of its own, not one
  // interned graph shared by both (whose gradients autograd would add up), so each gets its own
  // gradient and update; and a handle given twice is still one parameter.
  tc::nn::LayerNorm a(tc::Shape{2}), b(tc::Shape{2});
  EXPECT_NE(a.bias->uop(), b.bias->uop());
  tc::nn::SGD opt({*a.bias, *b.bias, *a.bias}, {.lr = 0.5});
  EXPECT_EQ(opt.params().size(), 2u);
  Tensor x = Tensor(std::vector<float>{1, 3}, tc::Shape{2});
  (a(x).sum() * 2.0f + b(x).sum() * 3.0f).backward();  // d/d bias: 2 for a, 3 for b
  opt.step();
  EXPECT_EQ(a.bias->data<float>(), (std::vector<float>{-1, -1}));
  EXPECT_EQ(b.bias->data<float>(), (std::vector<float>{-1.5, -1.5}));
}

TEST(Optim, Errors) {
  Tensor w = Tensor(std::vector<float>{1, 2}, tc::Shape{2}).realize();
  tc::nn::Adam opt({w});
  EXPECT_THAT([&] { opt.step(); }, ::testing::ThrowsMessage<tc::Error>(
                                       HasSubstr("parameter 0 (shape (2,)) has no gradient")));
  EXPECT_THAT([] { tc::nn::SGD({}); },
              ::testing::ThrowsMessage<tc::Error>(HasSubstr("no parameters")));
  Tensor i = Tensor::from_vector<int>({1, 2}).realize();
  EXPECT_THAT([&] { tc::nn::SGD({i}); },
              ::testing::ThrowsMessage<tc::Error>(HasSubstr("parameters must be float")));
  EXPECT_THAT(
      [] {
        tc::nn::newton_schulz(Tensor::ones({3}), 5, {1, 1, 1});
      },
      ::testing::ThrowsMessage<tc::Error>(HasSubstr("needs a 2-D tensor")));
}

TEST(Optim, AdamStepUnderTheJitMatchesThePlainStep) {
  auto run = [](bool jit) {
    Tensor w = Tensor(std::vector<float>{0.5f, -1.0f, 2.0f}, tc::Shape{3}).realize();
    tc::nn::Adam opt({w}, {.lr = 0.1});
    tc::TinyJit step([&](const std::vector<Tensor>& in) {
      opt.zero_grad();
      Tensor loss = ((w - in[0]) * (w - in[0])).sum();
      loss.backward();
      std::vector<Tensor> to_realize = opt.schedule_step();
      to_realize.push_back(loss);
      tc::realize_all(to_realize);
      return std::vector<Tensor>{loss};
    });
    std::vector<float> trace;
    for (int s = 0; s < 5; s++) {
      Tensor target =
          Tensor(std::vector<float>{1.0f * s, 0.5f, -0.25f * s}, tc::Shape{3}).realize();
      trace.push_back(jit ? step({target})[0].item<float>() : [&] {
        opt.zero_grad();
        Tensor loss = ((w - target) * (w - target)).sum();
        loss.backward();
        std::vector<Tensor> to_realize = opt.schedule_step();
        to_realize.push_back(loss);
        tc::realize_all(to_realize);
        return loss.item<float>();
      }());
      for (float v : w.data<float>()) trace.push_back(v);
    }
    return trace;
  };
  std::vector<float> plain = run(false), jitted = run(true);
  ASSERT_EQ(plain.size(), jitted.size());
  for (size_t i = 0; i < plain.size(); i++) EXPECT_EQ(plain[i], jitted[i]) << "value " << i;
}

}  // namespace
