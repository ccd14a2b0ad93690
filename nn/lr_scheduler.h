// Learning-rate schedules: each sets its optimizer's lr (in place, so a TinyJit step sees it) at
// construction and after every step(), from a closed form of the step count, as PyTorch's
// schedulers do (tests/nn/lr_scheduler_test.cc compares them step by step).
#pragma once

#include <cstdint>

#include "nn/optim.h"

namespace tc::nn {

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& opt, double base_lr) : opt_(opt), base_lr_(base_lr) {}
  virtual ~LRScheduler() = default;
  void step();  // one more step taken: sets lr_at(steps())
  int64_t steps() const { return steps_; }
  // Continues a run that had taken `steps` steps (a resumed checkpoint): sets lr_at(steps).
  void resume(int64_t steps);
  virtual double lr_at(int64_t step) const = 0;

 protected:
  void start() { opt_.set_lr(lr_at(0)); }  // called by each constructor
  Optimizer& opt_;
  double base_lr_;
  int64_t steps_ = 0;
};

// base_lr * gamma ^ (step / step_size)  (PyTorch's StepLR)
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& opt, double base_lr, int64_t step_size, double gamma = 0.1);
  double lr_at(int64_t step) const override;

 private:
  int64_t step_size_;
  double gamma_;
};

// Linear warm-up from base_lr / warmup to base_lr over `warmup` steps, then a cosine from base_lr
// down to min_lr at total_steps (PyTorch's CosineAnnealingLR when warmup is 0); min_lr after.
class CosineWarmupLR : public LRScheduler {
 public:
  CosineWarmupLR(Optimizer& opt, double base_lr, int64_t warmup, int64_t total_steps,
                 double min_lr = 0);
  double lr_at(int64_t step) const override;

 private:
  int64_t warmup_, total_;
  double min_lr_;
};

// PyTorch's OneCycleLR (two phases, cosine annealing): from max_lr / div_factor up to max_lr over
// pct_start of the steps, then down to max_lr / div_factor / final_div_factor.
struct OneCycleOpts {
  double pct_start = 0.3, div_factor = 25, final_div_factor = 1e4;
};
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& opt, double max_lr, int64_t total_steps, OneCycleOpts opts = {});
  double lr_at(int64_t step) const override;

 private:
  int64_t total_;
  OneCycleOpts o_;
};

}  // namespace tc::nn
