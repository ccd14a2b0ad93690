#include "nn/transformer.h"

#include "nn/kv_cache.h"
#include "tinycore/error.h"

namespace tc::nn {

namespace {
int64_t checked_embed_dim(int64_t embed_dim, int64_t num_heads) {
  if (embed_dim <= 0 || num_heads <= 0 || embed_dim % num_heads != 0)
    fail("MultiHeadAttention: embed_dim %d does not split into %d heads", embed_dim, num_heads);
  return embed_dim;
}
}  // namespace

MultiHeadAttention::MultiHeadAttention(int64_t embed_dim, int64_t num_heads,
                                       MultiHeadAttentionOpts opts)
    : in_proj_weight(
          Tensor::glorot_uniform({3 * checked_embed_dim(embed_dim, num_heads), embed_dim})
              .contiguous()
              .realize()),
      out_proj(embed_dim, embed_dim, opts.bias),
      embed_dim_(embed_dim),
      heads_(num_heads),
      o_(opts) {
  register_parameter("in_proj_weight", &in_proj_weight);
  if (opts.bias) {
    in_proj_bias = state_tensor({3 * embed_dim}, 0);
    register_parameter("in_proj_bias", &*in_proj_bias);
    out_proj.bias->assign(Tensor::zeros({embed_dim})).realize();  // PyTorch zeroes it
  }
  register_module("out_proj", &out_proj);
}

std::vector<Tensor> MultiHeadAttention::project(const Tensor& query, const Tensor& key,
                                                const Tensor& value) const {
  std::vector<Tensor> out;
  if (query.uop() == key.uop() && key.uop() == value.uop()) {  // self-attention: one matmul
    out = query.linear(in_proj_weight.T(), in_proj_bias).chunk(3, -1);
  } else {
    const Tensor* inputs[] = {&query, &key, &value};
    for (int64_t i = 0; i < 3; i++) {
      std::pair<int64_t, int64_t> rows = {i * embed_dim_, (i + 1) * embed_dim_};
      std::optional<Tensor> b;
      if (in_proj_bias) b = in_proj_bias->shrink({rows});
      out.push_back(inputs[i]->linear(in_proj_weight.shrink({rows, {0, embed_dim_}}).T(), b));
    }
  }
  for (Tensor& t : out) t = t.reshape({t.shape()[0], t.shape()[1], heads_, -1});
  return out;
}

Tensor MultiHeadAttention::merge_heads(const Tensor& t) {
  return out_proj(t.transpose(1, 2).reshape({t.shape()[0], t.shape()[2], embed_dim_}));
}

Tensor MultiHeadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                   const std::optional<Tensor>& attn_mask, bool is_causal) {
  auto is_seq = [&](const Tensor& t) {
    return t.ndim() == 3 && t.shape()[0] == query.shape()[0] && t.shape()[2] == embed_dim_;
  };
  if (!is_seq(query) || !is_seq(key) || key.shape() != value.shape())
    fail(
        "MultiHeadAttention: query %s, key %s and value %s must be (batch, length, %d), with one "
        "batch size, and key and value of one shape",
        fmt_shape(query.shape()), fmt_shape(key.shape()), fmt_shape(value.shape()), embed_dim_);
  std::vector<Tensor> qkv = project(query, key, value);
  Tensor out = qkv[0].transpose(1, 2).scaled_dot_product_attention(
      qkv[1].transpose(1, 2), qkv[2].transpose(1, 2), attn_mask,
      {.dropout_p = o_.dropout, .is_causal = is_causal, .enable_gqa = false});
  return merge_heads(out);
}

