// Host functions in the graph (Ops::CUSTOM): scheduled as kernels of their own over realized
// sources, fused around, differentiated by their registered gradient, replayed by TinyJit.
#include "tinycore/runtime/host_function.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "tests/error_message.h"
#include "tinycore/jit/jit.h"
#include "tinycore/tensor.h"

namespace tc::runtime {
namespace {

using ::testing::HasSubstr;

int runs = 0;  // how many times the functions below ran

// out[i] = 2 * src[i] + the number of runs so far: a value only a real run gives
void register_test_functions() {
  register_host_function("test.double_plus_runs", {[](const HostCall& c) {
                                                     auto* out = static_cast<float*>(c.bufs[0]);
                                                     auto* in =
                                                         static_cast<const float*>(c.bufs[1]);
                                                     for (int64_t i = 0; i < c.numel; i++)
                                                       out[i] = 2 * in[i] + runs;
                                                     runs++;
                                                   },
                                                   "test.double"});
  register_host_function("test.double", {[](const HostCall& c) {
                                           auto* out = static_cast<float*>(c.bufs[0]);
                                           auto* in = static_cast<const float*>(c.bufs[1]);
                                           for (int64_t i = 0; i < c.numel; i++) out[i] = 2 * in[i];
                                           runs++;
                                         },
                                         "test.double"});
  register_host_function("test.product", {[](const HostCall& c) {
                                            auto* out = static_cast<float*>(c.bufs[0]);
                                            auto* a = static_cast<const float*>(c.bufs[1]);
                                            auto* b = static_cast<const float*>(c.bufs[2]);
                                            for (int64_t i = 0; i < c.numel; i++)
                                              out[i] = a[i] * b[i];
                                          },
                                          ""});
}

Tensor call(const std::string& name, const std::vector<Tensor>& sources) {
  std::vector<UOpRef> src;
  for (const Tensor& s : sources) src.push_back(s.uop());
  return Tensor(UOp::make(Ops::CUSTOM, sources[0].dtype(), src, name));
}

class HostFunction : public ::testing::Test {
 protected:
  void SetUp() override {
    register_test_functions();
    runs = 0;
  }
};

TEST_F(HostFunction, RunsOverRealizedSourcesAndFusesWithWhatFollows) {
  Tensor x = Tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  // the source is a permuted expression: realized contiguous before the call
  Tensor y = call("test.double", {(x * 3).permute({1, 0})}) + 1;
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.data<float>(), (std::vector<float>{7, 25, 13, 31, 19, 37}));
  EXPECT_EQ(runs, 1);
  y.data<float>();  // realized once
  EXPECT_EQ(runs, 1);
  Tensor z = call("test.product", {x, x + 1}).sum();
  EXPECT_FLOAT_EQ(z.item<float>(), 1 * 2 + 2 * 3 + 3 * 4 + 4 * 5 + 5 * 6 + 6 * 7);
}

TEST_F(HostFunction, GradientIsTheRegisteredFunctionOfTheOutputsGradient) {
  Tensor x = Tensor(std::vector<float>{1, -2, 3}, Shape{3}).requires_grad_();
  (call("test.double", {x * x}) * Tensor(std::vector<float>{1, 10, 100}, Shape{3}))
      .sum()
      .backward();
  // d/dx of sum(w * 2x^2) = 4 w x
  EXPECT_EQ(x.grad()->data<float>(), (std::vector<float>{4, -80, 1200}));
  Tensor a = Tensor(std::vector<float>{1, 2}, Shape{2}).requires_grad_();
  EXPECT_THAT(error_message([&] {
                call("test.product", {a, a}).sum().backward();
              }),
              HasSubstr("host function 'test.product' has no gradient"));
}

TEST_F(HostFunction, TinyJitReplaysItInOrderEveryCall) {
  TinyJit step([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{(call("test.double_plus_runs", {in[0] + 1}) * 10).sum()};
  });
  for (int i = 0; i < 5; i++) {
    Tensor x = Tensor(std::vector<float>{static_cast<float>(i), 1}, Shape{2});
    // the call's run number is `i`: one run per call, replays included
    float want = 10 * ((2 * (i + 1) + i) + (2 * 2 + i));
    EXPECT_FLOAT_EQ(step({x})[0].item<float>(), want) << "call " << i;
  }
  EXPECT_EQ(runs, 5);
  EXPECT_TRUE(step.captured());
}

TEST_F(HostFunction, BadCallsAreErrorsNamingTheFunction) {
  Tensor x = Tensor::ones({2, 3}), y = Tensor::ones({4});
  EXPECT_THAT(error_message([&] { call("test.nothing", {x}).realize(); }),
              HasSubstr("no host function named 'test.nothing'"));
  EXPECT_THAT(error_message([&] {
                call("test.product", {x, y}).realize();
              }),
              HasSubstr("host function 'test.product': its sources differ in size or dtype "
                        "(float (2, 3) and float (4,))"));
}

}  // namespace
}  // namespace tc::runtime
