// Hugging Face folders: config.json picks the family and its sizes (transformers' field names),
// the safetensors hold the weights by transformers' names, renamed here to llama.cpp's.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "absl/strings/numbers.h"
#include "frontends/llm/checkpoint.h"
#include "nn/state.h"
#include "tinycore/error.h"

namespace tc::llm {
namespace {

using json = nlohmann::json;

json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) fail("%s: cannot be opened", path.string());
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    fail("%s: is not valid JSON (%s)", path.string(), e.what());
  }
}

// config[key] as a number, or `fallback` when absent or null (a negative fallback: required).
double number(const json& config, const char* key, double fallback = -1) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) {
    if (fallback < 0) fail("config.json: '%s' is missing", key);
    return fallback;
  }
  if (!it->is_number()) fail("config.json: '%s' is not a number", key);
  return it->get<double>();
}
int64_t integer(const json& config, const char* key, double fallback = -1) {
  double v = number(config, key, fallback);
  if (v != std::trunc(v) || std::abs(v) > 9e15) fail("config.json: '%s' is not an integer", key);
  return static_cast<int64_t>(v);
}

// Llama 3's rope scaling, as transformers' _compute_llama3_parameters: long wavelengths are
// divided by `factor`, short ones kept, the band between blended.
std::vector<double> llama3_divisors(const json& s, double theta, int64_t head_dim) {
  double factor = number(s, "factor"), low = number(s, "low_freq_factor"),
         high = number(s, "high_freq_factor"),
         old_context = number(s, "original_max_position_embeddings");
  std::vector<double> out;
  for (int64_t i = 0; i < head_dim / 2; i++) {
    float freq = 1.0f / std::pow(static_cast<float>(theta),
                                 static_cast<float>(2 * i) / static_cast<float>(head_dim));
    double wavelen = 2 * M_PI / freq, scaled = freq;
    if (wavelen > old_context / low) {
      scaled = freq / factor;
    } else if (wavelen >= old_context / high) {
      double smooth = (old_context / wavelen - low) / (high - low);
      scaled = (1 - smooth) * freq / factor + smooth * freq;
    }
    out.push_back(freq / scaled);
  }
  return out;
}

nn::LanguageModelConfig config_of(const json& j, const LoadOptions& options) {
  std::string type = j.value("model_type", "");
  nn::LanguageModelConfig c;
  c.arch = type;
  if (type == "gpt2") {
    c.dim = integer(j, "n_embd");
    c.layers = integer(j, "n_layer");
    c.heads = c.kv_heads = integer(j, "n_head");
    c.context = integer(j, "n_positions");
    c.ffn = integer(j, "n_inner", 4.0 * static_cast<double>(c.dim));
    c.norm_eps = number(j, "layer_norm_epsilon", 1e-5);
    c.layer_norm = c.gelu_mlp = c.learned_positions = c.qkv_bias = c.other_bias = true;
    c.tied_embeddings = true;
  } else if (type == "llama" || type == "mistral" || type == "qwen2" || type == "qwen3" ||
             type == "qwen3_moe") {
    c.dim = integer(j, "hidden_size");
    c.layers = integer(j, "num_hidden_layers");
    c.heads = integer(j, "num_attention_heads");
    c.kv_heads = integer(j, "num_key_value_heads", static_cast<double>(c.heads));
    c.context = integer(j, "max_position_embeddings");
    c.ffn = integer(j, "intermediate_size");
    c.norm_eps = number(j, "rms_norm_eps", 1e-6);
    c.rope_theta = number(j, "rope_theta", 10000);
    c.tied_embeddings = j.value("tie_word_embeddings", false);
    c.qkv_bias = type == "qwen2";
    c.qk_norm = type.rfind("qwen3", 0) == 0;
    if (type == "qwen3_moe") {
      if (integer(j, "decoder_sparse_step", 1) != 1 ||
          !j.value("mlp_only_layers", json::array()).empty())
        fail(
            "config.json: qwen3_moe with dense layers (decoder_sparse_step, mlp_only_layers) is "
            "not supported");
      c.experts = integer(j, "num_experts");
      c.experts_used = integer(j, "num_experts_per_tok");
      c.ffn = integer(j, "moe_intermediate_size");
      c.normalize_expert_weights = j.value("norm_topk_prob", true);
    }
  } else {
    fail(
        "config.json: model_type '%s' is not supported (llama, mistral, qwen2, qwen3, "
        "qwen3_moe, gpt2)",
        type);
  }
  c.vocab = integer(j, "vocab_size");
  c.head_dim = integer(j, "head_dim", c.heads > 0 ? static_cast<double>(c.dim / c.heads) : 0);
  if (auto s = j.find("rope_scaling"); s != j.end() && !s->is_null()) {
    std::string kind = s->value("rope_type", s->value("type", ""));
    if (kind == "llama3") {
      c.rope_freq_divisors = llama3_divisors(*s, c.rope_theta, c.head_dim);
    } else if (kind == "linear") {
      c.rope_freq_divisors.assign(static_cast<size_t>(c.head_dim / 2), number(*s, "factor"));
    } else if (kind != "default") {
      fail("config.json: rope_scaling type '%s' is not supported (llama3, linear)", kind);
    }
  }
  if (options.max_context > 0) c.context = std::min(c.context, options.max_context);
  return c;
}

