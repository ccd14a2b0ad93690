#include "nn/language_model.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nn/kv_cache.h"
#include "tinycore/error.h"

namespace tc::nn {

void check(const LanguageModelConfig& c) {
  auto positive = [&](const char* name, int64_t v) {  // and not so large it cannot be a model's
    if (v <= 0 || v > (int64_t{1} << 24))
      fail("%s model: %s must be in 1..16777216, got %d", c.arch, name, v);
  };
  positive("vocab", c.vocab);
  positive("context", c.context);
  positive("layers", c.layers);
  positive("dim", c.dim);
  positive("heads", c.heads);
  positive("kv_heads", c.kv_heads);
  positive("head_dim", c.head_dim);
  positive("ffn", c.ffn);
  if (c.heads % c.kv_heads != 0)
    fail("%s model: %d heads do not share %d key/value heads evenly", c.arch, c.heads, c.kv_heads);
  if (!c.learned_positions && c.head_dim % 2 != 0)
    fail("%s model: rotary embeddings need an even head_dim, got %d", c.arch, c.head_dim);
  if (!c.rope_freq_divisors.empty() &&
      static_cast<int64_t>(c.rope_freq_divisors.size()) != c.head_dim / 2)
    fail("%s model: %d rope frequency divisors for head_dim %d (need head_dim / 2)", c.arch,
         c.rope_freq_divisors.size(), c.head_dim);
  if (c.experts > 0 && (c.experts_used <= 0 || c.experts_used > c.experts))
    fail("%s model: %d experts used of %d", c.arch, c.experts_used, c.experts);
  if (!(c.norm_eps > 0)) fail("%s model: norm_eps must be positive, got %s", c.arch, c.norm_eps);
}

LanguageModel::LanguageModel(LanguageModelConfig config) : c_(std::move(config)) {
  check(c_);
  if (!c_.learned_positions) {  // RoPE's frequencies, in float32 as Hugging Face computes them
    std::vector<float> freq(static_cast<size_t>(c_.head_dim / 2));
    for (size_t i = 0; i < freq.size(); i++) {
      float exponent = static_cast<float>(2 * i) / static_cast<float>(c_.head_dim);
      freq[i] = 1.0f / std::pow(static_cast<float>(c_.rope_theta), exponent);
      if (!c_.rope_freq_divisors.empty())
        freq[i] = static_cast<float>(freq[i] / c_.rope_freq_divisors[i]);
    }
    freq_ = Tensor::from_vector(freq).realize();
  }
}

std::vector<std::pair<std::string, Shape>> LanguageModel::weight_shapes() const {
  int64_t d = c_.dim, q = c_.heads * c_.head_dim, kv = c_.kv_heads * c_.head_dim;
  std::vector<std::pair<std::string, Shape>> out = {{"token_embd.weight", {c_.vocab, d}}};
  auto norm = [&](const std::string& name, int64_t n) {
    out.push_back({name + ".weight", {n}});
    if (c_.layer_norm) out.push_back({name + ".bias", {n}});
  };
  auto proj = [&](const std::string& name, Shape s, bool bias) {
    out.push_back({name + ".weight", s});
    if (bias) out.push_back({name + ".bias", {s[s.size() - 2]}});
  };
  if (c_.learned_positions) out.push_back({"position_embd.weight", {c_.context, d}});
  for (int64_t i = 0; i < c_.layers; i++) {
    std::string b = "blk." + std::to_string(i) + ".";
    norm(b + "attn_norm", d);
    proj(b + "attn_q", {q, d}, c_.qkv_bias);
    proj(b + "attn_k", {kv, d}, c_.qkv_bias);
    proj(b + "attn_v", {kv, d}, c_.qkv_bias);
    if (c_.qk_norm) {
      out.push_back({b + "attn_q_norm.weight", {c_.head_dim}});
      out.push_back({b + "attn_k_norm.weight", {c_.head_dim}});
    }
    proj(b + "attn_output", {d, q}, c_.other_bias);
    norm(b + "ffn_norm", d);
    if (c_.experts > 0) {
      out.push_back({b + "ffn_gate_inp.weight", {c_.experts, d}});
      out.push_back({b + "ffn_gate_exps.weight", {c_.experts, c_.ffn, d}});
      out.push_back({b + "ffn_up_exps.weight", {c_.experts, c_.ffn, d}});
      out.push_back({b + "ffn_down_exps.weight", {c_.experts, d, c_.ffn}});
    } else {
      if (!c_.gelu_mlp) proj(b + "ffn_gate", {c_.ffn, d}, false);
      proj(b + "ffn_up", {c_.ffn, d}, c_.other_bias);
      proj(b + "ffn_down", {d, c_.ffn}, c_.other_bias);
    }
  }
  norm("output_norm", d);
  if (!c_.tied_embeddings) out.push_back({"output.weight", {c_.vocab, d}});
  return out;
}

void LanguageModel::set_weights(std::map<std::string, Tensor> weights,
                                std::map<std::string, QuantizedWeight> quantized) {
  std::vector<std::string> problems;
  for (auto& [name, q] : quantized) {
    auto it = weights.find(name);
    const Shape& s = q.words.shape();  // (out, in / 32 / g, words, g)
    if (it == weights.end() || it->second.shape() != Shape{s[0], s[1] * s[3] * 32})
      problems.push_back(name + "'s quantized form is not of a weight of its shape");
    q = q.realized();
  }
  std::map<std::string, Tensor> set;
  for (auto& [name, shape] : weight_shapes()) {
    auto it = weights.find(name);
    if (it == weights.end()) {
      problems.push_back(name + " is missing");
      continue;
    }
    if (it->second.shape() != shape || !dtypes::is_float(it->second.dtype()))
      problems.push_back(absl::StrFormat("%s is %s %s, not %s float", name,
                                         fmt_shape(it->second.shape()), it->second.dtype().name(),
                                         fmt_shape(shape)));
    set.emplace(name, it->second);
    weights.erase(it);
  }
  for (auto& [name, t] : weights) problems.push_back(name + " is not a weight of this model");
  if (!problems.empty())
    fail("%s model: weights do not fit (%d problems): %s", c_.arch, problems.size(),
         absl::StrJoin(problems, "; "));
  bool first = w_.empty();
  w_ = std::move(set);
  quantized_ = std::move(quantized);
  if (first)
    for (auto& [name, t] : w_) register_parameter(name, &t);
}

namespace {
std::string key(int64_t i, const std::string& name, const char* kind) {
  return (i < 0 ? "" : "blk." + std::to_string(i) + ".") + name + "." + kind;
}
}  // namespace

const Tensor& LanguageModel::w(int64_t i, const std::string& name, const char* kind) const {
  auto it = w_.find(key(i, name, kind));
  if (it == w_.end())
    fail("%s model: weight %s is not set (set_weights first)", c_.arch, key(i, name, kind));
  return it->second;
}

bool LanguageModel::has(int64_t i, const std::string& name, const char* kind) const {
  return w_.count(key(i, name, kind)) > 0;
}

Tensor LanguageModel::linear(int64_t i, const std::string& name, const Tensor& x) const {
  auto q = quantized_.find(key(i, name, "weight"));
  // x quantized once for the projections that read it (a layer's q, k and v; gate and up)
  if (q != quantized_.end() && (!last_input_ || last_input_->x.uop() != x.uop()))
    last_input_.emplace(QuantizedInput{x, q->second.quantize(x)});
  Tensor y = q != quantized_.end() ? q->second.matvec(last_input_->input)
                                   : x.matmul(w(i, name).cast(dtypes::float32).T());
  return has(i, name, "bias") ? y + w(i, name, "bias").cast(dtypes::float32) : y;
}

Tensor LanguageModel::norm(int64_t i, const std::string& name, const Tensor& x) const {
  Tensor weight = w(i, name).cast(dtypes::float32);
  if (c_.layer_norm)
    return x.layernorm(-1, c_.norm_eps) * weight + w(i, name, "bias").cast(dtypes::float32);
  return x * (x.square().mean(-1, true) + c_.norm_eps).rsqrt() * weight;
}

LanguageModel::Rotation LanguageModel::rotation(const Tensor& positions) const {
  const Shape& s = positions.shape();  // (B, T)
  Tensor angle = positions.cast(dtypes::float32).reshape({s[0], s[1], 1, 1}) *
                 freq_->reshape({1, 1, 1, c_.head_dim / 2});
  return {angle.cos().contiguous(), angle.sin().contiguous()};
}

Tensor LanguageModel::rope(const Tensor& x, const Rotation& r) const {
  const Shape& s = x.shape();  // (B, T, heads, head_dim)
  int64_t half = c_.head_dim / 2;
  Tensor x1 = x.shrink({{0, s[0]}, {0, s[1]}, {0, s[2]}, {0, half}});
  Tensor x2 = x.shrink({{0, s[0]}, {0, s[1]}, {0, s[2]}, {half, 2 * half}});
  return (x1 * r.cos - x2 * r.sin).cat({x2 * r.cos + x1 * r.sin}, -1);
}

Tensor LanguageModel::attention(int64_t i, const Tensor& x, const Tensor& positions,
                                const std::optional<Rotation>& rotation, int64_t row, bool step,
                                int64_t start) {
  int64_t batch = x.shape()[0], len = x.shape()[1], hd = c_.head_dim;
  // contiguous: RoPE reads each row twice (both halves), which must not recompute the matmul; and
  // a prefill writes k and v into the cache with a kernel over all of its rows, which must not
  // compute the projection for the context's every position
  Tensor q = linear(i, "attn_q", x).contiguous().reshape({batch, len, c_.heads, hd});
  Tensor k = linear(i, "attn_k", x).contiguous().reshape({batch, len, c_.kv_heads, hd});
  Tensor v = linear(i, "attn_v", x).contiguous().reshape({batch, len, c_.kv_heads, hd});
  if (c_.qk_norm) {
    q = norm(i, "attn_q_norm", q);
    k = norm(i, "attn_k_norm", k);
  }
  // rotated once: fused, every key (or query) that reads one would rotate it again
  if (rotation) {
    q = rope(q, *rotation).contiguous();
    k = rope(k, *rotation).contiguous();
  }
  if (row >= 0) {  // prefill: this sequence's keys and values into its row of the cache
    auto rows = [&](const Tensor& cache) {
      return cache.shrink({{row, row + 1}, {0, c_.kv_heads}, {start, start + len}, {0, hd}});
    };
    rows(cache_k_[i]).assign(k.transpose(1, 2));
    rows(cache_v_[i]).assign(v.transpose(1, 2));
    realize_all({cache_k_[i], cache_v_[i]});
  }
  auto attend = [&]() {
    AttentionOpts causal = {.dropout_p = 0.0, .is_causal = true, .enable_gqa = true};
    if (step) return attend_cached(cache_k_[i], cache_v_[i], q, k, v, positions.reshape({batch}));
    if (start == 0)
      return q.transpose(1, 2).scaled_dot_product_attention(k.transpose(1, 2), v.transpose(1, 2),
                                                            {}, causal);
    // a later chunk of a prefill: it attends to the row's slots up to each of its positions
    int64_t seen = start + len;
    auto upto = [&](const Tensor& cache) {
      return cache.shrink({{row, row + 1}, {0, c_.kv_heads}, {0, seen}, {0, hd}});
    };
    Tensor slot = Tensor::arange(static_cast<double>(seen)).reshape({1, seen}),
           at = Tensor::arange(static_cast<double>(start), static_cast<double>(seen));
    causal.is_causal = false;
    return q.transpose(1, 2).scaled_dot_product_attention(upto(cache_k_[i]), upto(cache_v_[i]),
                                                          slot.le(at.reshape({len, 1})), causal);
  };
  Tensor out = attend();
  return linear(i, "attn_output", out.transpose(1, 2).reshape({batch, len, c_.heads * hd}));
}

Tensor LanguageModel::mlp(int64_t i, const Tensor& x) const {
  if (c_.experts == 0) {
    if (c_.gelu_mlp) return linear(i, "ffn_down", linear(i, "ffn_up", x).gelu("tanh"));
    return linear(i, "ffn_down", linear(i, "ffn_gate", x).silu() * linear(i, "ffn_up", x));
  }
  // Mixture of experts: softmax over the router's logits, the top experts_used kept (and
  // renormalized).
  int64_t n = x.numel() / c_.dim, e = c_.experts, k = c_.experts_used;
  Tensor flat = x.reshape({n, c_.dim});
  Tensor prob = linear(i, "ffn_gate_inp", flat).softmax(-1);
  auto [top, index] = prob.topk(k, -1);
  if (c_.normalize_expert_weights) top = top / top.sum(-1, true);
  if (n * k < e) {  // few tokens (a decode step): each reads only its chosen experts' weights
    // (n, k, out): a sum over the experts and the inputs whose expert loop the one-hot factor
    // narrows to the chosen one (codegen/narrow.h), with no copy of the chosen weights
    Tensor chosen = index.one_hot(e).cast(dtypes::float32).reshape({n, k, e, 1, 1});
    auto project = [&](const Tensor& v, const char* name) {  // v (n, k or 1, 1, 1, in)
      return (chosen * v * w(i, name).cast(dtypes::float32)).sum({2, 4});
    };
    Tensor xs = flat.reshape({n, 1, 1, 1, c_.dim});
    Tensor h = project(xs, "ffn_gate_exps").silu() * project(xs, "ffn_up_exps");
    Tensor y = project(h.reshape({n, k, 1, 1, c_.ffn}), "ffn_down_exps");  // (n, k, dim)
    return (y * top.unsqueeze(-1)).sum(1).reshape(x.shape());
  }
  // else every expert runs on every token, and the unchosen ones weigh zero
  Tensor weight = (index.one_hot(e).cast(dtypes::float32) * top.unsqueeze(-1)).sum(1);  // (n, e)
  auto experts = [&](const char* name) { return w(i, name).cast(dtypes::float32).transpose(1, 2); };
  Tensor h = flat.unsqueeze(0).matmul(experts("ffn_gate_exps")).silu() *
             flat.unsqueeze(0).matmul(experts("ffn_up_exps"));  // (e, n, ffn)
  Tensor y = h.matmul(experts("ffn_down_exps"));                // (e, n, dim)
  return (y * weight.T().unsqueeze(-1)).sum(0).reshape(x.shape());
}

Tensor LanguageModel::hidden(const Tensor& tokens, const Tensor& positions, int64_t row, bool step,
                             int64_t start) {
  if (w_.empty()) fail("%s model: no weights (set_weights first)", c_.arch);
  Tensor x = tokens.one_hot(c_.vocab)
                 .cast(dtypes::float32)
                 .matmul(w(-1, "token_embd").cast(dtypes::float32));
  if (c_.learned_positions)
    x = x + positions.one_hot(c_.context)
                .cast(dtypes::float32)
                .matmul(w(-1, "position_embd").cast(dtypes::float32));
  std::optional<Rotation> r;
  if (!c_.learned_positions) r = rotation(positions);
  for (int64_t i = 0; i < c_.layers; i++) {
    Tensor y = x + attention(i, norm(i, "attn_norm", x), positions, r, row, step, start);
    x = y + mlp(i, norm(i, "ffn_norm", y));
    if (row >= 0 || step) x = x.realize();  // the next layer's cache write would compute it again
  }
  return x;
}

Tensor LanguageModel::logits(const Tensor& hidden) const {
  return linear(-1, c_.tied_embeddings ? "token_embd" : "output", norm(-1, "output_norm", hidden));
}

namespace {
void check_tokens(const LanguageModelConfig& c, const Tensor& tokens, const char* op) {
  if (tokens.ndim() != 2 || tokens.shape()[1] == 0 || !dtypes::is_int(tokens.dtype()))
    fail("%s model: %s takes integer tokens (batch, length), got %s %s", c.arch, op,
         fmt_shape(tokens.shape()), tokens.dtype().name());
  if (tokens.shape()[1] > c.context)
    fail("%s model: %s of %d tokens does not fit the context of %d", c.arch, op, tokens.shape()[1],
         c.context);
}
}  // namespace

Tensor LanguageModel::forward(const Tensor& tokens) {
  check_tokens(c_, tokens, "forward");
  int64_t len = tokens.shape()[1];
  Tensor pos = Tensor::arange(0, static_cast<double>(len), 1, dtypes::int32)
                   .reshape({1, len})
                   .expand({tokens.shape()[0], len});
  return logits(hidden(tokens, pos, -1, false));
}

void LanguageModel::allocate(int64_t batch) {
  if (batch <= 0) fail("%s model: a KV cache needs a batch of at least 1, got %d", c_.arch, batch);
  Shape shape = {batch, c_.kv_heads, c_.context, c_.head_dim};
  cache_k_.clear();
  cache_v_.clear();
  for (int64_t i = 0; i < c_.layers; i++) {
    cache_k_.push_back(Tensor::zeros(shape).contiguous().realize());
    cache_v_.push_back(Tensor::zeros(shape).contiguous().realize());
  }
}

Tensor LanguageModel::prefill(const Tensor& tokens, int64_t row, int64_t logits_at, int64_t start) {
  check_tokens(c_, tokens, "prefill");
  if (tokens.shape()[0] != 1)
    fail("%s model: prefill takes one sequence (1, length), got %s", c_.arch,
         fmt_shape(tokens.shape()));
  int64_t batch = cache_k_.empty() ? 0 : cache_k_[0].shape()[0];
  if (row < 0 || row >= batch)
    fail("%s model: prefill into row %d of a KV cache of %d rows (allocate first)", c_.arch, row,
         batch);
  int64_t len = tokens.shape()[1];
  if (logits_at >= len)
    fail("%s model: prefill's logits at position %d of a sequence of %d", c_.arch, logits_at, len);
  if (start < 0 || start + len > c_.context)
    fail("%s model: prefill of %d tokens from position %d does not fit the context of %d", c_.arch,
         len, start, c_.context);
  Tensor at = Tensor::arange(static_cast<double>(start), static_cast<double>(start + len), 1,
                             dtypes::int32);
  Tensor x = hidden(tokens, at.reshape({1, len}), row, false, start);
  if (logits_at >= 0)  // a one-hot pick of that row: a gather, one row read
    x = Tensor::from_vector(std::vector<int32_t>{static_cast<int32_t>(logits_at)}, Shape{1, 1})
            .one_hot(len)
            .cast(dtypes::float32)
            .matmul(x);
  return logits(x);
}

Tensor LanguageModel::decode(const Tensor& tokens, const Tensor& positions) {
  check_tokens(c_, tokens, "decode");
  int64_t batch = tokens.shape()[0];
  if (tokens.shape()[1] != 1)
    fail("%s model: decode takes one token per row (batch, 1), got %s", c_.arch,
         fmt_shape(tokens.shape()));
  if (cache_k_.empty() || cache_k_[0].shape()[0] != batch)
    fail("%s model: decode of %d rows needs a KV cache of %d rows (allocate first)", c_.arch, batch,
         batch);
  if (positions.shape() != Shape{batch} || !dtypes::is_int(positions.dtype()))
    fail("%s model: decode positions must be (%d,) integers, got %s %s", c_.arch, batch,
         fmt_shape(positions.shape()), positions.dtype().name());
  return logits(hidden(tokens, positions.reshape({batch, 1}), -1, true));
}

}  // namespace tc::nn
