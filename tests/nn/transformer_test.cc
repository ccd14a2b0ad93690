// MultiHeadAttention, TransformerBlock and GPT against PyTorch (tests/fixtures/gen_transformer.py:
// nn.MultiheadAttention with batch_first, and a block and GPT built from it): PyTorch's weights
// load by name, outputs and gradients match. Generation through the KV cache, in pieces of any
// size, gives the logits of one full causal forward (and PyTorch's). Plus names, inits, errors.
#include "nn/transformer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/nn/module_check.h"
#include "tinycore/error.h"
#include "tinycore/jit/jit.h"

namespace {

using tc::Tensor;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

const tc::nn::GPTConfig kTiny = {.vocab = 16, .context = 8, .layers = 2, .width = 16, .heads = 2};

std::vector<std::string> names(const tc::nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m.state_dict()) out.push_back(k);
  return out;
}

void expect_near(const Tensor& got, const Tensor& want, double tol = 1e-5) {
  ASSERT_EQ(got.shape(), want.shape());
  std::vector<float> g = got.data<float>(), w = want.data<float>();
  for (size_t i = 0; i < g.size(); i++) ASSERT_NEAR(g[i], w[i], tol) << "element " << i;
}

// The logits of `tokens` (B, T) fed to the KV cache in pieces of the given lengths.
Tensor generate(tc::nn::GPT& gpt, const Tensor& tokens, const std::vector<int64_t>& pieces) {
  std::vector<Tensor> logits;
  int64_t pos = 0;
  for (int64_t n : pieces) {
    Tensor piece = tokens.shrink({{0, tokens.shape()[0]}, {pos, pos + n}});
    logits.push_back(gpt.forward(piece, pos).realize());
    pos += n;
  }
  return Tensor::cat(logits, 1);
}

TEST(Transformer, MultiHeadAttentionMatchesPyTorch) {
  tc::nn::MultiHeadAttention self(8, 2);
  tcfix::check_module("transformer", "mha_self", self);
  tc::nn::MultiHeadAttention causal(8, 4);
  tcfix::check_module(
      "transformer", "mha_causal", causal,
      {.train = true, .grad_x = true, .tol = 1e-5, .run = [&](const tcfix::Case&, const Tensor& x) {
         return causal.forward(x, x, x, std::nullopt, /*is_causal=*/true);
       }});
  // cross-attention (separate projections) with an additive float mask, without biases
  tc::nn::MultiHeadAttention cross(6, 2, {.bias = false, .dropout = 0.0, .max_context = 0});
  EXPECT_EQ(names(cross), (std::vector<std::string>{"in_proj_weight", "out_proj.weight"}));
  tcfix::check_module("transformer", "mha_cross_mask_nobias", cross,
                      {.train = true,
                       .grad_x = true,
                       .tol = 1e-5,
                       .run = [&](const tcfix::Case& c, const Tensor& x) {
                         Tensor kv = c["kv"].tensor();
                         return cross.forward(x, kv, kv, c["mask"].tensor());
                       }});
}

TEST(Transformer, BlockMatchesPyTorch) {
  tc::nn::TransformerBlock block(8, 2);
  EXPECT_EQ(names(block),
            (std::vector<std::string>{"attn.in_proj_bias", "attn.in_proj_weight",
                                      "attn.out_proj.bias", "attn.out_proj.weight", "ln1.bias",
                                      "ln1.weight", "ln2.bias", "ln2.weight", "mlp.0.bias",
                                      "mlp.0.weight", "mlp.2.bias", "mlp.2.weight"}));
  tcfix::check_module("transformer", "block", block,
                      {.train = true, .grad_x = true, .tol = 1e-4, .run = {}});
}

TEST(Transformer, GPTMatchesPyTorch) {
  tc::nn::GPT gpt(kTiny);
  // 2 embeddings, 12 tensors per block, ln_f's 2 and lm_head's weight (no bias)
  EXPECT_EQ(gpt.parameters().size(), 2u + 2 * 12 + 2 + 1);
  std::vector<std::string> n = names(gpt);
  for (const char* want :
       {"wte.weight", "wpe.weight", "blocks.0.attn.in_proj_weight", "blocks.1.attn.out_proj.bias",
        "blocks.1.mlp.2.weight", "ln_f.bias", "lm_head.weight"})
    EXPECT_THAT(n, ::testing::Contains(want));
  EXPECT_THAT(n, ::testing::Not(::testing::Contains("lm_head.bias")));
  // forward logits and the gradients of embeddings, attention, norms and the head
  tcfix::check_module("transformer", "gpt", gpt,
                      {.train = true, .grad_x = false, .tol = 1e-4, .run = {}});
}

