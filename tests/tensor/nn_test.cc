// nn ops and losses (tensor/nn.cc) against PyTorch fixtures (tests/fixtures/gen_nn.py: values and
// gradients in float64), naive double loops, and finite differences (tcgrad::check_grad).
// Tolerances: float64 values rtol 1e-10 / atol 1e-12; float64 gradients 1e-9; float32 values
// rtol 1e-5 / atol 1e-6 (a few float32 roundings in a short chain); finite differences 1e-6.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/tensor/fixture.h"
#include "tests/tensor/gradcheck.h"
#include "tests/tensor/reference.h"
#include "tinycore/tensor.h"

namespace {

using tc::Tensor;
using ::testing::HasSubstr;
namespace dt = tc::dtypes;

constexpr double kRtol64 = 1e-10, kAtol64 = 1e-12, kGrad64 = 1e-9;
constexpr double kRtol32 = 1e-5, kAtol32 = 1e-6;

const tcfix::Case& fx(const std::string& name) { return tcfix::fixture("nn", name); }

// The gradients of (out * w).sum() (the fixture's way of making a scalar) w.r.t. `xs`.
std::vector<Tensor> grads(const Tensor& out, const tcfix::Case& c, const std::vector<Tensor>& xs) {
  return out.mul(c["w"].tensor()).sum().gradient(xs);
}

// `f` throws tc::Error whose message contains every one of `parts`.
template <typename F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected a tc::Error containing \"" << parts[0] << "\"";
  } catch (const tc::Error& e) {
    for (const std::string& p : parts) EXPECT_THAT(e.what(), HasSubstr(p));
  }
}

// ---------------------------------------------------------------- layernorm

TEST(LayerNorm, LastAxisMatchesTorchWithGradient) {
  const tcfix::Case& c = fx("layernorm_last");
  Tensor x = c["x"].tensor();
  Tensor y = x.layernorm();
  tcfix::expect_matches(y, c["out"], kRtol64, kAtol64);
  tcfix::expect_matches(grads(y, c, {x})[0], c["grad_x"], kGrad64, kGrad64);
  // float32 keeps its dtype
  Tensor y32 = c["x"].tensor(dt::float32).layernorm(-1, 1e-5);
  EXPECT_EQ(y32.dtype(), dt::float32);
  tcfix::expect_matches(y32, c["out"], kRtol32, kAtol32);
}

TEST(LayerNorm, MiddleAxisOnNonContiguousInput) {
  const tcfix::Case& c = fx("layernorm_axis1");
  // the same logical x, held transposed in memory
  Tensor x =
      tcref::tensor(tcref::permute(c["x"].array(), {2, 1, 0}), dt::float64).permute({2, 1, 0});
  Tensor y = x.layernorm(1, c.scalar("eps"));
  tcfix::expect_matches(y, c["out"], kRtol64, kAtol64);
  tcfix::expect_matches(grads(y, c, {x})[0], c["grad_x"], kGrad64, kGrad64);
}

TEST(LayerNorm, SeveralAxesNegativeOrNot) {
  const tcfix::Case& c = fx("layernorm_12");
  tcfix::expect_matches(c["x"].tensor().layernorm({1, 2}), c["out"], kRtol64, kAtol64);
  tcfix::expect_matches(c["x"].tensor().layernorm({-1, -2}), c["out"], kRtol64, kAtol64);
}

TEST(LayerNorm, GradientMatchesFiniteDifferences) {
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) { return x.layernorm(-1, 1e-3); }),
                     {{{2, 3}, tcgrad::mixed(6)}}, 1e-6);
}

TEST(LayerNorm, Errors) {
  Tensor x = Tensor::ones({2, 3});
  expect_error([&] { x.layernorm(2); }, {"layernorm", "dim 2", "[-2, 1]", "(2, 3)"});
  expect_error([&] { Tensor::ones({2, 3}, dt::int32).layernorm(); }, {"layernorm", "got int"});
}

// ---------------------------------------------------------------- batchnorm

