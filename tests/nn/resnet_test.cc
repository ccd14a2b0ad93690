// ResNets against torchvision: the state-dict names, shapes and parameter counts of resnet18 and
// resnet50, and a CIFAR-style ResNet-8 forward (training and eval mode) against PyTorch with the
// same weights (tests/fixtures/gen_resnet.py).
#include "nn/resnet.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/tensor/fixture.h"

namespace {

using tc::Tensor;
using tc::nn::ResNet;

void expect_torchvision_names(const ResNet& model, const std::string& case_name) {
  const tcfix::Case& c = tcfix::fixture("resnet", case_name);
  std::map<std::string, tc::Shape> want;
  for (const auto& [label, t] : c.tensors) {
    if (label.rfind("shape:", 0) != 0) continue;
    tc::Shape shape;
    for (double d : t.values) shape.push_back(static_cast<int64_t>(d));
    want[label.substr(6)] = shape;
  }
  std::map<std::string, tc::Shape> got;
  for (const auto& [name, t] : model.state_dict()) got[name] = t.shape();
  EXPECT_EQ(got, want);
  int64_t params = 0;
  for (const Tensor& p : model.parameters()) params += p.numel();
  EXPECT_EQ(params, static_cast<int64_t>(c.scalar("params")));
}

TEST(ResNet, Resnet18HasTorchvisionNamesAndShapes) {
  ResNet model({.depth = 18, .cifar = false, .in_channels = 3, .classes = 1000, .width = 16});
  expect_torchvision_names(model, "resnet18_names");
}

TEST(ResNet, Resnet50HasTorchvisionNamesAndShapes) {
  ResNet model({.depth = 50, .cifar = false, .in_channels = 3, .classes = 1000, .width = 16});
  expect_torchvision_names(model, "resnet50_names");
}

TEST(ResNet, CifarResnet8MatchesPyTorch) {
  const tcfix::Case& c = tcfix::fixture("resnet", "resnet8_forward");
  ResNet model({.depth = 8, .cifar = true, .in_channels = 1, .classes = 10, .width = 4});
  tc::nn::StateDict loaded;
  for (const auto& [label, t] : c.tensors)
    if (label.rfind("p:", 0) == 0) loaded.emplace(label.substr(2), t.tensor());
  tc::nn::StateDict mine = model.state_dict();
  tc::nn::load_state_dict(mine, loaded);  // strict: every name and shape as torchvision's blocks
  Tensor x = c["x"].tensor();
  tcfix::expect_matches(model(x), c["out_eval"], 1e-4, 1e-5);
  {
    Tensor::Train train;
    tcfix::expect_matches(model(x), c["out_train"], 1e-4, 1e-5);
  }
}

TEST(ResNet, ImagenetStyleRunsOnSmallOneChannelImages) {
  ResNet model({.depth = 18, .cifar = false, .in_channels = 1, .classes = 10, .width = 16});
  Tensor y = model(Tensor::ones({2, 1, 32, 32}));
  EXPECT_EQ(y.shape(), (tc::Shape{2, 10}));
}

TEST(ResNet, BadDepthsNameTheStyle) {
  auto message = [](tc::nn::ResNetOpts o) {
    try {
      ResNet m(o);
    } catch (const tc::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({.depth = 9, .cifar = true, .in_channels = 1, .classes = 10, .width = 16}),
            "ResNet: a cifar-style depth is 6n+2 (8, 20, 32, 44, 56, 110), got 9");
  EXPECT_EQ(message({.depth = 20, .cifar = false, .in_channels = 3, .classes = 10, .width = 16}),
            "ResNet: an imagenet-style depth is 18, 34 or 50, got 20");
}

}  // namespace