TEST(Transformer, KVCacheGenerationEqualsFullForward) {
  const tcfix::Case& c = tcfix::fixture("transformer", "gpt");
  tc::nn::GPT gpt(kTiny);
  tcfix::load_torch_state(c, gpt);
  Tensor tokens = c["x"].tensor(tc::dtypes::int32);  // (2, 8)
  Tensor full = gpt(tokens).realize();
  tcfix::expect_matches(full, c["out"], 1e-4, 1e-4);
  // a prompt of 3, then token by token, then the last 2 at once: PyTorch's logits throughout
  Tensor pieces = generate(gpt, tokens, {3, 1, 1, 1, 2});
  tcfix::expect_matches(pieces, c["out"], 1e-4, 1e-4);
  expect_near(pieces, full);
}

// Batched decoding: row 1 starts two steps after row 0 (each at its own position), through one
// TinyJit capture; every row's logits are PyTorch's at its position.
TEST(Transformer, DecodeRowsAtTheirOwnPositionsThroughOneCapture) {
  const tcfix::Case& c = tcfix::fixture("transformer", "gpt");
  tc::nn::GPT gpt(kTiny);
  tcfix::load_torch_state(c, gpt);
  std::vector<int32_t> tokens = c["x"].tensor(tc::dtypes::int32).data<int32_t>();  // (2, 8)
  std::vector<float> want = c["out"].tensor().data<float>();                       // (2, 8, 16)
  tc::TinyJit step([&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{gpt.decode(in[0], in[1]).realize()};
  });
  const int64_t lag = 2, T = 8, V = 16;
  for (int64_t t = 0; t < T + lag; t++) {
    int32_t pos[2] = {static_cast<int32_t>(std::min(t, T - 1)),  // row 0 idles at its last slot
                      static_cast<int32_t>(std::max<int64_t>(t - lag, 0))};
    std::vector<int32_t> tok = {tokens[pos[0]], tokens[T + pos[1]]};
    std::vector<float> got = step({Tensor::from_vector<int32_t>(tok, tc::Shape{2, 1}),
                                   Tensor::from_vector<int32_t>({pos[0], pos[1]}, tc::Shape{2})})[0]
                                 .data<float>();
    for (int64_t b = 0; b < 2; b++) {
      if ((b == 0 && t >= T) || (b == 1 && t < lag)) continue;  // a row not decoding yet/any more
      for (int64_t v = 0; v < V; v++)
        ASSERT_NEAR(got[b * V + v], want[(b * T + pos[b]) * V + v], 1e-4)
            << "row " << b << " position " << pos[b] << " token " << v;
    }
  }
  EXPECT_EQ(step.calls(), T + lag);
  EXPECT_TRUE(step.captured());
  EXPECT_THAT(
      [&] {
        gpt.decode(Tensor::zeros({2, 2}, tc::dtypes::int32), Tensor::zeros({2}));
      },
      ThrowsMessage<tc::Error>(HasSubstr("decode takes one token per row (batch, 1)")));
  EXPECT_THAT(
      [&] {
        gpt.decode(Tensor::zeros({2, 1}, tc::dtypes::int32), Tensor::zeros({3}, tc::dtypes::int32));
      },
      ThrowsMessage<tc::Error>(HasSubstr("decode positions must be (2,)")));
}

// The cache at one attention layer: rewriting from an earlier position, and a new sequence of
// another batch size.
TEST(Transformer, KVCacheRewindAndNewBatch) {
  Tensor::manual_seed(4);
  tc::nn::MultiHeadAttention mha(8, 2, {.bias = true, .dropout = 0.0, .max_context = 6});
  Tensor x = Tensor::randn({2, 5, 8}).realize(), y = Tensor::randn({2, 5, 8}).realize();
  auto full = [&](const Tensor& t) { return mha.forward(t, t, t, std::nullopt, true); };
  auto cols = [](const Tensor& t, int64_t from, int64_t to) {
    return t.shrink({{0, t.shape()[0]}, {from, to}, {0, 8}});
  };
  Tensor first = mha.forward(cols(x, 0, 4), 0);
  expect_near(first, cols(full(x), 0, 4));
  // positions 2 .. 4 again, from another sequence that shares x's first two positions
  Tensor z = cols(x, 0, 2).cat({cols(y, 2, 5)}, 1).realize();
  Tensor again = mha.forward(cols(z, 2, 4), 2).cat({mha.forward(cols(z, 4, 5), 4)}, 1);
  expect_near(again, cols(full(z), 2, 5));
  // batch 1 starts a new cache
  Tensor one = y.shrink({{1, 2}, {0, 5}, {0, 8}}).realize();
  Tensor gen = mha.forward(cols(one, 0, 1), 0).cat({mha.forward(cols(one, 1, 5), 1)}, 1);
  expect_near(gen, full(one));
}

