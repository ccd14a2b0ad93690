// GGUF files: the metadata's "<arch>.*" keys give the configuration; tensors keep llama.cpp's
// names and their block format (a raw byte buffer and a lazy dequantization), the matrices of
// block types repacked (nn::QuantizedWeight) with their values decoded from that.
#include <functional>
#include <set>

#include "absl/strings/str_join.h"
#include "frontends/llm/checkpoint.h"
#include "frontends/llm/gguf.h"
#include "frontends/llm/quant.h"
#include "tinycore/error.h"

namespace tc::llm {
namespace {

struct Family {
  const char* arch;
  bool gpt2_style;   // LayerNorm, GELU MLP, learned positions, biases (GPT-2)
  bool permuted_qk;  // llama.cpp's converter permuted Q and K for its interleaved RoPE
  bool qkv_bias, qk_norm;
};
constexpr Family kFamilies[] = {
    {"llama", false, true, false, false}, {"qwen2", false, false, true, false},
    {"qwen3", false, false, false, true}, {"qwen3moe", false, false, false, true},
    {"gpt2", true, false, true, false},
};

const Family& family_of(const std::string& arch) {
  for (const Family& f : kFamilies)
    if (arch == f.arch) return f;
  fail("GGUF: general.architecture '%s' is not supported (llama, qwen2, qwen3, qwen3moe, gpt2)",
       arch);
}

// The tensor's values in PyTorch's layout (its GGUF dims reversed), read in place from the file's
// mapping (copied where the device or the file's alignment does not allow that): float types as
// they are (a size-changing bitcast of bytes would make every kernel that reads them slow), block
// types as raw bytes and a lazy dequantization.
Tensor tensor_of(const gguf::Model& m, const gguf::TensorInfo& t) {
  Shape shape(t.dims.rbegin(), t.dims.rend());
  const std::map<uint32_t, DType> floats = {
      {gguf::F32, dtypes::float32}, {gguf::F16, dtypes::float16}, {gguf::BF16, dtypes::bfloat16}};
  const uint8_t* bytes = m.data(t);  // checks t.file
  const std::shared_ptr<nn::MappedFile>& file = m.files[t.file];
  if (auto f = floats.find(t.type); f != floats.end())
    return Tensor::from_blob(bytes, shape, f->second, "", file);
  return Tensor::from_blob(bytes, {static_cast<int64_t>(t.bytes)}, dtypes::uint8, "", file);
}

using RowFn = std::function<Tensor(const Tensor&)>;
// `fn` applied to a weight's rows: a tensor's first axis, or both parts of a quantized form.
Tensor on_rows(const Tensor& t, const RowFn& fn) { return fn(t); }
nn::QuantizedWeight on_rows(const nn::QuantizedWeight& q, const RowFn& fn) {
  return q.map_rows(fn);
}

// Rows [lo, hi) of t, every other axis whole.
Tensor rows_of(const Tensor& t, int64_t lo, int64_t hi) {
  std::vector<std::pair<int64_t, int64_t>> keep = {{lo, hi}};
  for (int64_t i = 1; i < t.ndim(); i++) keep.push_back({0, t.shape()[i]});
  return t.shrink(keep);
}

// Undoes llama.cpp's permutation of Q or K rows (heads, 2, head_dim / 2) -> (heads, head_dim / 2,
// 2): the rows go back to the halves that RoPE's rotate_half form pairs.
Tensor unpermute(const Tensor& w, int64_t heads) {
  Shape s = w.shape();
  Shape split = {heads, s[0] / heads / 2, 2};
  split.insert(split.end(), s.begin() + 1, s.end());
  return w.reshape(split).transpose(1, 2).reshape(s);
}

// GPT-2's fused q/k/v rows, split; llama's permuted Q and K rows, put back: in the weights' float
// values and in their quantized forms alike.
template <typename Weights>
void split_and_unpermute(Weights& weights, const nn::LanguageModelConfig& c, bool permuted_qk) {
  for (int64_t i = 0; i < c.layers; i++) {
    std::string blk = "blk." + std::to_string(i) + ".";
    for (const char* kind : {"weight", "bias"}) {
      auto qkv = weights.find(blk + "attn_qkv." + kind);
      if (qkv == weights.end()) continue;
      auto t = qkv->second;
      weights.erase(qkv);
      const char* part[] = {"attn_q", "attn_k", "attn_v"};
      for (int64_t p = 0; p < 3; p++)
        weights.emplace(blk + part[p] + "." + kind, on_rows(t, [&](const Tensor& x) {
                          return rows_of(x, p * c.dim, (p + 1) * c.dim);
                        }));
    }
    if (!permuted_qk) continue;
    for (auto [name, heads] : {std::pair{"attn_q", c.heads}, {"attn_k", c.kv_heads}})
      for (const char* kind : {"weight", "bias"})
        if (auto it = weights.find(blk + name + "." + kind); it != weights.end())
          it->second = on_rows(it->second, [&](const Tensor& x) { return unpermute(x, heads); });
  }
}

// The tokenizer.ggml.* keys (and tokenizer.chat_template), when the file has a vocabulary.
std::unique_ptr<Tokenizer> tokenizer_of(const gguf::Metadata& md) {
  if (!md.has("tokenizer.ggml.tokens")) return nullptr;
  GgufVocab v;
  v.model = md.get_string("tokenizer.ggml.model");
  v.pre = md.get_string_or("tokenizer.ggml.pre", "default");
  v.tokens = md.get_strings("tokenizer.ggml.tokens");
  if (md.has("tokenizer.ggml.scores"))
    for (double s : md.get_floats("tokenizer.ggml.scores"))
      v.scores.push_back(static_cast<float>(s));
  if (md.has("tokenizer.ggml.token_type"))
    for (int64_t t : md.get_ints("tokenizer.ggml.token_type"))
      v.token_types.push_back(static_cast<int32_t>(t));
  if (md.has("tokenizer.ggml.merges")) v.merges = md.get_strings("tokenizer.ggml.merges");
  auto id = [&](const char* key) -> std::optional<int32_t> {
    if (!md.has(key)) return std::nullopt;
    int64_t i = md.get_int(key);
    if (i < 0 || i >= static_cast<int64_t>(v.tokens.size()))
      fail("GGUF: %s %d is not a token of the %d in tokenizer.ggml.tokens", key, i,
           v.tokens.size());
    return static_cast<int32_t>(i);
  };
  v.bos = id("tokenizer.ggml.bos_token_id");
  v.eos = id("tokenizer.ggml.eos_token_id");
  v.add_bos = md.get_bool_or("tokenizer.ggml.add_bos_token", v.model == "llama");
  v.chat_template = md.get_string_or("tokenizer.chat_template", "");
  return std::make_unique<Tokenizer>(Tokenizer::from_gguf(v));
}

}  // namespace

Checkpoint read_gguf_file(const std::string& path, const LoadOptions& options) {
  try {
    gguf::Model m = gguf::open(path);
    const gguf::Metadata& md = m.metadata;
    std::string arch = md.get_string("general.architecture");
    const Family& f = family_of(arch);
    auto key = [&](const char* k) { return arch + "." + k; };
    Checkpoint ck;
    nn::LanguageModelConfig& c = ck.config;
    c.arch = arch;
    c.dim = md.get_int(key("embedding_length"));
    c.layers = md.get_int(key("block_count"));
    c.heads = md.get_int(key("attention.head_count"));
    c.kv_heads = md.get_int_or(key("attention.head_count_kv"), c.heads);
    c.head_dim = md.get_int_or(key("attention.key_length"), c.heads > 0 ? c.dim / c.heads : 0);
    c.context = md.get_int(key("context_length"));
    if (options.max_context > 0) c.context = std::min(c.context, options.max_context);
    c.experts = md.get_int_or(key("expert_count"), 0);
    c.experts_used = md.get_int_or(key("expert_used_count"), 0);
    c.ffn = c.experts > 0 ? md.get_int_or(key("expert_feed_forward_length"),
                                          md.get_int_or(key("feed_forward_length"), 0))
                          : md.get_int(key("feed_forward_length"));
    c.vocab = m.tensor("token_embd.weight").dims.at(1);
    c.layer_norm = c.gelu_mlp = c.learned_positions = c.other_bias = f.gpt2_style;
    c.norm_eps = f.gpt2_style ? md.get_float(key("attention.layer_norm_epsilon"))
                              : md.get_float(key("attention.layer_norm_rms_epsilon"));
    c.rope_theta = md.get_float_or(key("rope.freq_base"), 10000);
    c.qkv_bias = f.qkv_bias || m.find("blk.0.attn_q.bias") != nullptr;
    c.qk_norm = f.qk_norm;
    c.tied_embeddings = m.find("output.weight") == nullptr;
    std::string scaling = md.get_string_or(key("rope.scaling.type"), "none");
    if (scaling == "linear") {
      c.rope_freq_divisors.assign(static_cast<size_t>(c.head_dim / 2),
                                  md.get_float(key("rope.scaling.factor")));
    } else if (scaling != "none") {
      fail("GGUF: %s '%s' is not supported (none, linear)", key("rope.scaling.type"), scaling);
    }
    std::set<std::string> types, packed;
    for (const gguf::TensorInfo& t : m.tensors) {
      ck.file_bytes += static_cast<int64_t>(t.bytes);
      types.insert(gguf::type_info(t.type).name);
      Tensor w = tensor_of(m, t);
      if (t.dims.size() == 2 && gguf::packs(t.type, m.data(t), t.bytes)) {  // a projection
        ck.quantized.emplace(t.name, gguf::packed(w, t.type, t.dims[1], t.dims[0]));
        packed.insert(t.name);
      }
      if (w.dtype() == dtypes::uint8)
        w = gguf::dequantize(w, t.type, Shape(t.dims.rbegin(), t.dims.rend()));
      if (t.name == "rope_freqs.weight") {  // Llama 3's scaling: a divisor per frequency
        std::vector<float> d = w.cast(dtypes::float32).data<float>();
        c.rope_freq_divisors.assign(d.begin(), d.end());
      } else {
        ck.weights.emplace(t.name, w);
      }
    }
    split_and_unpermute(ck.weights, c, f.permuted_qk);
    split_and_unpermute(ck.quantized, c, f.permuted_qk);
    // the quantized matrices read once, into their packed forms (their values are read from
    // those); then the file's pages of their blocks are let go
    for (auto& [name, q] : ck.quantized) q = q.realized(), ck.weights.at(name) = q.dequantized();
    for (const gguf::TensorInfo& t : m.tensors)
      if (packed.count(t.name)) m.files[t.file]->release(m.data(t), t.bytes);
    ck.format = "GGUF (" + absl::StrJoin(types, ", ") + ")";
    ck.tokenizer = tokenizer_of(md);
    fit_to_config(ck);
    return ck;
  } catch (const gguf::FormatError& e) {
    fail("%s: %s", path, e.what());
  }
}

}  // namespace tc::llm
