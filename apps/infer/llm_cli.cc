#include "apps/infer/llm_cli.h"

#include <chrono>
#include <fstream>

#include "apps/infer/llm_text_model.h"
#include "tinycore/error.h"

namespace tc::infer {
namespace {

double resident_mib() {  // VmRSS of /proc/self/status
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

// Streams one reply into `out`; returns its text and adds to the token and time counts.
std::string reply(Generator& g, const std::vector<int32_t>& prompt, const SamplingParams& p,
                  FILE* out, int64_t& tokens) {
  return g.generate(prompt, p, [&](const Emitted& e) {
    std::fwrite(e.text.data(), 1, e.text.size(), out);
    std::fflush(out);  // each token shows as it is made
    tokens++;
  });
}

}  // namespace

void run_llm_cli(const LlmCliArgs& a, FILE* in, FILE* out, FILE* err) {
  auto start = std::chrono::steady_clock::now();
  auto model = std::make_unique<LlmTextModel>(a.model, a.load, a.chat_template);
  LlmTextModel& m = *model;
  std::fprintf(err, "infer: %s: %s, %s layers, context %lld, %.1f MiB of files\n", a.model.c_str(),
               m.loaded().format.c_str(), std::to_string(m.loaded().model->config().layers).c_str(),
               static_cast<long long>(m.context()),
               static_cast<double>(m.loaded().file_bytes) / (1 << 20));
  Generator g(std::move(model), 1);
  auto seconds = [](auto since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
  };
  double load_s = seconds(start);
  int64_t prompt_tokens = 0, tokens = 0;
  auto t0 = std::chrono::steady_clock::now();
  if (!a.chat) {
    std::vector<int32_t> prompt = g.encode(a.prompt);
    prompt_tokens = static_cast<int64_t>(prompt.size());
    std::fwrite(a.prompt.data(), 1, a.prompt.size(), out);
    reply(g, prompt, a.params, out, tokens);
    std::fprintf(out, "\n");
    std::fflush(out);
  } else {
    std::vector<llm::ChatMessage> messages;
    if (!a.system.empty()) messages.push_back({"system", a.system});
    m.chat_family();  // a model without a chat format it knows fails before the first turn
    for (;;) {        // one user turn a line, until the end of the input
      std::fprintf(out, "> ");
      std::fflush(out);
      std::string line;
      for (int c; (c = std::fgetc(in)) != EOF && c != '\n';) line += static_cast<char>(c);
      if (line.empty() && std::feof(in)) break;
      if (line.empty()) continue;
      messages.push_back({"user", line});
      std::vector<int32_t> prompt = m.encode_chat(messages);
      if (static_cast<int64_t>(prompt.size()) >= m.context())
        fail("chat: the conversation's %d tokens fill the context of %d (--max-context)",
             prompt.size(), m.context());
      prompt_tokens += static_cast<int64_t>(prompt.size());
      messages.push_back({"assistant", reply(g, prompt, a.params, out, tokens)});
      std::fprintf(out, "\n");
      std::fflush(out);
    }
  }
  double gen_s = seconds(t0);
  std::fprintf(err,
               "infer: loaded in %.2f s; %lld prompt tokens and %lld generated in %.2f s (%.1f "
               "tokens/s); resident memory %.1f MiB\n",
               load_s, static_cast<long long>(prompt_tokens), static_cast<long long>(tokens), gen_s,
               gen_s > 0 ? static_cast<double>(tokens) / gen_s : 0.0, resident_mib());
}

}  // namespace tc::infer