TEST(Transformer, InitialisationLikePyTorch) {
  Tensor::manual_seed(2);
  tc::nn::MultiHeadAttention mha(8, 2);
  EXPECT_EQ(mha.in_proj_weight.shape(), (tc::Shape{24, 8}));
  double bound = std::sqrt(6.0 / (24 + 8));  // xavier_uniform
  for (float w : mha.in_proj_weight.data<float>()) ASSERT_LE(std::abs(w), bound + 1e-6);
  for (float b : mha.in_proj_bias->data<float>()) ASSERT_EQ(b, 0.0f);
  for (float b : mha.out_proj.bias->data<float>()) ASSERT_EQ(b, 0.0f);
  EXPECT_TRUE(mha.out_proj.bias->requires_grad());
}

TEST(Transformer, Errors) {
  EXPECT_THAT([] { tc::nn::MultiHeadAttention(10, 3); },
              ThrowsMessage<tc::Error>(HasSubstr("embed_dim 10 does not split into 3 heads")));
  tc::nn::MultiHeadAttention mha(8, 2);
  EXPECT_THAT(
      [&] {
        mha(Tensor::ones({2, 3, 6}));
      },
      ThrowsMessage<tc::Error>(HasSubstr(
          "query (2, 3, 6), key (2, 3, 6) and value (2, 3, 6) must be (batch, length, 8)")));
  EXPECT_THAT(
      [&] {
        mha.forward(Tensor::ones({2, 3, 8}), Tensor::ones({2, 4, 8}), Tensor::ones({2, 5, 8}));
      },
      ThrowsMessage<tc::Error>(HasSubstr("key and value of one shape")));
  EXPECT_THAT(
      [&] {
        mha.forward(Tensor::ones({1, 2, 8}), 0);
      },
      ThrowsMessage<tc::Error>(HasSubstr("needs a KV cache (max_context > 0)")));
  tc::nn::MultiHeadAttention cached(8, 2, {.bias = true, .dropout = 0.0, .max_context = 4});
  EXPECT_THAT(
      [&] {
        cached.forward(Tensor::ones({1, 3, 8}), 2);
      },
      ThrowsMessage<tc::Error>(HasSubstr("positions 2 .. 4 do not fit the KV cache of 4")));
  EXPECT_THAT(
      [&] {
        cached.forward(Tensor::ones({1, 1, 8}), 1);
      },
      ThrowsMessage<tc::Error>(HasSubstr("start_pos 1 continues no cached sequence of batch 1")));
  EXPECT_THAT(
      [&] {
        cached.forward(Tensor::ones({1, 0, 8}), 0);
      },
      ThrowsMessage<tc::Error>(
          HasSubstr("input of shape (1, 0, 8) is not (batch, length >= 1, 8)")));
  cached.forward(Tensor::ones({1, 2, 8}), 0);
  EXPECT_THAT(
      [&] {
        cached.forward(Tensor::ones({1, 1, 8}), 3);
      },
      ThrowsMessage<tc::Error>(HasSubstr("start_pos 3 skips positions: the KV cache holds 2")));
  EXPECT_THAT(
      [&] {
        cached.forward(Tensor::ones({2, 1, 8}), 2);
      },
      ThrowsMessage<tc::Error>(HasSubstr("continues no cached sequence of batch 2")));

  EXPECT_THAT(
      [] { tc::nn::GPT({.vocab = 16, .context = 8, .layers = 1, .width = 0, .heads = 2}); },
      ThrowsMessage<tc::Error>(HasSubstr("GPT: config vocab 16, context 8, layers 1, width 0")));
  tc::nn::GPT gpt({.vocab = 8, .context = 4, .layers = 1, .width = 8, .heads = 2});
  Tensor tokens = Tensor::zeros({1, 5}, tc::dtypes::int32);
  EXPECT_THAT(
      [&] { gpt(tokens); },
      ThrowsMessage<tc::Error>(HasSubstr("GPT: positions 0 .. 4 do not fit the context of 4")));
  EXPECT_THAT(
      [&] {
        gpt.forward(Tensor::zeros({1, 2}, tc::dtypes::int32), 3);
      },
      ThrowsMessage<tc::Error>(HasSubstr("GPT: positions 3 .. 4 do not fit the context of 4")));
  EXPECT_THAT(
      [&] { gpt(Tensor::zeros({4}, tc::dtypes::int32)); },
      ThrowsMessage<tc::Error>(HasSubstr("GPT: tokens of shape (4,) are not (batch, length)")));
  EXPECT_THAT(
      [&] {
        gpt(Tensor::zeros({1, 2}));
      },
      ThrowsMessage<tc::Error>(HasSubstr("Embedding: indices must be integers")));
}

}  // namespace
