// One decoder-only transformer for the language models people bring (Llama 2/3, Mistral,
// Qwen2/2.5, Qwen3, Qwen3-MoE, GPT-2): each family is a configuration of this module, not a copy
// of it. Weights are plain tensors that loaders set (frontends/llm/checkpoint.h): a weight may be
// a lazy expression, like the dequantization of a GGUF block format, which then fuses into the
// kernel that reads it. Inference keeps keys and values in a KV cache of `context` positions per
// batch row; decode() reads each row's position from a tensor, so one TinyJit capture of a decode
// step serves every position.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nn/module.h"
#include "nn/quantized_weight.h"

namespace tc::nn {

struct LanguageModelConfig {
  std::string arch;  // the family's name, for messages
  int64_t vocab = 0, context = 0, layers = 0, dim = 0;
  int64_t heads = 0, kv_heads = 0, head_dim = 0;  // head_dim may differ from dim / heads (Qwen3)
  int64_t ffn = 0;                                // hidden width of the MLP (of one expert)
  bool layer_norm = false;                        // LayerNorm with bias (GPT-2); else RMSNorm
  double norm_eps = 1e-5;
  bool gelu_mlp = false;  // up, GELU (tanh), down (GPT-2); else SwiGLU: down(silu(gate) * up)
  bool learned_positions = false;  // GPT-2's position embeddings; else rotary (RoPE)
  double rope_theta = 10000;
  std::vector<double> rope_freq_divisors;  // per frequency (head_dim / 2), e.g. Llama 3 scaling
  bool qkv_bias = false;                   // biases of the q, k and v projections (Qwen2, GPT-2)
  bool other_bias = false;                 // biases of the output projection and the MLP (GPT-2)
  bool qk_norm = false;          // RMSNorm of each head's query and key before RoPE (Qwen3)
  bool tied_embeddings = false;  // the output projection is the token embedding
  int64_t experts = 0, experts_used = 0;  // a mixture of experts in every MLP when experts > 0
  bool normalize_expert_weights = true;   // the chosen experts' weights renormalized to sum 1
};

// Throws naming the field when a configuration cannot describe a model.
void check(const LanguageModelConfig& c);

class LanguageModel : public Module {
 public:
  explicit LanguageModel(LanguageModelConfig config);

  // Causal logits (B, T, vocab) of tokens (B, T) at positions 0 .. T-1, without the KV cache.
  Tensor forward(const Tensor& tokens) override;
  // Prefill: tokens (1, T) of one sequence at positions start .. start+T-1, written into row `row`
  // of the KV cache (allocate() first); logits (1, T, vocab), or with `logits_at` >= 0 only the
  // logits at that index of tokens (1, 1, vocab): what a generator samples from, for one row's
  // output projection (the index is data, so prompts padded to one length share kernels). A long
  // prompt is prefilled in chunks, as llama.cpp's ubatches: a chunk from `start` > 0 attends to
  // the row's cached slots before it, which earlier chunks wrote.
  Tensor prefill(const Tensor& tokens, int64_t row, int64_t logits_at = -1, int64_t start = 0);
  // One token per row, tokens (B, 1), row b at position positions[b] ((B,) integers, read on the
  // device): its key and value go to that slot of the cache and it attends to slots 0 ..
  // positions[b] (nn/kv_cache.h: one TinyJit capture serves every position). Logits (B, 1,
  // vocab). B must be the allocated batch.
  Tensor decode(const Tensor& tokens, const Tensor& positions);
  // A KV cache of `batch` rows of `context` positions (zeros), replacing any other.
  void allocate(int64_t batch);
  const LanguageModelConfig& config() const { return c_; }

  // The weights this configuration needs, by llama.cpp's GGUF names ("token_embd.weight",
  // "blk.0.attn_q.weight", ...), with their shapes in PyTorch's layout (a projection is (out,
  // in); experts are stacked (experts, out, in)).
  std::vector<std::pair<std::string, Shape>> weight_shapes() const;
  // Sets every weight (any float dtype; computed in float32), checking that each name of
  // weight_shapes() is given with its shape and that no other name is: an error lists them all.
  // `quantized`: the Q4_0 or Q8_0 form of some projections (realized here), which they multiply
  // by as llama.cpp does (QuantizedWeight::matvec: x quantized to int8, faster than float32 at
  // every length measured); the weights' values must be their dequantized ones (an embedding's
  // rows are read from those).
  void set_weights(std::map<std::string, Tensor> weights,
                   std::map<std::string, QuantizedWeight> quantized = {});

 private:
  // The last layer's output (B, T, dim): forward's body; `positions` (B, T) integers, `row` the
  // cache row of a prefill or -1 (no cache); `step`: a decode step (cache written at positions,
  // attends up to them).
  Tensor hidden(const Tensor& tokens, const Tensor& positions, int64_t row, bool step,
                int64_t start = 0);
  Tensor logits(const Tensor& hidden) const;  // the output norm and projection
  // RoPE's rotation at every position: the cosines and sines of its angles, (B, T, 1,
  // head_dim / 2), computed once for every layer, head, q and k (fused into a layer's rotation of
  // k, they were computed again for each of its heads, in double precision and lane by lane)
  struct Rotation {
    Tensor cos, sin;
  };
  Rotation rotation(const Tensor& positions) const;
  Tensor attention(int64_t i, const Tensor& x, const Tensor& positions,
                   const std::optional<Rotation>& rotation, int64_t row, bool step, int64_t start);
  Tensor mlp(int64_t i, const Tensor& x) const;
  // the weight `name` of layer i ("blk.<i>.<name>.weight"; i < 0: a global one, "<name>.weight")
  const Tensor& w(int64_t i, const std::string& name, const char* kind = "weight") const;
  bool has(int64_t i, const std::string& name, const char* kind = "weight") const;
  Tensor norm(int64_t i, const std::string& name, const Tensor& x) const;
  Tensor linear(int64_t i, const std::string& name, const Tensor& x) const;  // with its bias
  Tensor rope(const Tensor& x, const Rotation& r) const;  // x (B, T, heads, head_dim)
  LanguageModelConfig c_;
  std::map<std::string, Tensor> w_;
  std::map<std::string, QuantizedWeight> quantized_;  // set_weights
  // linear's last x, as quantized for the projections that read it
  struct QuantizedInput {
    Tensor x;
    QuantizedWeight::Input input;
  };
  mutable std::optional<QuantizedInput> last_input_;
  std::optional<Tensor> freq_;             // RoPE's angle per position, (head_dim / 2)
  std::vector<Tensor> cache_k_, cache_v_;  // per layer (B, kv_heads, context, head_dim)
};

}  // namespace tc::nn