// transformers' name of a layer's tensor -> llama.cpp's (without "blk.N." and the kind)
const std::map<std::string, std::string> kLayerNames = {
    {"input_layernorm", "attn_norm"},
    {"self_attn.q_proj", "attn_q"},
    {"self_attn.k_proj", "attn_k"},
    {"self_attn.v_proj", "attn_v"},
    {"self_attn.o_proj", "attn_output"},
    {"self_attn.q_norm", "attn_q_norm"},
    {"self_attn.k_norm", "attn_k_norm"},
    {"post_attention_layernorm", "ffn_norm"},
    {"mlp.gate_proj", "ffn_gate"},
    {"mlp.up_proj", "ffn_up"},
    {"mlp.down_proj", "ffn_down"},
    {"mlp.gate", "ffn_gate_inp"},
    {"ln_1", "attn_norm"},
    {"attn.c_attn", "attn_qkv"},
    {"attn.c_proj", "attn_output"},
    {"ln_2", "ffn_norm"},
    {"mlp.c_fc", "ffn_up"},
    {"mlp.c_proj", "ffn_down"},
};
const std::map<std::string, std::string> kGlobalNames = {
    {"model.embed_tokens", "token_embd"},
    {"model.norm", "output_norm"},
    {"lm_head", "output"},
    {"wte", "token_embd"},
    {"wpe", "position_embd"},
    {"ln_f", "output_norm"},
};
const std::map<std::string, std::string> kExpertNames = {
    {"gate_proj", "ffn_gate_exps"}, {"up_proj", "ffn_up_exps"}, {"down_proj", "ffn_down_exps"}};

