// infer --model FILE.gguf|DIR: a language model from the command line. --prompt streams the
// continuation of a prompt; --chat is a conversation in the terminal, one user turn a line, in
// the model's chat format. Timing and memory go to the error stream at the end.
#pragma once

#include <cstdio>
#include <string>

#include "apps/infer/generator.h"
#include "frontends/llm/checkpoint.h"

namespace tc::infer {

struct LlmCliArgs {
  std::string model;
  std::string prompt;  // --prompt; empty with chat
  bool chat = false;
  std::string system;         // --system: a system message opening the chat
  std::string chat_template;  // --chat-template: a family overriding the model's
  llm::LoadOptions load;
  SamplingParams params;
};

// Throws tc::Error naming the argument or file that is wrong.
void run_llm_cli(const LlmCliArgs& args, FILE* in, FILE* out, FILE* err);

}  // namespace tc::infer
