// Text generation, token by token on a TextModel's KV cache, with continuous batching: `slots`
// sequences decode together, each at its own position, and a new sequence can start in a free
// slot between any two steps. One TinyJit step serves every position (the positions are an input
// tensor, so kernels read them at launch, and their loops over the cache stop there: a token
// costs its kernels, and attention what its rows have written). A prompt is written in one
// prefill pass where the model has one, else fed one token per step through the same step.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "apps/infer/text_model.h"
#include "tinycore/jit/jit.h"

namespace tc::infer {

struct SamplingParams {
  int64_t max_tokens = 64;   // tokens to generate (the context bounds prompt + tokens)
  double temperature = 1.0;  // 0: greedy
  int64_t top_k = 0;         // keep the k most probable tokens (0: all)
  double top_p = 1.0;        // keep the smallest set whose probability reaches p (1: all)
  double min_p = 0.0;        // keep tokens at least min_p times as probable as the top one
  // logits of tokens among the last 64 of the sequence divided (positive) or multiplied
  // (negative) by this, as llama.cpp's repeat penalty (1: none)
  double repetition_penalty = 1.0;
  std::vector<std::string> stop = {};  // the text ends before the first of these it would contain
  uint64_t seed = 0;
};

// One generated token of a slot's sequence.
struct Emitted {
  int64_t slot = 0;
  int32_t token = 0;
  std::string text;       // the token's bytes (held back while they may begin a stop string)
  bool finished = false;  // the sequence's last token
  // "length" (max_tokens reached or the context full) or "stop" (an end-of-text token, whose
  // text is not emitted, or a stop string, cut off)
  std::string finish_reason;
};

class Generator {
 public:
  explicit Generator(std::unique_ptr<TextModel> model, int64_t slots = 1);
  // The GPT of a train run (load_run_text_model).
  explicit Generator(const std::string& run_dir, int64_t slots = 1);
  ~Generator();

  int64_t slots() const { return slots_; }
  int64_t context() const { return context_; }
  int64_t active() const;  // slots holding a sequence

  // Tokens of a prompt; throws tc::Error for an empty prompt, one the tokenizer cannot take (a
  // character a chars run lacks), or one that does not leave room for a token in the context.
  std::vector<int32_t> encode(std::string_view prompt) const;

  // Starts a sequence in a free slot and returns the slot, or -1 when all are busy. max_tokens
  // is cut to what the context leaves after the prompt.
  int64_t start(const std::vector<int32_t>& prompt, const SamplingParams& params);
  // Frees a slot (a client went away); its next tokens are never emitted.
  void cancel(int64_t slot);
  // One step of every active slot: slots still reading their prompt advance one prompt token,
  // the others sample one token, returned in slot order. A slot whose sequence finishes is free
  // for start() after this step.
  std::vector<Emitted> step();

  // A whole generation in slot 0 (slots() must be 1 or the generator idle), calling on_token
  // for each token as it is made. Returns the generated text.
  std::string generate(std::string_view prompt, const SamplingParams& params,
                       const std::function<void(const Emitted&)>& on_token = {});
  // The same from the prompt's tokens.
  std::string generate(const std::vector<int32_t>& prompt, const SamplingParams& params,
                       const std::function<void(const Emitted&)>& on_token = {});

 private:
  struct Slot;
  // Samples the slot's next token from its logits and emits its text (holding back what may
  // begin a stop string), finishing the sequence at an end-of-text token, a stop string or its
  // length.
  void accept(int64_t slot, const float* logits, std::vector<Emitted>& out);
  std::unique_ptr<TextModel> model_;
  int64_t slots_, context_;
  std::vector<Slot> slot_;
  std::unique_ptr<TinyJit> step_;  // one capture for every position
  std::vector<Emitted> pending_;   // first tokens sampled by start()'s prefill, for step()
};

}  // namespace tc::infer
