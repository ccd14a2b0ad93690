#include "frontends/llm/checkpoint.h"

#include <filesystem>

#include "frontends/llm/gguf.h"
#include "frontends/llm/quant.h"
#include "tinycore/error.h"

namespace tc::llm {

void fit_to_config(Checkpoint& ck) {
  const nn::LanguageModelConfig& c = ck.config;
  if (c.tied_embeddings) ck.weights.erase("output.weight"), ck.quantized.erase("output.weight");
  // learned positions beyond the context the cache holds are never read
  if (auto pos = ck.weights.find("position_embd.weight");
      pos != ck.weights.end() && pos->second.ndim() == 2 && pos->second.shape()[0] > c.context)
    pos->second = pos->second.shrink({{0, c.context}, {0, pos->second.shape()[1]}});
}

namespace {

// `quantize` (q8_0, q4_0, q4_k or q6_k) applied to every projection whose rows split into blocks
// of 32: the float values are read once, quantized (gguf::quantize), and kept as blocks with a
// lazy dequantization, as a GGUF file of that type would be. Rows that do not fill the K
// formats' blocks of 256 take q8_0 instead, as llama.cpp falls back to a 32-block type.
void quantize_weights(Checkpoint& ck, const std::string& quantize) {
  if (quantize.empty()) return;
  const std::map<std::string, uint32_t> types{
      {"q8_0", gguf::Q8_0}, {"q4_0", gguf::Q4_0}, {"q4_k", gguf::Q4_K}, {"q6_k", gguf::Q6_K}};
  auto it = types.find(quantize);
  if (it == types.end())
    fail("--quantize: '%s' is not a type this quantizes (q8_0, q4_0, q4_k, q6_k)", quantize);
  const int64_t block = gguf::type_info(it->second).block_elems;
  int quantized = 0, fallbacks = 0;
  for (auto& [name, w] : ck.weights) {
    if (w.ndim() < 2 || w.shape().back() % 32 != 0) continue;  // norms, biases stay as they are
    const bool fits = w.shape().back() % block == 0;
    const uint32_t type = fits ? it->second : gguf::Q8_0;
    fallbacks += !fits;
    std::vector<float> values = w.cast(dtypes::float32).contiguous().data<float>();
    std::vector<uint8_t> blocks =
        gguf::quantize(values.data(), static_cast<int64_t>(values.size()), type);
    Tensor raw =
        Tensor::from_blob(blocks.data(), {static_cast<int64_t>(blocks.size())}, dtypes::uint8);
    if (w.ndim() == 2) {
      auto q = gguf::packed(raw, type, w.shape()[0], w.shape()[1]).realized();
      ck.quantized.insert_or_assign(name, q);
      w = q.dequantized();
    } else {
      w = gguf::dequantize(raw.realize(), type, w.shape());
    }
    quantized++;
  }
  ck.format += " quantized to " + quantize + " (" + std::to_string(quantized) + " tensors" +
               (fallbacks ? ", " + std::to_string(fallbacks) + " of them q8_0: rows short of 256"
                          : std::string()) +
               ")";
}

}  // namespace

LoadedModel load_language_model(const std::string& path, const LoadOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail("--model %s: no such file or folder", path);
  Checkpoint ck = std::filesystem::is_directory(path) ? read_hf_folder(path, options)
                                                      : read_gguf_file(path, options);
  quantize_weights(ck, options.quantize);
  LoadedModel out{.model = std::make_unique<nn::LanguageModel>(ck.config),
                  .tokenizer = std::move(ck.tokenizer),
                  .format = ck.format,
                  .file_bytes = ck.file_bytes};
  try {
    out.model->set_weights(std::move(ck.weights), std::move(ck.quantized));
  } catch (const Error& e) {
    fail("--model %s: %s", path, e.what());
  }
  return out;
}

}  // namespace tc::llm
