// A run's state on disk, in its folder (runs/<name>/):
//   checkpoint.safetensors  the model ("model.<name>"), the rest of the run's state (the
//                           optimizer's "optim.<name>", a loss scaler's "scaler.<name>") and,
//                           as metadata, where the run stands (step, epoch, batch within
//                           the epoch, the random generator's seed and counter): all --resume
//                           needs, in one file replaced atomically (nn/state.h safe_save), so it
//                           never mixes two steps
//   model.safetensors       the model alone under its own names: what infer loads
#pragma once

#include <cstdint>
#include <string>

#include "nn/module.h"
#include "nn/state.h"

namespace tc::train {

struct Position {
  int64_t step = 0;   // steps taken
  int64_t epoch = 0;  // the epoch the next step belongs to (before wrapping)
  int64_t batch = 0;  // batches of that epoch already taken
  Tensor::RandomState rng;
};

inline const char* kCheckpointFile = "checkpoint.safetensors";
inline const char* kModelFile = "model.safetensors";

// `state`: the run's state besides the model, by its names in the file ("optim.lr", ...).
void save_checkpoint(const std::string& dir, const nn::Module& model, const nn::StateDict& state,
                     const Position& pos);

// Assigns the saved model and state through their handles (strict: every name, shape and dtype
// must match) and returns the position. Throws tc::Error naming the file when it is missing or
// damaged, or holds other state than this run's.
Position load_checkpoint(const std::string& dir, nn::Module& model, nn::StateDict state);

}  // namespace tc::train
