#include "apps/infer/generator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "tinycore/error.h"

namespace tc::infer {
namespace {

constexpr size_t kPenaltyWindow = 64;  // tokens the repetition penalty looks back on (llama.cpp)

// The next token from one row of logits: the repetition penalty on the recent tokens, then
// greedy at temperature 0, else drawn from the softmax at that temperature over the top_k most
// probable tokens, cut to the smallest set whose probability reaches top_p and to those at least
// min_p times as probable as the first.
int32_t sample(const float* row, int64_t vocab, const std::vector<int32_t>& recent,
               const SamplingParams& p, std::mt19937_64& rng) {
  std::vector<float> logits(row, row + vocab);
  for (float& l : logits)  // NaN ranks last, so that the order below is a total one
    if (std::isnan(l)) l = -std::numeric_limits<float>::infinity();
  std::vector<char> seen(p.repetition_penalty != 1.0 ? static_cast<size_t>(vocab) : 0, 0);
  for (int32_t t : recent)  // each seen token once, however often it was seen
    if (p.repetition_penalty != 1.0 && t >= 0 && t < vocab && !seen[static_cast<size_t>(t)]++) {
      float& l = logits[static_cast<size_t>(t)];
      l = l > 0 ? static_cast<float>(l / p.repetition_penalty)
                : static_cast<float>(l * p.repetition_penalty);
    }
  // most probable first, ties by id: a total order, so a partial sort ranks as a stable one
  auto before = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  if (p.temperature <= 0) {  // greedy: one pass, no ranking
    int32_t best = 0;
    for (int32_t t = 1; t < vocab; t++)
      if (before(t, best)) best = t;
    return best;
  }
  std::vector<int32_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  size_t keep =
      p.top_k > 0 ? std::min<size_t>(static_cast<size_t>(p.top_k), order.size()) : order.size();
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                    before);
  std::vector<double> prob(keep);
  double total = 0;
  for (size_t i = 0; i < keep; i++)
    total += prob[i] = std::exp((logits[order[i]] - logits[order[0]]) / p.temperature);
  double mass = 0;
  for (size_t i = 0; i < keep; i++) {  // top_p: the first tokens holding top_p of the mass
    mass += prob[i] / total;
    if (mass >= p.top_p || prob[i] < p.min_p * prob[0]) {
      keep = prob[i] < p.min_p * prob[0] ? std::max<size_t>(i, 1) : i + 1;
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

// The length of the longest end of `text` that begins one of `stops` (text to hold back).
size_t stop_prefix_at_end(const std::string& text, const std::vector<std::string>& stops) {
  size_t best = 0;
  for (const std::string& s : stops)
    for (size_t n = std::min(s.size() - 1, text.size()); n > best; n--)
      if (text.compare(text.size() - n, n, s, 0, n) == 0) {
        best = n;
        break;
      }
  return best;
}

}  // namespace

struct Generator::Slot {
  bool active = false;
  std::vector<int32_t> prompt;
  size_t fed = 0;        // prompt tokens fed so far
  int64_t position = 0;  // where the next fed token goes
  int32_t last = 0;      // the last sampled token (fed next once the prompt is in)
  int64_t generated = 0, max_tokens = 0;
  std::vector<int32_t> recent = {};  // the last tokens of the sequence (repetition penalty)
  std::string held = {};             // text that may begin a stop string
  SamplingParams params;
  std::mt19937_64 rng = {};
};

Generator::Generator(std::unique_ptr<TextModel> model, int64_t slots)
    : model_(std::move(model)), slots_(slots), context_(model_->context()) {
  if (slots < 1) fail("Generator: slots must be at least 1, got %d", slots);
  slot_.resize(static_cast<size_t>(slots));
  model_->allocate(slots);
}

Generator::Generator(const std::string& run_dir, int64_t slots)
    : Generator(load_run_text_model(run_dir), slots) {}

Generator::~Generator() = default;

int64_t Generator::active() const {
  return std::count_if(slot_.begin(), slot_.end(), [](const Slot& s) { return s.active; });
}

std::vector<int32_t> Generator::encode(std::string_view prompt) const {
  if (prompt.empty()) fail("prompt: is empty (give at least one character)");
  std::vector<int32_t> tokens;
  try {
    tokens = model_->encode(prompt);
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
    if (t < 0 || t >= model_->vocab())
      fail("Generator: token %d is outside the vocabulary of %d", t, model_->vocab());
  for (size_t i = 0; i < slot_.size(); i++) {
    if (slot_[i].active) continue;
    // prompt n tokens take positions 0..n-1; token k (from 1) is read at n+k-2, so the context
    // holds context - n + 1 generated tokens
    int64_t room = context_ - static_cast<int64_t>(prompt.size()) + 1;
    Slot& s = slot_[i] = Slot{.active = true,
                              .prompt = prompt,
                              .max_tokens = std::min(params.max_tokens, room),
                              .recent = prompt,
                              .params = params,
                              .rng = std::mt19937_64(params.seed)};
    std::vector<float> logits = model_->prefill(prompt, static_cast<int64_t>(i));
    if (!logits.empty()) {  // the prompt is in: its first token is sampled now
      s.fed = prompt.size();
      s.position = static_cast<int64_t>(prompt.size());
      accept(static_cast<int64_t>(i), logits.data(), pending_);
    }
    return static_cast<int64_t>(i);
  }
  return -1;
}

void Generator::cancel(int64_t slot) {
  if (slot >= 0 && slot < slots_) slot_[static_cast<size_t>(slot)] = Slot{};
}

void Generator::accept(int64_t slot, const float* logits, std::vector<Emitted>& out) {
  Slot& s = slot_[static_cast<size_t>(slot)];
  size_t window = std::min(s.recent.size(), kPenaltyWindow);
  s.last = sample(
      logits, model_->vocab(),
      std::vector<int32_t>(s.recent.end() - static_cast<std::ptrdiff_t>(window), s.recent.end()),
      s.params, s.rng);
  s.recent.push_back(s.last);
  s.generated++;
  Emitted e{.slot = slot, .token = s.last, .text = "", .finished = false, .finish_reason = ""};
  if (model_->ends_text(s.last)) {
    e.finished = true;
    e.finish_reason = "stop";
    e.text = std::move(s.held);  // what was held back was not a stop string after all
  } else {
    std::string text = s.held + model_->token_text(s.last);
    size_t cut = std::string::npos;
    for (const std::string& stop : s.params.stop)
      if (!stop.empty()) cut = std::min(cut, text.find(stop));
    if (cut != std::string::npos) {
      e.text = text.substr(0, cut);
      e.finished = true;
      e.finish_reason = "stop";
    } else {
      size_t hold = stop_prefix_at_end(text, s.params.stop);
      s.held = text.substr(text.size() - hold);
      e.text = text.substr(0, text.size() - hold);
    }
  }
  if (!e.finished && s.generated >= s.max_tokens) {
    e.finished = true;
    e.finish_reason = "length";  // as OpenAI says for max_tokens and a full context alike
    e.text += s.held;
  }
  if (e.finished) s = Slot{};
  out.push_back(std::move(e));
}

std::vector<Emitted> Generator::step() {
  std::vector<Emitted> out = std::move(pending_);  // first tokens sampled by start()'s prefill
  pending_.clear();
  if (active() == 0) return out;
  std::vector<int32_t> tokens(static_cast<size_t>(slots_), 0), positions(tokens.size(), 0);
  for (size_t i = 0; i < slot_.size(); i++) {
    const Slot& s = slot_[i];
    if (!s.active) continue;  // an idle row decodes token 0 at slot 0: harmless, never read
    tokens[i] = s.fed < s.prompt.size() ? s.prompt[s.fed] : s.last;
    positions[i] = static_cast<int32_t>(s.position);
  }
  if (!step_)
    step_ = std::make_unique<TinyJit>([m = model_.get()](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{m->decode(in[0], in[1]).realize()};
    });
  std::vector<float> logits = (*step_)({Tensor::from_vector<int32_t>(tokens, Shape{slots_, 1}),
                                        Tensor::from_vector<int32_t>(positions, Shape{slots_})})[0]
                                  .data<float>();
  size_t row = logits.size() / slot_.size();
  for (size_t i = 0; i < slot_.size(); i++) {
    Slot& s = slot_[i];
    if (!s.active) continue;
    s.position++;
    if (s.fed < s.prompt.size() && ++s.fed < s.prompt.size()) continue;  // still reading
    accept(static_cast<int64_t>(i), &logits[i * row], out);
  }
  return out;
}

std::string Generator::generate(std::string_view prompt, const SamplingParams& params,
                                const std::function<void(const Emitted&)>& on_token) {
  return generate(encode(prompt), params, on_token);
}

std::string Generator::generate(const std::vector<int32_t>& prompt, const SamplingParams& params,
                                const std::function<void(const Emitted&)>& on_token) {
  if (active() > 0)
    fail("Generator: generate needs an idle generator, %d slots are busy", active());
  if (params.max_tokens < 1) fail("max_tokens: expected at least 1, got %d", params.max_tokens);
  int64_t slot = start(prompt, params);
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