TEST(BatchNorm, MatchesTorchWithGradients) {
  const tcfix::Case& c = fx("batchnorm");
  Tensor x = c["x"].tensor(), w = c["weight"].tensor(), b = c["bias"].tensor();
  Tensor y = x.batchnorm(w, b, c["mean"].tensor(), c["invstd"].tensor());
  tcfix::expect_matches(y, c["out"], kRtol64, kAtol64);
  std::vector<Tensor> g = grads(y, c, {x, w, b});
  tcfix::expect_matches(g[0], c["grad_x"], kGrad64, kGrad64);
  tcfix::expect_matches(g[1], c["grad_weight"], kGrad64, kGrad64);
  tcfix::expect_matches(g[2], c["grad_bias"], kGrad64, kGrad64);
  // float32
  Tensor y32 = c["x"]
                   .tensor(dt::float32)
                   .batchnorm(c["weight"].tensor(dt::float32), c["bias"].tensor(dt::float32),
                              c["mean"].tensor(dt::float32), c["invstd"].tensor(dt::float32));
  EXPECT_EQ(y32.dtype(), dt::float32);
  tcfix::expect_matches(y32, c["out"], kRtol32, kAtol32);
}

TEST(BatchNorm, SeveralAxesAndBroadcastInvstdAgainstLoops) {
  // x (2, 3, 4) normalized per (axis 0, axis 2) position; invstd a broadcasting (1, 3, 1) tensor
  tcref::NDArray x = tcref::random({2, 3, 4}, 11), mean = tcref::random({2, 4}, 12),
                 w = tcref::random({2, 4}, 13), b = tcref::random({2, 4}, 14),
                 inv = tcref::random({1, 3, 1}, 15, 0.5, 2.0);
  tcref::NDArray want = tcref::generate({2, 3, 4}, [&](int64_t i) {
    std::vector<int64_t> k = tcref::unravel(i, {2, 3, 4});
    return (x.at(k) - mean.at({k[0], k[2]})) * w.at({k[0], k[2]}) * inv.at({0, k[1], 0}) +
           b.at({k[0], k[2]});
  });
  Tensor y = tcref::tensor(x).batchnorm(tcref::tensor(w), tcref::tensor(b), tcref::tensor(mean),
                                        tcref::tensor(inv), {0, -1});
  tcref::expect_close(y, want, kRtol32, kAtol32);
  // no weight, no bias, invstd per position
  tcref::NDArray inv2 = tcref::random({3}, 16, 0.5, 2.0), mean2 = tcref::random({3}, 17);
  tcref::NDArray want2 = tcref::generate({2, 3, 4}, [&](int64_t i) {
    std::vector<int64_t> k = tcref::unravel(i, {2, 3, 4});
    return (x.at(k) - mean2.v[k[1]]) * inv2.v[k[1]];
  });
  tcref::expect_close(tcref::tensor(x).batchnorm({}, {}, tcref::tensor(mean2), tcref::tensor(inv2)),
                      want2, kRtol32, kAtol32);
}

TEST(BatchNorm, GradientMatchesFiniteDifferences) {
  tcgrad::check_grad(
      [](const std::vector<Tensor>& t) { return t[0].batchnorm(t[1], t[2], t[3], t[4]); },
      {{{2, 2, 2}, tcgrad::mixed(8)},
       {{2}, {0.7, -1.3}},
       {{2}, {0.1, 0.2}},
       {{2}, {0.3, -0.4}},
       {{2}, {1.5, 0.8}}});
}

TEST(BatchNorm, Errors) {
  Tensor x = Tensor::ones({2, 3, 4});
  expect_error([&] { x.batchnorm({}, {}, Tensor::zeros({4}), Tensor::ones({3})); },
               {"batchnorm", "mean", "(4,)", "(3,)"});
  expect_error([&] { x.batchnorm(Tensor::ones({2}), {}, Tensor::zeros({3}), Tensor::ones({3})); },
               {"batchnorm", "weight"});
  expect_error(
      [&] {
        x.batchnorm({}, {}, Tensor::zeros({3}), Tensor::ones({5, 1}));
      },
      {"batchnorm", "broadcast"});
  expect_error([&] { x.batchnorm({}, {}, Tensor::zeros({3}), Tensor::ones({3}), 3); },
               {"batchnorm", "dim 3"});
}