Tensor MultiHeadAttention::forward(const Tensor& x, int64_t start_pos) {
  if (o_.max_context <= 0)
    fail("MultiHeadAttention: forward with start_pos needs a KV cache (max_context > 0)");
  if (x.ndim() != 3 || x.shape()[1] == 0 || x.shape()[2] != embed_dim_)
    fail("MultiHeadAttention: input of shape %s is not (batch, length >= 1, %d)",
         fmt_shape(x.shape()), embed_dim_);
  int64_t batch = x.shape()[0], len = x.shape()[1];
  if (start_pos < 0 || start_pos + len > o_.max_context)
    fail("MultiHeadAttention: positions %d .. %d do not fit the KV cache of %d", start_pos,
         start_pos + len - 1, o_.max_context);
  std::vector<Tensor> qkv = project(x, x, x);  // (B, T, heads, head_dim)
  bool fits = cache_fits(batch, qkv[1].dtype());
  if (start_pos == 0 && !fits) {
    allocate_cache(batch, qkv[1].dtype());
  } else if (!fits) {
    fail("MultiHeadAttention: start_pos %d continues no cached sequence of batch %d: start at 0",
         start_pos, batch);
  } else if (start_pos > cached_) {
    fail("MultiHeadAttention: start_pos %d skips positions: the KV cache holds %d", start_pos,
         cached_);
  }
  // Written in place (realized now, so the next step reads a buffer, not a growing graph),
  // through a view rather than setitem: outputs of earlier steps may still be unrealized, and
  // they read only positions below their own end (past() below), which this write leaves alone.
  auto rows = [&](const Tensor& cache) {
    tc::Shape s = cache.shape();
    std::vector<std::pair<int64_t, int64_t>> r;
    for (size_t d = 0; d < s.size(); d++)
      r.push_back(d == 2 ? std::pair{start_pos, start_pos + len}
                         : std::pair<int64_t, int64_t>{0, s[d]});
    return cache.shrink(r);
  };
  rows(*cache_k_).assign(qkv[1].transpose(1, 2));
  rows(*cache_v_).assign(qkv[2].transpose(1, 2));
  realize_all({*cache_k_, *cache_v_});
  cached_ = start_pos + len;
  auto past = [&](const Tensor& cache) {  // positions 0 .. cached_ - 1 as (B, heads, S, head_dim)
    return cache.shrink({{0, batch}, {0, heads_}, {0, cached_}, {0, embed_dim_ / heads_}});
  };
  std::optional<Tensor> mask;  // query i (position start_pos + i) sees keys 0 .. start_pos + i
  if (len > 1) mask = Tensor::full({len, cached_}, true, dtypes::bool_).tril(start_pos);
  Tensor out = qkv[0].transpose(1, 2).scaled_dot_product_attention(
      past(*cache_k_), past(*cache_v_), mask,
      {.dropout_p = o_.dropout, .is_causal = false, .enable_gqa = false});
  return merge_heads(out);
}

Tensor MultiHeadAttention::decode(const Tensor& x, const Tensor& positions) {
  if (o_.max_context <= 0) fail("MultiHeadAttention: decode needs a KV cache (max_context > 0)");
  if (x.ndim() != 3 || x.shape()[1] != 1 || x.shape()[2] != embed_dim_)
    fail("MultiHeadAttention: decode takes one token per row (batch, 1, %d), got %s", embed_dim_,
         fmt_shape(x.shape()));
  int64_t batch = x.shape()[0], context = o_.max_context;
  if (positions.shape() != Shape{batch} || !dtypes::is_int(positions.dtype()))
    fail("MultiHeadAttention: decode positions must be (%d,) integers, got %s %s", batch,
         fmt_shape(positions.shape()), positions.dtype().name());
  std::vector<Tensor> qkv = project(x, x, x);  // (B, 1, heads, head_dim)
  if (!cache_fits(batch, qkv[1].dtype())) allocate_cache(batch, qkv[1].dtype());
  cached_ = context;  // every slot may hold a value now
  return merge_heads(attend_cached(*cache_k_, *cache_v_, qkv[0], qkv[1], qkv[2], positions));
}

bool MultiHeadAttention::cache_fits(int64_t batch, DType dtype) const {
  return cache_k_ && cache_k_->shape()[0] == batch && cache_k_->dtype() == dtype;
}

void MultiHeadAttention::allocate_cache(int64_t batch, DType dtype) {
  Shape shape = {batch, heads_, o_.max_context, embed_dim_ / heads_};  // nn/kv_cache.h's layout
  cache_k_ = Tensor::zeros(shape, dtype).contiguous().realize();
  cache_v_ = Tensor::zeros(shape, dtype).contiguous().realize();
  cached_ = 0;
}

