// Text generation from a GPT run, token by token on the model's KV cache, with continuous
// batching: `slots` sequences decode together, each at its own position, and a new sequence can
// start in a free slot between any two steps. One TinyJit step serves every position (the
// positions are an input tensor, so kernels read them at launch): a token costs its kernels.
// A prompt is fed one token per step through the same step, so no prompt length compiles new
// kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "apps/infer/run_files.h"
#include "datasets/text.h"
#include "tinycore/jit/jit.h"

namespace tc::infer {

struct SamplingParams {
  int64_t max_tokens = 64;   // tokens to generate (the context bounds prompt + tokens)
  double temperature = 1.0;  // 0: greedy
  int64_t top_k = 0;         // keep the k most probable tokens (0: all)
  double top_p = 1.0;        // keep the smallest set whose probability reaches p (1: all)
  uint64_t seed = 0;
};

// One generated token of a slot's sequence.
struct Emitted {
  int64_t slot = 0;
  int32_t token = 0;
  std::string text;           // the token's bytes
  bool finished = false;      // the sequence's last token: max_tokens reached or the context full
  std::string finish_reason;  // "length" (max_tokens reached or the context full)
};

class Generator {
 public:
  explicit Generator(const std::string& run_dir, int64_t slots = 1);
  ~Generator();

  int64_t slots() const { return slots_; }
  int64_t context() const { return context_; }
  int64_t active() const;  // slots holding a sequence

  // Tokens of a prompt (its bytes, or characters for a data.vocab chars run); throws tc::Error
  // for an empty prompt, one with a character the vocabulary lacks, or one that does not leave
  // room for a token in the context.
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

 private:
  struct Slot;
  LoadedRun run_;
  datasets::Vocab vocab_;  // what train's text data used (config::load_run_vocab)
  int64_t slots_, context_;
  std::vector<Slot> slot_;
  std::unique_ptr<TinyJit> step_;
};

}  // namespace tc::infer