// ---------------------------------------------------------------- attention

TEST(Attention, MatchesTorchWithGradients) {
  const tcfix::Case& c = fx("sdpa");
  Tensor q = c["q"].tensor(), k = c["k"].tensor(), v = c["v"].tensor();
  Tensor y = q.scaled_dot_product_attention(k, v);
  tcfix::expect_matches(y, c["out"], kRtol64, kAtol64);
  std::vector<Tensor> g = grads(y, c, {q, k, v});
  tcfix::expect_matches(g[0], c["grad_q"], kGrad64, kGrad64);
  tcfix::expect_matches(g[1], c["grad_k"], kGrad64, kGrad64);
  tcfix::expect_matches(g[2], c["grad_v"], kGrad64, kGrad64);
  Tensor y32 =
      c["q"]
          .tensor(dt::float32)
          .scaled_dot_product_attention(c["k"].tensor(dt::float32), c["v"].tensor(dt::float32));
  EXPECT_EQ(y32.dtype(), dt::float32);
  tcfix::expect_matches(y32, c["out"], kRtol32, kAtol32);
}

TEST(Attention, CausalAndMasks) {
  const tcfix::Case& causal = fx("sdpa_causal");
  Tensor q = causal["q"].tensor(), k = causal["k"].tensor(), v = causal["v"].tensor();
  tcfix::expect_matches(q.scaled_dot_product_attention(k, v, {}, {.is_causal = true}),
                        causal["out"], kRtol64, kAtol64);
  const tcfix::Case& bm = fx("sdpa_bool_mask");
  tcfix::expect_matches(q.scaled_dot_product_attention(k, v, bm["mask"].tensor()), bm["out"],
                        kRtol64, kAtol64);
  const tcfix::Case& fm = fx("sdpa_float_mask");
  tcfix::expect_matches(q.scaled_dot_product_attention(k, v, fm["mask"].tensor()), fm["out"],
                        kRtol64, kAtol64);
}

TEST(Attention, GroupedQueryHeads) {
  const tcfix::Case& c = fx("sdpa_gqa");
  Tensor y = c["q"].tensor().scaled_dot_product_attention(c["k"].tensor(), c["v"].tensor(), {},
                                                          {.enable_gqa = true});
  tcfix::expect_matches(y, c["out"], kRtol64, kAtol64);
}

