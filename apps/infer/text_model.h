// What the Generator decodes with: a language model with a KV cache of batch rows, and the
// tokenizer that turns text into its tokens and back. Two kinds: the GPT of a train run
// (run_text_model.cc) and a language model from a GGUF file or a Hugging Face folder
// (llm_text_model.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tinycore/tensor.h"

namespace tc::infer {

class TextModel {
 public:
  virtual ~TextModel() = default;
  virtual int64_t vocab() const = 0;    // the logits sampled from: the first vocab() of a row
  virtual int64_t context() const = 0;  // positions a sequence may use
  // Tokens of a prompt; throws tc::Error for text the tokenizer cannot take.
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  virtual std::string token_text(int32_t token) const = 0;  // its bytes (maybe part of a char)
  virtual bool ends_text(int32_t token) const = 0;          // an end-of-text token
  // A KV cache of `rows` sequences, replacing any other.
  virtual void allocate(int64_t rows) = 0;
  // One token per row, tokens (rows, 1) at positions (rows,): logits (rows, 1, model vocab).
  virtual Tensor decode(const Tensor& tokens, const Tensor& positions) = 0;
  // The logits (model vocab) of the prompt's last position after writing the whole prompt into
  // cache row `row` in one pass; empty when the model cannot, and the prompt is fed one token a
  // decode step instead.
  virtual std::vector<float> prefill(const std::vector<int32_t>& /*prompt*/, int64_t /*row*/) {
    return {};
  }
};

// The GPT of a train run's folder (apps/infer/run_files.h).
std::unique_ptr<TextModel> load_run_text_model(const std::string& run_dir);

}  // namespace tc::infer
