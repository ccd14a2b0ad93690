// A finished run's folder, as infer reads it: config.yaml (what train wrote: the model, and the
// preprocessing its data used) and model.safetensors (the weights under the model's own names).
#pragma once

#include <memory>
#include <string>

#include "apps/common/config.h"
#include "nn/module.h"

namespace tc::infer {

struct LoadedRun {
  config::Config config;
  std::unique_ptr<nn::Module> model;  // built from config.model, weights loaded, eval mode
};

// Throws tc::Error naming the folder or file when it is missing, unreadable or does not match
// the config (a missing weight, a shape that differs).
LoadedRun load_run(const std::string& dir);

}  // namespace tc::infer
