// Whole models through the ONNX importer against PyTorch: tests/fixtures/gen_onnx_models.py
// exported a narrowed torchvision ResNet, a MobileNetV2, a TransformerEncoderLayer and a text
// classifier (int64 tokens, dynamic batch and sequence axes) to tests/fixtures/onnx/ and saved
// PyTorch's outputs in onnx_models.fixture; each must match within 1e-4 (abs + rel, as
// numpy.allclose).
#include <gtest/gtest.h>

#include <string>

#include "frontends/onnx/runner.h"
#include "tests/tensor/fixture.h"
#include "tinycore/jit/jit.h"

namespace tc::onnx {
namespace {

constexpr double kTol = 1e-4;

std::string model_path(const std::string& name) {
  return std::string(TC_FIXTURE_DIR) + "/onnx/" + name + ".onnx";
}

// The model `name` on case `case_name`'s input `input`, against PyTorch's output "out".
void expect_model_matches(const std::string& name, const std::string& case_name,
                          const std::string& input) {
  const tcfix::Case& c = tcfix::fixture("onnx_models", case_name);
  OnnxRunner runner(model_path(name));
  ASSERT_EQ(runner.input_names(), std::vector<std::string>{input});
  ASSERT_EQ(runner.output_names(), std::vector<std::string>{"out"});
  std::map<std::string, Tensor> outs = runner({{input, c[input].tensor()}});
  ASSERT_EQ(outs.size(), 1u);
  tcfix::expect_matches(outs.at("out"), c["out"], kTol, kTol);
}

TEST(OnnxModels, TorchvisionResNet) { expect_model_matches("resnet_narrow", "resnet_narrow", "x"); }

TEST(OnnxModels, TorchvisionMobileNetV2) {
  expect_model_matches("mobilenet_v2", "mobilenet_v2", "x");
}

TEST(OnnxModels, TransformerEncoderLayer) {
  expect_model_matches("transformer", "transformer", "x");
}

// Under TinyJit (tinygrad's way to serve a model): the transformer computes its heads' shapes
// from Shape nodes and reads them on the host, which a capture allows for constants only. Its
// replays match plain runs on new inputs of the capture's shape, and PyTorch on the fixture's.
TEST(OnnxModels, TransformerReplaysUnderTinyJit) {
  const tcfix::Case& c = tcfix::fixture("onnx_models", "transformer");
  OnnxRunner runner(model_path("transformer"));
  TinyJit step([&](const std::vector<Tensor>& x) {
    return std::vector<Tensor>{runner({{"x", x[0]}}).at("out")};
  });
  Tensor x = c["x"].tensor();
  for (int call = 0; call < 4; call++) {
    Tensor input = x.mul(1.0 + 0.25 * call).contiguous().realize();
    std::vector<float> want = runner({{"x", input}}).at("out").data<float>();
    std::vector<float> got = step({input})[0].data<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], kTol) << call << " " << i;
  }
  EXPECT_TRUE(step.captured());
  tcfix::expect_matches(step({x.contiguous().realize()})[0], c["out"], kTol, kTol);
}

// One model, exported once, on token batches of three shapes (its batch and sequence axes are
// dynamic).
TEST(OnnxModels, TextClassifierOnEveryBatchAndLength) {
  for (const char* c : {"text_classifier_2x7", "text_classifier_3x4", "text_classifier_1x1"}) {
    SCOPED_TRACE(c);
    expect_model_matches("text_classifier", c, "tokens");
  }
}

}  // namespace
}  // namespace tc::onnx
