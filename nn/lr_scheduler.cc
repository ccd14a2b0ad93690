#include "nn/lr_scheduler.h"

#include <cmath>

#include "tinycore/error.h"

namespace tc::nn {
namespace {
// From `from` to `to` along half a cosine, as t goes from 0 to 1.
double cosine(double from, double to, double t) {
  return to + (from - to) * (1 + std::cos(M_PI * t)) / 2;
}
}  // namespace

void LRScheduler::step() { opt_.set_lr(lr_at(++steps_)); }

void LRScheduler::resume(int64_t steps) {
  if (steps < 0) fail("LRScheduler.resume: steps must be >= 0, got %d", steps);
  steps_ = steps;
  opt_.set_lr(lr_at(steps_));
}

StepLR::StepLR(Optimizer& opt, double base_lr, int64_t step_size, double gamma)
    : LRScheduler(opt, base_lr), step_size_(step_size), gamma_(gamma) {
  if (step_size <= 0) fail("StepLR: step_size must be positive, got %d", step_size);
  start();
}
double StepLR::lr_at(int64_t step) const {
  return base_lr_ * std::pow(gamma_, static_cast<double>(step / step_size_));
}

CosineWarmupLR::CosineWarmupLR(Optimizer& opt, double base_lr, int64_t warmup, int64_t total_steps,
                               double min_lr)
    : LRScheduler(opt, base_lr), warmup_(warmup), total_(total_steps), min_lr_(min_lr) {
  if (warmup < 0 || total_steps <= warmup)
    fail("CosineWarmupLR: needs 0 <= warmup < total_steps, got warmup %d, total_steps %d", warmup,
         total_steps);
  start();
}
double CosineWarmupLR::lr_at(int64_t step) const {
  if (step < warmup_)
    return base_lr_ * static_cast<double>(step + 1) / static_cast<double>(warmup_);
  if (step >= total_) return min_lr_;
  return cosine(base_lr_, min_lr_,
                static_cast<double>(step - warmup_) / static_cast<double>(total_ - warmup_));
}

OneCycleLR::OneCycleLR(Optimizer& opt, double max_lr, int64_t total_steps, OneCycleOpts opts)
    : LRScheduler(opt, max_lr), total_(total_steps), o_(opts) {
  if (total_steps < 2) fail("OneCycleLR: total_steps must be at least 2, got %d", total_steps);
  if (!(opts.pct_start > 0 && opts.pct_start < 1))
    fail("OneCycleLR: pct_start must be in (0, 1), got %g", opts.pct_start);
  start();
}
double OneCycleLR::lr_at(int64_t step) const {
  // PyTorch's phase ends: step pct_start * total - 1, then total - 1
  double initial = base_lr_ / o_.div_factor, final_lr = initial / o_.final_div_factor;
  double up_end = o_.pct_start * static_cast<double>(total_) - 1,
         down_end = static_cast<double>(total_ - 1);
  double s = static_cast<double>(step);
  if (s <= up_end) return cosine(initial, base_lr_, s / up_end);
  return cosine(base_lr_, final_lr, std::min(1.0, (s - up_end) / (down_end - up_end)));
}

}  // namespace tc::nn