TransformerBlock::TransformerBlock(int64_t dim, int64_t heads, int64_t max_context)
    : ln1({dim}),
      attn(dim, heads, {.bias = true, .dropout = 0.0, .max_context = max_context}),
      ln2({dim}) {
  mlp.add<Linear>(dim, 4 * dim);
  mlp.add([](const Tensor& x) { return x.gelu(); });
  mlp.add<Linear>(4 * dim, dim);
  register_module("ln1", &ln1);
  register_module("attn", &attn);
  register_module("ln2", &ln2);
  register_module("mlp", &mlp);
}

Tensor TransformerBlock::forward(const Tensor& x) {
  Tensor h = ln1(x);
  Tensor y = x + attn.forward(h, h, h, std::nullopt, /*is_causal=*/true);
  return y + mlp(ln2(y));
}

Tensor TransformerBlock::forward(const Tensor& x, int64_t start_pos) {
  Tensor y = x + attn.forward(ln1(x), start_pos);
  // Realized: the next block's cache write would compute it, and its output compute it again.
  return (y + mlp(ln2(y))).realize();
}

Tensor TransformerBlock::decode(const Tensor& x, const Tensor& positions) {
  Tensor y = x + attn.decode(ln1(x), positions);
  return (y + mlp(ln2(y))).realize();  // as forward(x, start_pos)
}

namespace {
const GPTConfig& checked(const GPTConfig& c) {
  if (c.vocab <= 0 || c.context <= 0 || c.layers < 0 || c.width <= 0 || c.heads <= 0)
    fail("GPT: config vocab %d, context %d, layers %d, width %d, heads %d must be positive",
         c.vocab, c.context, c.layers, c.width, c.heads);
  return c;
}
}  // namespace

GPT::GPT(GPTConfig config)
    : wte(checked(config).vocab, config.width),
      wpe(config.context, config.width),
      ln_f({config.width}),
      lm_head(config.width, config.vocab, /*bias=*/false),
      c_(config) {
  for (int64_t i = 0; i < config.layers; i++)
    block_list_.push_back(
        &blocks.add<TransformerBlock>(config.width, config.heads, config.context));
  register_module("wte", &wte);
  register_module("wpe", &wpe);
  register_module("blocks", &blocks);
  register_module("ln_f", &ln_f);
  register_module("lm_head", &lm_head);
}

Tensor GPT::embed(const Tensor& tokens, int64_t start_pos) {
  if (tokens.ndim() != 2 || tokens.shape()[1] == 0)
    fail("GPT: tokens of shape %s are not (batch, length)", fmt_shape(tokens.shape()));
  int64_t len = tokens.shape()[1];
  if (start_pos < 0 || start_pos + len > c_.context)
    fail("GPT: positions %d .. %d do not fit the context of %d", start_pos, start_pos + len - 1,
         c_.context);
  Tensor pos = Tensor::arange(static_cast<double>(start_pos), static_cast<double>(start_pos + len),
                              1, dtypes::int32);
  return wte(tokens) + wpe(pos);
}

Tensor GPT::forward(const Tensor& tokens) { return lm_head(ln_f(blocks(embed(tokens, 0)))); }

Tensor GPT::forward(const Tensor& tokens, int64_t start_pos) {
  Tensor x = embed(tokens, start_pos);
  for (TransformerBlock* b : block_list_) x = b->forward(x, start_pos);
  return lm_head(ln_f(x));
}

Tensor GPT::decode(const Tensor& tokens, const Tensor& positions) {
  if (tokens.ndim() != 2 || tokens.shape()[1] != 1)
    fail("GPT: decode takes one token per row (batch, 1), got %s", fmt_shape(tokens.shape()));
  int64_t batch = tokens.shape()[0];
  if (positions.shape() != Shape{batch})
    fail("GPT: decode positions must be (%d,), got %s", batch, fmt_shape(positions.shape()));
  Tensor x = wte(tokens) + wpe(positions.reshape({batch, 1}));
  for (TransformerBlock* b : block_list_) x = b->decode(x, positions);
  return lm_head(ln_f(x));
}

}  // namespace tc::nn
