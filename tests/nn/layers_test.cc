// Layers against PyTorch (tests/fixtures/gen_layers.py, checked by tests/nn/module_check.h):
// names, outputs, gradients and BatchNorm's running statistics after a training step. Plus shape
// errors and the initialisations' ranges.
#include "nn/layers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "tests/nn/module_check.h"
#include "tinycore/error.h"

namespace {

using tc::Tensor;
using ::testing::HasSubstr;

void check(const std::string& name, tc::nn::Module& m, bool train, bool grad_x = true,
           double tol = 1e-5) {
  tcfix::check_module("layers", name, m, {.train = train, .grad_x = grad_x, .tol = tol, .run = {}});
}

TEST(Layers, Linear) {
  tc::nn::Linear a(5, 3);
  check("linear", a, true);
  tc::nn::Linear b(4, 2, false);
  check("linear_nobias_3d", b, true);
}

TEST(Layers, Conv) {
  tc::nn::Conv2d a(3, 4, 3, {.stride = 2, .padding = 1});
  check("conv2d", a, true, true, 1e-4);
  tc::nn::Conv2d b(4, 6, {3, 2}, {.dilation = {1, 2}, .groups = 2, .bias = false});
  check("conv2d_groups", b, true, true, 1e-4);
  std::unique_ptr<tc::nn::Conv2d> c = tc::nn::Conv1d(2, 3, 3);
  check("conv1d", *c, true, true, 1e-4);
}

TEST(Layers, ConvTranspose) {
  tc::nn::ConvTranspose2d a(3, 4, 3, {.stride = 2, .padding = 1, .output_padding = 1});
  check("conv_transpose2d", a, true, true, 1e-4);
  tc::nn::ConvTranspose2d b(4, 6, {3, 2},
                            {.stride = {1, 2}, .dilation = {2, 1}, .groups = 2, .bias = false});
  check("conv_transpose2d_groups", b, true, true, 1e-4);
  EXPECT_EQ(b.weight.shape(), (tc::Shape{4, 3, 3, 2}));  // (in, out / groups, *kernel)
  EXPECT_THAT([] { tc::nn::ConvTranspose2d(4, 3, 3, {.groups = 2}); },
              ::testing::ThrowsMessage<tc::Error>(HasSubstr(
                  "ConvTranspose2d: 4 in and 3 out channels do not split into 2 groups")));
  EXPECT_THAT(
      [&] {
        a(Tensor::ones({1, 2, 3, 3}));
      },
      ::testing::ThrowsMessage<tc::Error>(HasSubstr(
          "ConvTranspose2d: input of shape (1, 2, 3, 3) does not have 3 channels on axis 1")));
}

TEST(Layers, BatchNorm) {
  tc::nn::BatchNorm a(3);
  check("batchnorm_train", a, true, true, 1e-4);
  tc::nn::BatchNorm b(3);
  check("batchnorm_eval", b, false, true, 1e-4);
  tc::nn::BatchNorm c(4);
  check("batchnorm1d_train", c, true, true, 1e-4);
}

TEST(Layers, LayerNormAndEmbedding) {
  tc::nn::LayerNorm a({4});
  check("layernorm", a, true);
  tc::nn::LayerNorm b({3, 4});
  check("layernorm_2d", b, true);
  tc::nn::Embedding e(10, 4);
  check("embedding", e, true, /*grad_x=*/false);
}

TEST(Layers, SequentialNamesLikePyTorch) {
  tc::nn::Sequential s;
  s.add<tc::nn::Linear>(4, 8);
  s.add([](const Tensor& x) { return x.relu(); });
  s.add<tc::nn::Linear>(8, 2);
  tc::nn::StateDict names = s.state_dict();
  std::vector<std::string> keys;
  for (const auto& [k, v] : names) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"0.bias", "0.weight", "2.bias", "2.weight"}));
  EXPECT_EQ(s.parameters().size(), 4u);
  check("sequential", s, true);
}

TEST(Layers, InitialisationsAndErrors) {
  Tensor::manual_seed(3);
  tc::nn::Linear l(100, 50);
  double bound = std::sqrt(6.0 / (1 + 5.0) / 100);  // kaiming_uniform, a = sqrt 5
  for (float w : l.weight.data<float>()) ASSERT_LE(std::abs(w), bound + 1e-6);
  for (float b : l.bias->data<float>()) ASSERT_LE(std::abs(b), 0.1 + 1e-6);
  tc::nn::BatchNorm bn(3);
  EXPECT_THAT(
      [&] {
        bn(Tensor::ones({2, 4, 5, 5}));
      },
      ::testing::ThrowsMessage<tc::Error>(HasSubstr("does not have 3 channels")));
  tc::nn::LayerNorm ln({4});
  EXPECT_THAT(
      [&] {
        ln(Tensor::ones({2, 5}));
      },
      ::testing::ThrowsMessage<tc::Error>(HasSubstr("does not end in (4,)")));
  tc::nn::Embedding e(5, 2);
  EXPECT_THAT([&] { e(Tensor::ones({2})); },
              ::testing::ThrowsMessage<tc::Error>(HasSubstr("indices must be integers")));
  EXPECT_THAT([] { tc::nn::Conv2d(3, 4, 3, {.groups = 2}); },
              ::testing::ThrowsMessage<tc::Error>(HasSubstr("do not split into 2 groups")));
}

// tinygrad's nn tests crashed here: a lookup with no indices, after one with some, ran a
// zero-size kernel (issue 38). The result is empty, and the layer still works after it.
TEST(Layers, EmbeddingOfNoIndicesIsEmpty) {
  tc::nn::Embedding e(28, 20);
  std::vector<int32_t> ids = {0, 27, 3, 3};
  Tensor some = e(Tensor::from_vector<int32_t>(ids).reshape({2, 2}));
  EXPECT_EQ(some.shape(), (tc::Shape{2, 2, 20}));
  Tensor none = e(Tensor::from_vector<int32_t>({}).reshape({4, 0}));  // a buffer of none
  EXPECT_EQ(none.shape(), (tc::Shape{4, 0, 20}));
  EXPECT_TRUE(none.data<float>().empty());
  std::vector<float> w = e.weight.data<float>(),
                     got = e(Tensor::from_vector<int32_t>(ids)).data<float>();
  for (size_t i = 0; i < ids.size(); i++)
    for (int c = 0; c < 20; c++) EXPECT_EQ(got[i * 20 + c], w[ids[i] * 20 + c]) << i << "," << c;
}

}  // namespace
