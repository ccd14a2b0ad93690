// Attention and a GPT-style decoder, with PyTorch's parameter names so weights load from
// PyTorch: MultiHeadAttention (nn.MultiheadAttention, batch_first), a pre-norm TransformerBlock
// and GPT. Generation runs token by token on a KV cache (tinygrad's gpt2/llama examples): keys and
// values of past positions are kept in preallocated tensors, so a step attends to them without
// recomputing them.
#pragma once

#include <optional>
#include <vector>

#include "nn/layers.h"

namespace tc::nn {

struct MultiHeadAttentionOpts {
  bool bias = true;
  double dropout = 0.0;     // of the attention weights, in training mode
  int64_t max_context = 0;  // positions the KV cache holds (forward with start_pos); 0: no cache
};

// PyTorch's nn.MultiheadAttention with batch_first=True and kdim = vdim = embed_dim: one fused
// input projection in_proj_weight (3 embed_dim, embed_dim) (glorot_uniform) and in_proj_bias
// (zeros), rows in the order query, key, value; then out_proj (Linear, bias zeros). Heads of
// embed_dim / num_heads attend through Tensor::scaled_dot_product_attention.
class MultiHeadAttention : public Module {
 public:
  MultiHeadAttention(int64_t embed_dim, int64_t num_heads, MultiHeadAttentionOpts opts = {});
  // query (B, L, E), key and value (B, S, E) -> (B, L, E). attn_mask broadcasts to
  // (B, heads, L, S) with scaled_dot_product_attention's meaning: a float mask is added, a bool
  // mask keeps the *true* positions (PyTorch's nn.MultiheadAttention masks the true ones).
  // is_causal: query i sees keys 0..i.
  Tensor forward(const Tensor& query, const Tensor& key, const Tensor& value,
                 const std::optional<Tensor>& attn_mask = {}, bool is_causal = false);
  // Self-attention without a mask.
  Tensor forward(const Tensor& x) override { return forward(x, x, x); }
  // Causal self-attention of x (B, T, E) at positions start_pos .. start_pos + T - 1, for
  // inference: its keys and values are written (and realized) into the KV cache, then the
  // queries attend to cached positions 0 .. start_pos + T - 1. start_pos 0 starts a sequence
  // (allocating the cache (B, max_context, heads, head_dim) for this batch size); later calls
  // continue it, or go back to an earlier position and overwrite from there.
  Tensor forward(const Tensor& x, int64_t start_pos);
  // Batched decoding: one token per row, x (B, 1, E), row b at its own position positions[b]
  // ((B,) integers in [0, max_context), not checked: they are read on the device). Row b's key
  // and value are written into slot positions[b] of the cache (allocated for this batch size when
  // missing) and its query attends to slots 0 .. positions[b]. The positions are an input the
  // kernels read, so one TinyJit capture of a decode step serves every position.
  Tensor decode(const Tensor& x, const Tensor& positions);

  Tensor in_proj_weight;
  std::optional<Tensor> in_proj_bias;
  Linear out_proj;

 private:
  // (B, T, E) query, key and value -> their projections, each (B, heads, T, head_dim)
  std::vector<Tensor> project(const Tensor& query, const Tensor& key, const Tensor& value) const;
  Tensor merge_heads(const Tensor& t);  // (B, heads, T, head_dim) -> out_proj of (B, T, E)
  bool cache_fits(int64_t batch, DType dtype) const;
  void allocate_cache(int64_t batch, DType dtype);
  int64_t embed_dim_, heads_;
  MultiHeadAttentionOpts o_;
  std::optional<Tensor> cache_k_, cache_v_;  // (B, heads, max_context, head_dim)
  int64_t cached_ = 0;                       // positions written so far
};

// Pre-norm: x + attn(ln1(x)), then x + mlp(ln2(x)) with mlp Linear(dim, 4 dim), GELU (tanh
// approximation, PyTorch's GELU(approximate="tanh")), Linear(4 dim, dim); attention is causal.
class TransformerBlock : public Module {
 public:
  // max_context > 0 gives the attention a KV cache of that length (forward with start_pos).
  TransformerBlock(int64_t dim, int64_t heads, int64_t max_context = 0);
  Tensor forward(const Tensor& x) override;  // the whole sequence, causal
  // Through the KV cache (for inference); the result is realized, as the cache writes are.
  Tensor forward(const Tensor& x, int64_t start_pos);
  Tensor decode(const Tensor& x, const Tensor& positions);  // see MultiHeadAttention::decode
  LayerNorm ln1;
  MultiHeadAttention attn;
  LayerNorm ln2;
  Sequential mlp;  // "mlp.0" and "mlp.2" are the Linears, as an nn.Sequential with the GELU
};

struct GPTConfig {
  int64_t vocab = 0, context = 0, layers = 0, width = 0, heads = 0;
};

// A decoder-only language model: token (wte) and position (wpe) embeddings, `layers`
// TransformerBlocks ("blocks.0" ...), a final LayerNorm (ln_f) and lm_head (Linear, no bias).
class GPT : public Module {
 public:
  explicit GPT(GPTConfig config);
  // Integer tokens (B, T), T <= context -> logits (B, T, vocab), causal.
  Tensor forward(const Tensor& tokens) override;
  // The same for tokens at positions start_pos .. start_pos + T - 1 through the blocks' KV caches
  // (see MultiHeadAttention::forward(x, start_pos)): feeding a sequence in pieces gives the
  // logits of one full forward.
  Tensor forward(const Tensor& tokens, int64_t start_pos);
  // One token per row, tokens (B, 1), each row at its own position (positions (B,) integers):
  // logits (B, 1, vocab) (see MultiHeadAttention::decode). Rows are independent sequences, so a
  // server decodes many requests together, each joining and leaving at any step.
  Tensor decode(const Tensor& tokens, const Tensor& positions);
  const GPTConfig& config() const { return c_; }

  Embedding wte, wpe;
  Sequential blocks;
  LayerNorm ln_f;
  Linear lm_head;

 private:
  Tensor embed(const Tensor& tokens, int64_t start_pos);  // (B, T, width)
  GPTConfig c_;
  std::vector<TransformerBlock*> block_list_;
};

}  // namespace tc::nn
