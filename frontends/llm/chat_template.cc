#include "frontends/llm/chat_template.h"

#include <algorithm>

#include "tinycore/error.h"

namespace tc::llm {
namespace {

void check_role(ChatFamily family, const ChatMessage& m, size_t index,
                std::initializer_list<std::string_view> known) {
  if (std::find(known.begin(), known.end(), m.role) == known.end()) {
    std::string names;
    for (std::string_view k : known) names += (names.empty() ? "" : ", ") + std::string(k);
    fail("chat template %s: message %d has role '%s' (known: %s)", chat_family_name(family), index,
         m.role, names);
  }
}

// Jinja's trim (Python's str.strip()), for the ASCII whitespace.
std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\r\v\f";
  size_t a = s.find_first_not_of(kSpace);
  if (a == std::string_view::npos) return {};
  return s.substr(a, s.find_last_not_of(kSpace) - a + 1);
}

std::string render_llama3(const std::vector<ChatMessage>& messages, bool add_generation_prompt) {
  std::string out = "<|begin_of_text|>";
  for (size_t i = 0; i < messages.size(); i++) {
    check_role(ChatFamily::Llama3, messages[i], i, {"system", "user", "assistant", "ipython"});
    out += "<|start_header_id|>" + messages[i].role + "<|end_header_id|>\n\n";
    out += std::string(trim(messages[i].content)) + "<|eot_id|>";
  }
  if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

std::string render_chatml(const std::vector<ChatMessage>& messages, bool add_generation_prompt) {
  std::string out;
  for (size_t i = 0; i < messages.size(); i++) {
    check_role(ChatFamily::ChatML, messages[i], i, {"system", "user", "assistant", "tool"});
    out += "<|im_start|>" + messages[i].role + "\n" + messages[i].content + "<|im_end|>\n";
  }
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

std::string render_mistral(const std::vector<ChatMessage>& messages) {
  std::string system;
  size_t first = 0;
  if (messages[0].role == "system") system = messages[0].content, first = 1;
  if (first == messages.size()) fail("chat template mistral: a system message needs a user turn");
  std::string out = "<s>";
  for (size_t i = first; i < messages.size(); i++) {
    const ChatMessage& m = messages[i];
    check_role(ChatFamily::Mistral, m, i, {"user", "assistant", "system"});
    const char* want = (i - first) % 2 == 0 ? "user" : "assistant";
    if (m.role != want) {
      fail(
          "chat template mistral: message %d is '%s' where '%s' is due (after an optional system "
          "message, roles must alternate user/assistant/user/...)",
          i, m.role, want);
    }
    if (m.role == "user") {
      out += "[INST] " + (i == first && first == 1 ? system + "\n\n" : "") + m.content + " [/INST]";
    } else {
      out += m.content + "</s>";
    }
  }
  return out;
}

}  // namespace

const char* chat_family_name(ChatFamily family) {
  switch (family) {
    case ChatFamily::Llama3:
      return "llama3";
    case ChatFamily::ChatML:
      return "chatml";
    case ChatFamily::Mistral:
      return "mistral";
  }
  return "?";
}

ChatFamily detect_chat_family(std::string_view template_text) {
  if (template_text.find("<|start_header_id|>") != std::string_view::npos) {
    return ChatFamily::Llama3;
  }
  if (template_text.find("<|im_start|>") != std::string_view::npos) return ChatFamily::ChatML;
  if (template_text.find("[INST]") != std::string_view::npos) return ChatFamily::Mistral;
  fail(
      "the model's chat template (%d bytes) has none of the known markers <|start_header_id|> "
      "(llama3), <|im_start|> (chatml), [INST] (mistral): pass --chat-template "
      "llama3|chatml|mistral",
      template_text.size());
}

ChatFamily chat_family_from_name(std::string_view name) {
  for (ChatFamily f : {ChatFamily::Llama3, ChatFamily::ChatML, ChatFamily::Mistral}) {
    if (name == chat_family_name(f)) return f;
  }
  fail("unknown chat template '%s' (known: llama3, chatml, mistral)", std::string(name));
}

std::string render_chat(ChatFamily family, const std::vector<ChatMessage>& messages,
                        bool add_generation_prompt) {
  if (messages.empty()) fail("chat template %s: no messages", chat_family_name(family));
  switch (family) {
    case ChatFamily::Llama3:
      return render_llama3(messages, add_generation_prompt);
    case ChatFamily::ChatML:
      return render_chatml(messages, add_generation_prompt);
    case ChatFamily::Mistral:
      return render_mistral(messages);
  }
  return "";
}

std::string chat_stop_text(ChatFamily family) {
  switch (family) {
    case ChatFamily::Llama3:
      return "<|eot_id|>";
    case ChatFamily::ChatML:
      return "<|im_end|>";
    case ChatFamily::Mistral:
      return "</s>";
  }
  return "";
}

}  // namespace tc::llm
