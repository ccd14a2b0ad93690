// The model suite: what a user of an accelerator asks first. ResNet-50's training step and
// inference in images per second, a GPT's training step in tokens per second, each as one
// TinyJit function on random data.
#pragma once

#include <cstdint>
#include <vector>

#include "apps/bench/report.h"
#include "nn/module.h"
#include "nn/optim.h"
#include "tinycore/tensor.h"

namespace bench {

struct StepTiming {
  double first_s = 0, step_s = 0;  // the first step (graphs, schedules, compiles), a steady one
  double kernels = 0, planned_bytes = 0, unplanned_bytes = 0;
};

// Training steps of `model` on inputs x and labels y (cross-entropy loss, then `opt`'s step,
// batchnorm statistics updated) under TinyJit: the first, the capture, then `steps` timed one by
// one; step_s is their median. With steps = 0 only the first is run (first_s).
StepTiming time_train_step(tc::nn::Module& model, tc::nn::Optimizer& opt, const tc::Tensor& x,
                           const tc::Tensor& y, int steps);

// Full sizes on an accelerator (ResNet-50 batch 64 at 224x224, GPT-2 small); on a device that is
// not one, sizes that take about a minute, or seconds with `small`. Says which on stdout.
std::vector<Result> model_suite(bool small);

}  // namespace bench
