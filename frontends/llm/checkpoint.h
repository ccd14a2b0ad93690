// Language models from files made elsewhere: a GGUF file (llama.cpp's; a split set by its first
// file) or a Hugging Face folder (config.json, model*.safetensors with its index, tokenizer.json).
// Both become one nn::LanguageModel configuration and its weights by llama.cpp's names, plus the
// tokenizer and chat template the files carry. GGUF weights stay in their block format: each is
// its raw bytes and a lazy dequantization (frontends/llm/quant.h) that fuses into the matmul
// reading it; a Q4_0 or Q8_0 matrix is read once into nn::QuantizedWeight's layout (as many bits
// a weight), which its products multiply as llama.cpp does, and its values are decoded from that.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "frontends/llm/tokenizer.h"
#include "nn/language_model.h"

namespace tc::llm {

// A model's configuration and weights as read, before the model is built.
struct Checkpoint {
  nn::LanguageModelConfig config;
  std::map<std::string, Tensor> weights;  // by llama.cpp's names (LanguageModel::weight_shapes)
  std::map<std::string, nn::QuantizedWeight> quantized;  // matrices of block types, repacked
  std::unique_ptr<Tokenizer> tokenizer;                  // with the model's chat template text
  std::string format;      // what was read, for messages: "GGUF (f32, q4_0)" ...
  int64_t file_bytes = 0;  // the size of the files read
};

struct LoadOptions {
  int64_t max_context = 4096;  // the KV cache's positions: the model's context, cut to this
  std::string quantize;        // "" or q8_0, q4_0, q4_k, q6_k: float weights quantized on load
};

// The Hugging Face folder `dir`: its config.json and safetensors (one file or an index of shards).
Checkpoint read_hf_folder(const std::string& dir, const LoadOptions& options);
// The GGUF file `path` (the first file of a split set).
Checkpoint read_gguf_file(const std::string& path, const LoadOptions& options);

// Drops what the configuration does not read: a tied output projection, learned positions past
// the context. Both readers end with it.
void fit_to_config(Checkpoint& ck);

struct LoadedModel {
  std::unique_ptr<nn::LanguageModel> model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::string format;
  int64_t file_bytes = 0;
};

// A GGUF file or a Hugging Face folder at `path`, with its tokenizer; errors name the file and
// the key or tensor that is wrong.
LoadedModel load_language_model(const std::string& path, const LoadOptions& options = {});

}  // namespace tc::llm
