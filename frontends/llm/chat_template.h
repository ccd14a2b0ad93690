// Chat templates of three model families, written out instead of run as Jinja: each renders
// exactly what the family's official template produces (bos text included, so encode the result
// with add_bos = false).
//   Llama3:  <|begin_of_text|> then per message
//            <|start_header_id|>{role}<|end_header_id|>\n\n{content, trimmed}<|eot_id|>
//            and <|start_header_id|>assistant<|end_header_id|>\n\n to prompt a reply
//   ChatML:  <|im_start|>{role}\n{content}<|im_end|>\n per message (Qwen), then
//            <|im_start|>assistant\n (no default system prompt is added)
//   Mistral: <s>[INST] {user} [/INST]{assistant}</s>[INST] ... (v0.1); a leading system message
//            is folded into the first user turn as "{system}\n\n{user}"; roles must alternate
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tc::llm {

struct ChatMessage {
  std::string role, content;
};

enum class ChatFamily { Llama3, ChatML, Mistral };

const char* chat_family_name(ChatFamily family);  // "llama3" | "chatml" | "mistral"
// The family whose markers the model's Jinja template text contains; none is a tc::Error that
// suggests --chat-template.
ChatFamily detect_chat_family(std::string_view template_text);
// A --chat-template name; an unknown one is a tc::Error listing the known names.
ChatFamily chat_family_from_name(std::string_view name);

// The prompt text of `messages`; add_generation_prompt opens the assistant's turn (Mistral's
// template always ends a user turn ready for a reply). A role the family does not know or a
// conversation it forbids is a tc::Error.
std::string render_chat(ChatFamily family, const std::vector<ChatMessage>& messages,
                        bool add_generation_prompt);
// The text of the token that ends an assistant turn: "<|eot_id|>", "<|im_end|>", "</s>".
std::string chat_stop_text(ChatFamily family);

}  // namespace tc::llm
