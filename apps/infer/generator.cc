#include "apps/infer/generator.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "apps/common/run_vocab.h"
#include "nn/transformer.h"
#include "tinycore/error.h"

namespace tc::infer {
namespace {

// The next token from one row of logits: greedy at temperature 0, else drawn from the softmax
// at that temperature over the top_k most probable tokens, cut to the smallest set whose
// probability reaches top_p.
int32_t sample(const float* logits, int64_t vocab, const SamplingParams& p, std::mt19937_64& rng) {
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  if (p.temperature <= 0) return order[0];
  size_t keep =
      p.top_k > 0 ? std::min<size_t>(static_cast<size_t>(p.top_k), order.size()) : order.size();
  std::vector<double> prob(keep);
  double total = 0;
  for (size_t i = 0; i < keep; i++)
    total += prob[i] = std::exp((logits[order[i]] - logits[order[0]]) / p.temperature);
  double mass = 0;
  for (size_t i = 0; i < keep; i++) {  // top_p: the first tokens holding top_p of the mass
    mass += prob[i] / total;
    if (mass >= p.top_p) {
      keep = i + 1;
      break;
    }
  }
  double kept =
      std::accumulate(prob.begin(), prob.begin() + static_cast<std::ptrdiff_t>(keep), 0.0);
  double u = std::uniform_real_distribution<double>(0.0, kept)(rng);
  for (size_t i = 0; i < keep; i++)
    if ((u -= prob[i]) < 0) return order[i];
  return order[keep - 1];
}

}  // namespace

struct Generator::Slot {
  bool active = false;
  std::vector<int32_t> prompt;
  size_t fed = 0;        // prompt tokens fed so far
  int64_t position = 0;  // where the next fed token goes
  int32_t last = 0;      // the last sampled token (fed next once the prompt is in)
  int64_t generated = 0, max_tokens = 0;
  SamplingParams params;
  std::mt19937_64 rng;
};

Generator::Generator(const std::string& run_dir, int64_t slots)
    : run_(load_run(run_dir)),
      vocab_(config::load_run_vocab(run_dir, run_.config)),
      slots_(slots),
      context_(run_.config.model.context) {
  if (run_.config.model.name != "gpt")
    fail("run '%s' is a %s model, not a GPT: use --image", run_dir, run_.config.model.name);
  if (slots < 1) fail("Generator: slots must be at least 1, got %d", slots);
  slot_.resize(static_cast<size_t>(slots));
  auto* gpt = static_cast<nn::GPT*>(run_.model.get());
  step_ = std::make_unique<TinyJit>([gpt](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{gpt->decode(in[0], in[1]).realize()};
  });
}

Generator::~Generator() = default;

int64_t Generator::active() const {
  return std::count_if(slot_.begin(), slot_.end(), [](const Slot& s) { return s.active; });
}

std::vector<int32_t> Generator::encode(std::string_view prompt) const {
  if (prompt.empty()) fail("prompt: is empty (give at least one character)");
  std::vector<int32_t> tokens;
  try {
    tokens = vocab_.encode(prompt);
  } catch (const Error& e) {  // a character a chars run never saw
    fail("prompt: %s", e.what());
  }
  if (static_cast<int64_t>(tokens.size()) > context_)
    fail("prompt: %d tokens do not fit the model's context of %d", tokens.size(), context_);
  return tokens;
}

int64_t Generator::start(const std::vector<int32_t>& prompt, const SamplingParams& params) {
  if (prompt.empty() || static_cast<int64_t>(prompt.size()) > context_)
    fail("Generator: a prompt of %d tokens does not fit the context of %d", prompt.size(),
         context_);
  for (int32_t t : prompt)
    if (t < 0 || t >= run_.config.model.vocab)
      fail("Generator: token %d is outside the vocabulary of %d", t, run_.config.model.vocab);
  for (size_t i = 0; i < slot_.size(); i++) {
    if (slot_[i].active) continue;
    // prompt n tokens take positions 0..n-1; token k (from 1) is read at n+k-2, so the context
    // holds context - n + 1 generated tokens
    int64_t room = context_ - static_cast<int64_t>(prompt.size()) + 1;
    slot_[i] = Slot{.active = true,
                    .prompt = prompt,
                    .max_tokens = std::min(params.max_tokens, room),
                    .params = params,
                    .rng = std::mt19937_64(params.seed)};
    return static_cast<int64_t>(i);
  }
  return -1;
}

void Generator::cancel(int64_t slot) {
  if (slot >= 0 && slot < slots_) slot_[static_cast<size_t>(slot)].active = false;
}

std::vector<Emitted> Generator::step() {
  std::vector<Emitted> out;
  if (active() == 0) return out;
  std::vector<int32_t> tokens(static_cast<size_t>(slots_), 0), positions(tokens.size(), 0);
  for (size_t i = 0; i < slot_.size(); i++) {
    const Slot& s = slot_[i];
    if (!s.active) continue;  // an idle row decodes token 0 at slot 0: harmless, never read
    tokens[i] = s.fed < s.prompt.size() ? s.prompt[s.fed] : s.last;
    positions[i] = static_cast<int32_t>(s.position);
  }
  std::vector<float> logits = (*step_)({Tensor::from_vector<int32_t>(tokens, Shape{slots_, 1}),
                                        Tensor::from_vector<int32_t>(positions, Shape{slots_})})[0]
                                  .data<float>();
  int64_t vocab = run_.config.model.vocab;
  for (size_t i = 0; i < slot_.size(); i++) {
    Slot& s = slot_[i];
    if (!s.active) continue;
    s.position++;
    if (s.fed < s.prompt.size() && ++s.fed < s.prompt.size()) continue;  // still reading
    // only tokens the vocabulary can decode (a model.vocab above it has rows never trained)
    s.last = sample(&logits[i * static_cast<size_t>(vocab)], vocab_.size(), s.params, s.rng);
    s.generated++;
    Emitted e{.slot = static_cast<int64_t>(i),
              .token = s.last,
              .text = vocab_.decode({s.last}),
              .finished = false,
              .finish_reason = ""};
    if (s.generated >= s.max_tokens) {
      e.finished = true;
      e.finish_reason = "length";  // as OpenAI says for max_tokens and a full context alike
      s.active = false;
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::string Generator::generate(std::string_view prompt, const SamplingParams& params,
                                const std::function<void(const Emitted&)>& on_token) {
  if (active() > 0)
    fail("Generator: generate needs an idle generator, %d slots are busy", active());
  if (params.max_tokens < 1) fail("max_tokens: expected at least 1, got %d", params.max_tokens);
  int64_t slot = start(encode(prompt), params);
  std::string text;
  for (bool done = false; !done;)
    for (const Emitted& e : step()) {
      if (e.slot != slot) continue;
      text += e.text;
      if (on_token) on_token(e);
      done = e.finished;
    }
  return text;
}

}  // namespace tc::infer
