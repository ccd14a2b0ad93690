// A training step as bench times it: one TinyJit function, run by whoever times it, so that its
// replays can take turns with an anchor's steps (bench::time_in_turns).
#pragma once

#include "apps/bench/anchors.h"
#include "nn/module.h"
#include "nn/optim.h"
#include "tinycore/jit/jit.h"
#include "tinycore/tensor.h"

namespace bench {

// Training steps of `model` on inputs x and labels y (cross-entropy loss, then `opt`'s step,
// batchnorm statistics updated) under TinyJit. The constructor runs the first step (graphs,
// schedules, compiles: first_s()); a call runs one step and waits for the device: the first call
// is TinyJit's capture, the ones after it replays. model and opt must outlive it.
class TrainStep {
 public:
  TrainStep(tc::nn::Module& model, tc::nn::Optimizer& opt, tc::Tensor x, tc::Tensor y);
  void operator()();
  Workload workload() {
    return [this] { (*this)(); };
  }
  double first_s() const { return first_s_; }
  const tc::TinyJit& jit() const { return jit_; }  // kernels and memory of the capture

 private:
  tc::Tensor x_, y_;
  tc::TinyJit jit_;
  double first_s_ = 0;
};

}  // namespace bench
