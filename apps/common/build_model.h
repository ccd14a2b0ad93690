// The network a config's model section names, built from nn's layers: train builds it to train,
// infer to load a checkpoint into (the state-dict names are the same both times).
#pragma once

#include <memory>

#include "apps/common/config.h"
#include "nn/module.h"

namespace tc::config {

// Throws tc::Error naming the key when the section does not describe a network that exists
// (a resnet depth without a layout, gpt heads that do not divide dim, ...).
std::unique_ptr<nn::Module> build_model(const ModelConfig& model);

}  // namespace tc::config
