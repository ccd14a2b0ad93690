// The model suite: what a user of an accelerator asks first. ResNet-50's training step and
// inference in images per second, a GPT's training step in tokens per second, each as one
// TinyJit function on random data; on the CPU each in turns with PyTorch's step of the same model
// (TorchWorker), its ratio the median over the rounds.
#pragma once

#include <vector>

#include "apps/bench/report.h"

namespace bench {

// Full sizes on an accelerator (ResNet-50 batch 64 at 224x224, GPT-2 small); on a device that is
// not one, sizes that take about a minute, or seconds with `small`. Says which on stdout.
std::vector<Result> model_suite(bool small);

}  // namespace bench