// Splits "<base>.<kind>" (kind "weight" or "bias").
std::pair<std::string, std::string> split_kind(const std::string& name) {
  size_t dot = name.rfind('.');
  if (dot == std::string::npos) return {name, ""};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

// Renames transformers' tensors to llama.cpp's: GPT-2's Conv1D weights (in, out) transposed, its
// fused q/k/v split, the experts of a layer stacked.
std::map<std::string, Tensor> rename(const nn::StateDict& hf, const nn::LanguageModelConfig& c) {
  std::map<std::string, Tensor> out;
  std::map<std::string, std::map<int64_t, Tensor>> experts;  // "blk.N.ffn_up_exps" -> by index
  std::vector<std::string> unknown;
  for (const auto& [hf_name, tensor] : hf) {
    std::string name = hf_name;
    Tensor t = tensor;
    if (name.rfind("transformer.", 0) == 0) name = name.substr(12);  // GPT2LMHeadModel's prefix
    auto [base, kind] = split_kind(name);
    if (auto g = kGlobalNames.find(base); g != kGlobalNames.end()) {
      out.emplace(g->second + "." + kind, t);
      continue;
    }
    std::string layer_prefix = base.rfind("model.layers.", 0) == 0 ? "model.layers."
                               : base.rfind("h.", 0) == 0          ? "h."
                                                                   : "";
    size_t dot = layer_prefix.empty() ? std::string::npos : base.find('.', layer_prefix.size());
    if (dot == std::string::npos) {
      unknown.push_back(name);
      continue;
    }
    std::string layer = base.substr(layer_prefix.size(), dot - layer_prefix.size());
    std::string rest = base.substr(dot + 1), blk = "blk." + layer + ".";
    if (rest == "attn.bias" || rest == "attn.masked_bias" || kind == "inv_freq") continue;
    if (rest.rfind("mlp.experts.", 0) == 0) {  // mlp.experts.<e>.<gate_proj|up_proj|down_proj>
      size_t e_end = rest.find('.', 12);
      auto which = e_end == std::string::npos ? kExpertNames.end()
                                              : kExpertNames.find(rest.substr(e_end + 1));
      if (which == kExpertNames.end() || kind != "weight") {
        unknown.push_back(name);
        continue;
      }
      int64_t e = -1;
      if (!absl::SimpleAtoi(rest.substr(12, e_end - 12), &e) || e < 0)
        fail("safetensors: tensor %s does not number its expert", name);
      experts[blk + which->second].insert_or_assign(e, t);
      continue;
    }
    auto l = kLayerNames.find(rest);
    if (l == kLayerNames.end()) {
      unknown.push_back(name);
      continue;
    }
    bool conv1d = c.arch == "gpt2" && kind == "weight" && t.ndim() == 2;
    if (conv1d) t = t.T();
    if (l->second != "attn_qkv") {
      out.emplace(blk + l->second + "." + kind, t);
      continue;
    }
    for (int64_t i = 0; i < 3; i++) {  // rows q, k, v
      const char* part[] = {"attn_q", "attn_k", "attn_v"};
      std::vector<std::pair<int64_t, int64_t>> rows = {{i * c.dim, (i + 1) * c.dim}};
      if (t.ndim() == 2) rows.push_back({0, c.dim});
      out.emplace(blk + part[i] + "." + kind, t.shrink(rows));
    }
  }
  if (!unknown.empty())
    fail("safetensors: %d tensors this loader does not know, e.g. '%s'", unknown.size(),
         unknown[0]);
  for (auto& [name, by_index] : experts) {
    std::vector<Tensor> stack;
    for (auto& [e, t] : by_index) {
      if (e != static_cast<int64_t>(stack.size()))
        fail("safetensors: expert %d of %s is missing", stack.size(), name);
      stack.push_back(t);
    }
    out.emplace(name + ".weight", Tensor::stack(stack, 0));
  }
  return out;
}

}  // namespace

Checkpoint read_hf_folder(const std::string& dir, const LoadOptions& options) {
  std::filesystem::path root(dir);
  Checkpoint ck;
  ck.config = config_of(read_json(root / "config.json"), options);
  std::set<std::string> files;  // the safetensors shards, from the index when there is one
  const bool indexed = std::filesystem::exists(root / "model.safetensors.index.json");
  if (indexed) {
    json index = read_json(root / "model.safetensors.index.json");
    if (!index.contains("weight_map") || !index["weight_map"].is_object())
      fail("%s: has no weight_map object", (root / "model.safetensors.index.json").string());
    for (auto& [name, file] : index["weight_map"].items()) {
      std::string f = file.is_string() ? file.get<std::string>() : "";
      if (f.empty() || f.find('/') != std::string::npos || f == "..")
        fail("model.safetensors.index.json: tensor %s names file '%s', not a file of the folder",
             name, file.dump());
      files.insert(f);
    }
  } else {
    files.insert("model.safetensors");
  }
  nn::StateDict all;
  for (const std::string& f : files) {
    std::filesystem::path p = root / f;
    if (!std::filesystem::is_regular_file(p))
      fail("%s: has no %s (%s)", dir, f,
           indexed ? "a shard model.safetensors.index.json names" : "nor an index of shards");
    ck.file_bytes += static_cast<int64_t>(std::filesystem::file_size(p));
    for (auto& [name, t] : nn::safe_load(p.string()))
      if (!all.emplace(name, t).second) fail("%s: tensor %s is in two shards", p.string(), name);
  }
  ck.weights = rename(all, ck.config);
  fit_to_config(ck);
  std::filesystem::path tokens = root / "tokenizer.json", config = root / "tokenizer_config.json";
  if (std::filesystem::exists(tokens))
    ck.tokenizer = std::make_unique<Tokenizer>(Tokenizer::from_hf_files(
        tokens.string(), std::filesystem::exists(config) ? config.string() : ""));
  ck.format = "Hugging Face safetensors (" + std::to_string(files.size()) + " files)";
  return ck;
}

}  // namespace tc::llm
