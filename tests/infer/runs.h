// Tiny trained runs for the infer tests, made once per test program with train's library: an
// mnist convnet (6 steps on 48 Fashion-MNIST images) and a byte-level and a char-level GPT
// (context 16).
#pragma once

#include <string>

#include "apps/train/trainer.h"
#include "tests/train/tiny_run.h"

namespace inferruns {

inline const tc::train::RunResult& mnist() {
  static const tc::train::RunResult r = tc::train::run_training(
      tinyrun::tiny_config("mnist", tinyrun::fresh_dir("infer_mnist"), 48), tinyrun::silent());
  return r;
}

inline const tc::train::RunResult& gpt() {
  static const tc::train::RunResult r = tc::train::run_training(
      tinyrun::tiny_config("gpt", tinyrun::fresh_dir("infer_gpt")), tinyrun::silent());
  return r;
}

// The same GPT char-level: its tokens are the 38 characters of the tiny corpus.
inline const tc::train::RunResult& gpt_chars() {
  static const tc::train::RunResult r = tc::train::run_training(
      tinyrun::tiny_config("gpt", tinyrun::fresh_dir("infer_gpt_chars"), 16, {"data.vocab=chars"}),
      tinyrun::silent());
  return r;
}

}  // namespace inferruns