TEST(Attention, DropoutOnlyWhileTraining) {
  const tcfix::Case& c = fx("sdpa_causal");
  Tensor q = c["q"].tensor(), k = c["k"].tensor();
  // value = identity: the output is the (dropped-out) attention weight matrix itself
  Tensor eye = Tensor::eye(4, {}, dt::float64).reshape({1, 4, 4}).expand({2, 4, 4});
  Tensor plain = q.scaled_dot_product_attention(k, eye);
  // not training: dropout_p is ignored
  tcref::expect_close(q.scaled_dot_product_attention(k, eye, {}, {.dropout_p = 0.5}),
                      tcref::NDArray(plain.shape(), plain.data<double>()), 0, 0);
  Tensor::Train train;
  tcref::expect_close(q.scaled_dot_product_attention(k, eye, {}, {.dropout_p = 1.0}),
                      tcref::NDArray({2, 4, 4}, std::vector<double>(32, 0.0)), 0, 0);
  std::vector<double> w = plain.data<double>();
  std::vector<double> d =
      q.scaled_dot_product_attention(k, eye, {}, {.dropout_p = 0.5}).data<double>();
  int kept = 0, dropped = 0;
  for (size_t i = 0; i < w.size(); i++) {
    if (d[i] == 0) {
      dropped++;
    } else {
      kept++;
      EXPECT_NEAR(d[i], 2 * w[i], 1e-12) << "element " << i;  // kept weights scaled by 1/(1-p)
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(dropped, 0);
}

TEST(Attention, GradientMatchesFiniteDifferences) {
  tcgrad::check_grad(
      [](const std::vector<Tensor>& t) {
        return t[0].scaled_dot_product_attention(t[1], t[2], {}, {.is_causal = true});
      },
      {{{3, 2}, tcgrad::mixed(6)},
       {{3, 2}, tcgrad::ramp(6, -1.0, 0.37)},
       {{3, 2}, tcgrad::mixed(6)}},
      1e-6);
}

TEST(Attention, Errors) {
  Tensor q = Tensor::ones({2, 3, 4}), k = Tensor::ones({2, 5, 4}), v = Tensor::ones({2, 5, 3});
  expect_error(
      [&] {
        q.scaled_dot_product_attention(Tensor::ones({2, 5, 3}), v);
      },
      {"scaled_dot_product_attention", "(2, 3, 4)", "(2, 5, 3)"});
  expect_error(
      [&] {
        q.scaled_dot_product_attention(k, Tensor::ones({2, 4, 3}));
      },
      {"scaled_dot_product_attention", "(2, 4, 3)"});
  expect_error([&] { Tensor::ones({4}).scaled_dot_product_attention(k, v); },
               {"scaled_dot_product_attention", "at least 2 dimensions"});
  expect_error(
      [&] {
        q.scaled_dot_product_attention(k, v, Tensor::full({3, 5}, true, dt::bool_),
                                       {.is_causal = true});
      },
      {"scaled_dot_product_attention", "attn_mask", "is_causal"});
  expect_error(
      [&] {
        q.scaled_dot_product_attention(k, v, Tensor::ones({4, 5}));
      },
      {"scaled_dot_product_attention", "broadcast", "(4, 5)"});
  expect_error([&] { q.scaled_dot_product_attention(k, v, {}, {.dropout_p = 1.5}); },
               {"scaled_dot_product_attention", "dropout_p", "1.5"});
  expect_error(
      [&] {
        Tensor::ones({1, 3, 2, 4})
            .scaled_dot_product_attention(Tensor::ones({1, 2, 2, 4}), Tensor::ones({1, 2, 2, 4}),
                                          {}, {.enable_gqa = true});
      },
      {"enable_gqa", "3 heads", "2"});
}

// ---------------------------------------------------------------- binary cross-entropy

TEST(BinaryCrossEntropy, MatchesTorchForEveryReduction) {
  for (const char* red : {"mean", "sum", "none"}) {
    SCOPED_TRACE(red);
    const tcfix::Case& c = fx(std::string("bce_") + red);
    Tensor p = c["p"].tensor(), t = c["t"].tensor();
    Tensor y = p.binary_crossentropy(t, red);
    tcfix::expect_matches(y, c["out"], kRtol64, kAtol64);
    tcfix::expect_matches(grads(y, c, {p})[0], c["grad_p"], kGrad64, kGrad64);
  }
}

TEST(BinaryCrossEntropy, ClampsTheLogAsTorch) {
  // p = 0 or 1 exactly: PyTorch clamps log at -100, so the loss is finite (and 0 where y agrees)
  Tensor p = Tensor::from_vector<float>({0.0f, 1.0f, 0.0f, 1.0f});
  Tensor y = Tensor::from_vector<float>({0.0f, 1.0f, 1.0f, 0.0f});
  tcref::expect_close(p.binary_crossentropy(y, "none"),
                      tcref::NDArray({4}, {0.0, 0.0, 100.0, 100.0}), 1e-6, 1e-6);
}

TEST(BinaryCrossEntropyLogits, MatchesTorchIncludingLargeLogits) {
  for (const char* red : {"mean", "sum", "none"}) {
    SCOPED_TRACE(red);
    const tcfix::Case& c = fx(std::string("bce_logits_") + red);
    Tensor x = c["x"].tensor(), t = c["t"].tensor();
    Tensor y = x.binary_crossentropy_logits(t, red);
    tcfix::expect_matches(y, c["out"], kRtol64, kAtol64);
    tcfix::expect_matches(grads(y, c, {x})[0], c["grad_x"], kGrad64, kGrad64);
  }
  const tcfix::Case& c = fx("bce_logits_pos_weight");
  Tensor x = c["x"].tensor();
  Tensor y = x.binary_crossentropy_logits(c["t"].tensor(), "mean", c["pos_weight"].tensor());
  tcfix::expect_matches(y, c["out"], kRtol64, kAtol64);
  tcfix::expect_matches(y.gradient({x})[0], c["grad_x"], kGrad64, kGrad64);
  // float32 with logits of +-60: still finite and equal to torch
  Tensor y32 = c["x"]
                   .tensor(dt::float32)
                   .binary_crossentropy_logits(c["t"].tensor(dt::float32), "mean",
                                               c["pos_weight"].tensor(dt::float32));
  tcfix::expect_matches(y32, c["out"], kRtol32, kAtol32);
}

TEST(BinaryCrossEntropyLogits, GradientsMatchFiniteDifferences) {
  tcgrad::check_grad(
      [](const std::vector<Tensor>& t) {
        return t[0].binary_crossentropy_logits(t[1], "none", t[2]);
      },
      {{{2, 3}, tcgrad::mixed(6)},
       {{2, 3}, {0.0, 1.0, 0.3, 0.9, 0.5, 0.1}},
       {{3}, {0.5, 2.0, 1.5}}});
  tcgrad::check_grad(
      tcgrad::binary([](const Tensor& p, const Tensor& y) { return p.binary_crossentropy(y); }),
      {{{4}, {0.1, 0.8, 0.45, 0.3}}, {{4}, {0.0, 1.0, 0.2, 0.7}}});
}

TEST(BinaryCrossEntropy, Errors) {
  Tensor p = Tensor::full({2, 3}, 0.5);
  expect_error(
      [&] {
        p.binary_crossentropy(Tensor::ones({2, 4}));
      },
      {"binary_crossentropy", "(2, 3)", "(2, 4)"});
  expect_error(
      [&] {
        p.binary_crossentropy(Tensor::ones({2, 3}), "avg");
      },
      {"binary_crossentropy", "reduction", "avg"});
  expect_error(
      [&] {
        p.binary_crossentropy_logits(Tensor::ones({2, 3}), "mean", Tensor::ones({4}));
      },
      {"binary_crossentropy_logits", "(4,)"});
}

// ---------------------------------------------------------------- categorical losses

TEST(SparseCategoricalCrossEntropy, MatchesTorch) {
  for (const char* name : {"plain", "smooth", "ignore", "ignore_smooth", "sum", "none"}) {
    SCOPED_TRACE(name);
    const tcfix::Case& c = fx(std::string("sparse_ce_") + name);
    Tensor x = c["x"].tensor(), labels = c["y"].tensor();
    std::string red = std::string(name) == "sum"    ? "sum"
                      : std::string(name) == "none" ? "none"
                                                    : "mean";
    Tensor y = x.sparse_categorical_crossentropy(
        labels, {.ignore_index = static_cast<int64_t>(c.scalar("ignore_index")),
                 .label_smoothing = c.scalar("label_smoothing"),
                 .reduction = red});
    tcfix::expect_matches(y, c["out"], kRtol64, kAtol64);
    tcfix::expect_matches(grads(y, c, {x})[0], c["grad_x"], kGrad64, kGrad64);
  }
}

TEST(SparseCategoricalCrossEntropy, Float32NonContiguousLogitsAndInt32Labels) {
  const tcfix::Case& c = fx("sparse_ce_smooth");
  // logits stored as (4, 3, 2) and permuted back to (2, 3, 4)
  Tensor x =
      tcref::tensor(tcref::permute(c["x"].array(), {2, 1, 0}), dt::float32).permute({2, 1, 0});
  Tensor y = x.sparse_categorical_crossentropy(c["y"].tensor(dt::int32), {.label_smoothing = 0.1});
  EXPECT_EQ(y.dtype(), dt::float32);
  tcfix::expect_matches(y, c["out"], kRtol32, kAtol32);
}

TEST(SparseCategoricalCrossEntropy, GradientMatchesFiniteDifferences) {
  Tensor labels = Tensor::from_vector<int32_t>({2, 0, 1});
  tcgrad::check_grad(tcgrad::unary([labels](const Tensor& x) {
                       return x.sparse_categorical_crossentropy(
                           labels, {.ignore_index = 1, .label_smoothing = 0.2});
                     }),
                     {{{3, 3}, tcgrad::mixed(9)}});
}

TEST(CrossEntropy, ClassIndicesMatchTorch) {
  for (const char* name : {"idx", "idx_smooth", "idx_sum", "idx_none"}) {
    SCOPED_TRACE(name);
    const tcfix::Case& c = fx(std::string("ce_") + name);
    Tensor x = c["x"].tensor();
    std::string red = std::string(name) == "idx_sum"    ? "sum"
                      : std::string(name) == "idx_none" ? "none"
                                                        : "mean";
    Tensor y = x.cross_entropy(c["y"].tensor(), red, c.scalar("label_smoothing"));
    tcfix::expect_matches(y, c["out"], kRtol64, kAtol64);
    tcfix::expect_matches(grads(y, c, {x})[0], c["grad_x"], kGrad64, kGrad64);
  }
}

TEST(CrossEntropy, ProbabilitiesAndSpatialMatchTorch) {
  const tcfix::Case& p = fx("ce_probs");
  Tensor x = p["x"].tensor();
  Tensor y = x.cross_entropy(p["y"].tensor(), "mean", p.scalar("label_smoothing"));
  tcfix::expect_matches(y, p["out"], kRtol64, kAtol64);
  tcfix::expect_matches(y.gradient({x})[0], p["grad_x"], kGrad64, kGrad64);
  const tcfix::Case& s = fx("ce_spatial");
  Tensor x4 = s["x"].tensor();
  Tensor y4 = x4.cross_entropy(s["y"].tensor());
  tcfix::expect_matches(y4, s["out"], kRtol64, kAtol64);
  tcfix::expect_matches(y4.gradient({x4})[0], s["grad_x"], kGrad64, kGrad64);
}

TEST(CrossEntropy, GradientMatchesFiniteDifferences) {
  Tensor labels = Tensor::from_vector<int64_t>({1, 2});
  tcgrad::check_grad(
      tcgrad::unary([labels](const Tensor& x) { return x.cross_entropy(labels, "sum", 0.1); }),
      {{{2, 3}, tcgrad::mixed(6)}});
}

TEST(NllLoss, MatchesTorch) {
  for (const char* name : {"plain", "weight", "weight_ignore", "sum", "none"}) {
    SCOPED_TRACE(name);
    const tcfix::Case& c = fx(std::string("nll_") + name);
    Tensor x = c["x"].tensor();
    std::optional<Tensor> w;
    if (c.has("weight")) w = c["weight"].tensor();
    std::optional<int64_t> ignore;
    if (c.has("ignore_index")) ignore = static_cast<int64_t>(c.scalar("ignore_index"));
    std::string red = std::string(name) == "sum"    ? "sum"
                      : std::string(name) == "none" ? "none"
                                                    : "mean";
    Tensor y = x.nll_loss(c["y"].tensor(), w, ignore, red);
    tcfix::expect_matches(y, c["out"], kRtol64, kAtol64);
    tcfix::expect_matches(grads(y, c, {x})[0], c["grad_x"], kGrad64, kGrad64);
  }
}

TEST(NllLoss, SingleSampleAndLoops) {
  // 1-D log-probabilities (C,) with a 0-d label; -inf log-probabilities of other classes stay out
  Tensor lp = Tensor::from_vector<float>({-0.5f, -std::numeric_limits<float>::infinity(), -1.25f});
  Tensor label = Tensor::full({}, 2, dt::int32);
  EXPECT_FLOAT_EQ(lp.nll_loss(label).item<float>(), 1.25f);
  EXPECT_FLOAT_EQ(lp.nll_loss(label, {}, {}, "none").item<float>(), 1.25f);
}

TEST(NllLoss, GradientMatchesFiniteDifferences) {
  Tensor labels = Tensor::from_vector<int32_t>({0, 2, 2});
  tcgrad::check_grad(
      tcgrad::binary([labels](const Tensor& x, const Tensor& w) { return x.nll_loss(labels, w); }),
      {{{3, 3}, tcgrad::mixed(9)}, {{3}, {0.5, 1.5, 2.0}}});
}

TEST(Losses, OutOfRangeLabelsGiveNaN) {
  Tensor x = Tensor::from_vector<float>({0.1f, 0.2f, 0.3f, 1.0f, 2.0f, 3.0f}, tc::Shape{2, 3});
  Tensor bad = Tensor::from_vector<int32_t>({1, 3});
  std::vector<float> s =
      x.sparse_categorical_crossentropy(bad, {.reduction = "none"}).data<float>();
  EXPECT_FALSE(std::isnan(s[0]));
  EXPECT_TRUE(std::isnan(s[1]));
  EXPECT_TRUE(std::isnan(x.cross_entropy(Tensor::from_vector<int32_t>({-1, 0})).item<float>()));
  EXPECT_TRUE(std::isnan(x.nll_loss(bad).item<float>()));
  // an ignored label may be out of range
  EXPECT_FALSE(
      std::isnan(x.nll_loss(Tensor::from_vector<int32_t>({1, -100}), {}, -100).item<float>()));
  EXPECT_FALSE(std::isnan(
      x.sparse_categorical_crossentropy(Tensor::from_vector<int32_t>({1, 7}), {.ignore_index = 7})
          .item<float>()));
}

TEST(Losses, Errors) {
  Tensor x = Tensor::ones({2, 3});
  Tensor labels = Tensor::from_vector<int32_t>({0, 1});
  expect_error(
      [&] {
        x.sparse_categorical_crossentropy(Tensor::from_vector<float>({0.0f, 1.0f}));
      },
      {"sparse_categorical_crossentropy", "integer", "got float"});
  expect_error(
      [&] {
        x.sparse_categorical_crossentropy(Tensor::from_vector<int32_t>({0, 1, 2}));
      },
      {"sparse_categorical_crossentropy", "(3,)", "(2, 3)", "(2,)"});
  expect_error([&] { x.sparse_categorical_crossentropy(labels, {.label_smoothing = 1.5}); },
               {"sparse_categorical_crossentropy", "label_smoothing", "1.5"});
  expect_error([&] { x.sparse_categorical_crossentropy(labels, {.reduction = "max"}); },
               {"sparse_categorical_crossentropy", "reduction", "max"});
  expect_error(
      [&] {
        x.cross_entropy(Tensor::from_vector<float>({0.5f, 0.5f}));
      },
      {"cross_entropy", "(2,)", "(2, 3)"});
  expect_error([&] { x.cross_entropy(Tensor::full({2}, true, dt::bool_)); },
               {"cross_entropy", "integer", "bool"});
  expect_error([&] { x.cross_entropy(labels, "mean", -0.1); },
               {"cross_entropy", "label_smoothing"});
  expect_error(
      [&] {
        x.nll_loss(Tensor::from_vector<float>({0.0f, 1.0f}));
      },
      {"nll_loss", "integer"});
  expect_error([&] { x.nll_loss(labels, Tensor::ones({2})); }, {"nll_loss", "weight", "(2,)", "3"});
  expect_error([&] { x.nll_loss(labels, {}, {}, "avg"); }, {"nll_loss", "reduction", "avg"});
  expect_error([&] { Tensor::full({}, 1.0).cross_entropy(labels); }, {"cross_entropy", "scalar"});
}

}  // namespace
