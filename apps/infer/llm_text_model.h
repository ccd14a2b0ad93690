// A language model from a GGUF file or a Hugging Face folder (frontends/llm) as a TextModel:
// its tokenizer, its end-of-text tokens (EOS and the chat family's end of turn), a prompt
// written in one prefill pass, and its chat template.
#pragma once

#include <string>
#include <vector>

#include "apps/infer/text_model.h"
#include "frontends/llm/chat_template.h"
#include "frontends/llm/checkpoint.h"

namespace tc::infer {

class LlmTextModel : public TextModel {
 public:
  // chat_template: a family name ("llama3", "chatml", "mistral") overriding the one detected
  // from the model's template text; empty: detect it (when a chat is asked for).
  LlmTextModel(const std::string& path, const llm::LoadOptions& options,
               const std::string& chat_template = "");

  int64_t vocab() const override { return model_.model->config().vocab; }
  int64_t context() const override { return model_.model->config().context; }
  std::vector<int32_t> encode(std::string_view text) const override;  // BOS first if the model's
  std::string token_text(int32_t token) const override;               // special tokens as no text
  bool ends_text(int32_t token) const override;
  void allocate(int64_t rows) override { model_.model->allocate(rows); }
  Tensor decode(const Tensor& tokens, const Tensor& positions) override;
  std::vector<float> prefill(const std::vector<int32_t>& prompt, int64_t row) override;

  // The tokens of a conversation in the model's chat format, the assistant's turn opened.
  std::vector<int32_t> encode_chat(const std::vector<llm::ChatMessage>& messages) const;
  const llm::LoadedModel& loaded() const { return model_; }
  llm::ChatFamily chat_family() const;  // the override, else detected (throws when unknown)

 private:
  llm::LoadedModel model_;
  std::string chat_override_;
  std::vector<int32_t> ends_;  // end-of-text tokens
};

// Whether --model names a language model (a .gguf file, or a folder with config.json) rather
// than an ONNX file.
bool is_language_model(const std::string& path);

}  // namespace tc::infer
