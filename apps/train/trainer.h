// The training loop of `train`, callable in-process (tests drive it with tiny configs): builds
// the model, data, optimizer and schedule a config names, runs the step as one TinyJit function
// and evaluation as another, and keeps the run's folder (config.yaml, checkpoints, metrics.csv,
// curves.png, vocab.bin; see checkpoint.h, metrics.h and apps/common/run_vocab.h). A config's
// model.vocab 0 runs, and is saved, as the data's vocabulary size. A resumed run continues
// bitwise where its last checkpoint stood: model, optimizer state, schedule, data order and
// random generator.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "apps/common/config.h"

namespace tc::train {

struct RunOptions {
  std::string resume_dir;   // continue the run in this folder (its config is `config`)
  bool quiet = false;       // no progress bar or lines, only log lines
  std::optional<bool> tty;  // draw the bar in place (default: whether stderr is a terminal)
  const std::atomic<bool>* interrupt = nullptr;  // set (SIGINT): checkpoint after this step, stop
  FILE* log = stdout;
  FILE* bar = stderr;
};

enum class Outcome {
  kFinished,     // every step taken, final checkpoint written
  kInterrupted,  // interrupt set: checkpoint written after the last step taken
  kStopped,      // train.stop_after reached: stopped as a killed run would, no checkpoint
};

struct RunResult {
  Outcome outcome = Outcome::kFinished;
  std::string dir;  // the run's folder
  int64_t steps = 0;
  double loss = 0;                                 // of the last step
  std::optional<double> eval_loss, eval_accuracy;  // of the last evaluation
};

// Throws tc::Error for a config that cannot run (named by key), a run folder that cannot be
// written, or a checkpoint that does not fit.
RunResult run_training(const config::Config& config, const RunOptions& opts = {});

// Where a fresh run of `config` goes: log.dir/log.name, or log.name-2, -3 ... when that folder
// already holds a run.
std::string fresh_run_dir(const config::Config& config);

}  // namespace tc::train
