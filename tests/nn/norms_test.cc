// RMSNorm, GroupNorm and InstanceNorm against PyTorch (tests/fixtures/gen_layers.py; RMSNorm
// against the formula of PyTorch 2.4's nn.RMSNorm, which torch 1.13 lacks): outputs, gradients
// of the input and parameters, running statistics; plus their shape errors.
#include "nn/norms.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/nn/module_check.h"
#include "tinycore/error.h"

namespace {

using tc::Tensor;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

void check(const std::string& name, tc::nn::Module& m, bool train = true) {
  tcfix::check_module("layers", name, m, {.train = train, .grad_x = true, .tol = 1e-4, .run = {}});
}

TEST(Norms, RMSNorm) {
  tc::nn::RMSNorm a({4});
  check("rmsnorm", a);
  tc::nn::RMSNorm b({3, 4}, 1e-3);
  check("rmsnorm_2d", b);
  tc::nn::RMSNorm plain({2}, 0.0, /*elementwise_affine=*/false);
  EXPECT_TRUE(plain.state_dict().empty());
  // rms of (3, 4) is sqrt(12.5)
  std::vector<float> y = plain(Tensor({3.0f, 4.0f}, tc::Shape{1, 2})).data<float>();
  EXPECT_NEAR(y[0], 3 / std::sqrt(12.5), 1e-6);
  EXPECT_NEAR(y[1], 4 / std::sqrt(12.5), 1e-6);
  EXPECT_THAT(
      [&] {
        a(Tensor::ones({2, 5}));
      },
      ThrowsMessage<tc::Error>(HasSubstr("RMSNorm: input of shape (2, 5) does not end in (4,)")));
}

TEST(Norms, GroupNorm) {
  tc::nn::GroupNorm a(2, 6);
  check("groupnorm", a);
  tc::nn::GroupNorm b(3, 3, 1e-3, /*affine=*/false);
  check("groupnorm_noaffine", b);
  EXPECT_THAT(
      [] { tc::nn::GroupNorm(4, 6); },
      ThrowsMessage<tc::Error>(HasSubstr("GroupNorm: 6 channels do not split into 4 groups")));
  EXPECT_THAT(
      [&] {
        a(Tensor::ones({2, 4, 3}));
      },
      ThrowsMessage<tc::Error>(
          HasSubstr("GroupNorm: input of shape (2, 4, 3) does not have 6 channels on axis 1")));
}

TEST(Norms, InstanceNorm) {
  tc::nn::InstanceNorm a(3);  // PyTorch's defaults: no parameters, no running statistics
  EXPECT_TRUE(a.state_dict().empty());
  check("instancenorm", a);
  tc::nn::InstanceNorm b(3, {.affine = true, .track_running_stats = true});
  std::vector<std::string> names;
  for (const auto& [k, v] : b.state_dict()) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{"bias", "num_batches_tracked", "running_mean",
                                             "running_var", "weight"}));
  check("instancenorm_affine_track", b);  // updates the running statistics
  tc::nn::InstanceNorm c(2, {.affine = true, .track_running_stats = true});
  check("instancenorm_track_eval", c, /*train=*/false);  // normalizes with them
  EXPECT_THAT(
      [&] {
        a(Tensor::ones({2, 3}));
      },
      ThrowsMessage<tc::Error>(
          HasSubstr("InstanceNorm: input of shape (2, 3) is not (batch, channels, *spatial)")));
  EXPECT_THAT(
      [&] {
        a(Tensor::ones({2, 4, 5}));
      },
      ThrowsMessage<tc::Error>(HasSubstr("does not have 3 channels on axis 1")));
}

}  // namespace
