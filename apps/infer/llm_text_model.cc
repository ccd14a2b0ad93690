#include "apps/infer/llm_text_model.h"

#include <algorithm>
#include <filesystem>

#include "tinycore/error.h"
#include "tinycore/helpers.h"

namespace tc::infer {

bool is_language_model(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return std::filesystem::exists(std::filesystem::path(path) / "config.json", ec);
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".gguf") == 0;
}

LlmTextModel::LlmTextModel(const std::string& path, const llm::LoadOptions& options,
                           const std::string& chat_template)
    : model_(llm::load_language_model(path, options)), chat_override_(chat_template) {
  if (!model_.tokenizer) fail("--model %s: has no tokenizer (tokenizer.json or GGUF keys)", path);
  if (!chat_override_.empty()) llm::chat_family_from_name(chat_override_);  // a bad name fails now
  if (auto eos = model_.tokenizer->eos()) ends_.push_back(*eos);
  // a chat model ends its turn with its family's token, which may differ from EOS
  for (const char* end : {"<|eot_id|>", "<|im_end|>", "<|end_of_text|>", "</s>", "<|endoftext|>"})
    if (auto id = model_.tokenizer->find(end); id && model_.tokenizer->is_special(*id))
      ends_.push_back(*id);
}

std::vector<int32_t> LlmTextModel::encode(std::string_view text) const {
  return model_.tokenizer->encode(text, model_.tokenizer->add_bos());
}

std::string LlmTextModel::token_text(int32_t token) const {
  return model_.tokenizer->is_special(token) ? "" : model_.tokenizer->decode_one(token);
}

bool LlmTextModel::ends_text(int32_t token) const {
  return std::find(ends_.begin(), ends_.end(), token) != ends_.end();
}

Tensor LlmTextModel::decode(const Tensor& tokens, const Tensor& positions) {
  return model_.model->decode(tokens, positions);
}

// The prompt in chunks of TC_PREFILL_CHUNK tokens (512; llama.cpp's ubatch: a chunk's attention
// reads the slots before it, so memory and work grow with the chunk, not the prompt's square), the
// last padded to a bucket (powers of two from 16) so prompts of nearby lengths share compiled
// kernels. Causal attention keeps the padding out of the prompt's positions, and the cache slots it
// writes lie beyond the prompt: each decode step writes its slot before it reads it, and never
// reads past it.
std::vector<float> LlmTextModel::prefill(const std::vector<int32_t>& prompt, int64_t row) {
  const int64_t len = static_cast<int64_t>(prompt.size()),
                size = std::max(1, getenv_int("TC_PREFILL_CHUNK", 512));
  int64_t start = 0;
  for (; len - start > size; start += size) {
    std::vector<int32_t> chunk(prompt.begin() + start, prompt.begin() + start + size);
    // the logits are not read: the cache writes are what this chunk is for
    model_.model->prefill(Tensor::from_vector(chunk, Shape{1, size}), row, -1, start);
  }
  int64_t rest = len - start, bucket = 16;
  while (bucket < rest) bucket *= 2;
  bucket = std::min(bucket, context() - start);
  std::vector<int32_t> padded(prompt.begin() + start, prompt.end());
  padded.resize(static_cast<size_t>(bucket), 0);
  return model_.model->prefill(Tensor::from_vector(padded, Shape{1, bucket}), row, rest - 1, start)
      .data<float>();
}

llm::ChatFamily LlmTextModel::chat_family() const {
  if (!chat_override_.empty()) return llm::chat_family_from_name(chat_override_);
  return llm::detect_chat_family(model_.tokenizer->chat_template());
}

std::vector<int32_t> LlmTextModel::encode_chat(
    const std::vector<llm::ChatMessage>& messages) const {
  // the rendered text starts with the family's BOS text, so no BOS is added
  return model_.tokenizer->encode(llm::render_chat(chat_family(), messages, true), false);
}

}  // namespace tc::infer
