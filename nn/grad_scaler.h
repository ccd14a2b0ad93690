// Dynamic loss scaling for float16 training, as torch.cuda.amp.GradScaler: the loss is multiplied
// by a scale before backward so that small gradients do not flush to zero in float16, and the
// gradients are divided by it before the optimizer step. A step whose gradients hold an inf or a
// NaN is skipped (Optimizer::schedule_step's `apply`) and the scale backs off; after
// `growth_interval` good steps in a row it grows. All of it is lazy tensors decided when the step
// runs, so one TinyJit capture serves good and skipped steps alike.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/state.h"
#include "tinycore/tensor.h"

namespace tc::nn {

struct GradScalerOpts {
  double init_scale = 65536.0, growth_factor = 2.0, backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

class GradScaler {
 public:
  // Throws for a scale that is not positive, factors that do not grow (> 1) and back off (in
  // (0, 1)), or an interval under 1.
  explicit GradScaler(GradScalerOpts opts = {});

  Tensor scale(const Tensor& loss) const;  // loss * scale, what backward() starts from
  // Replaces each parameter's gradient by gradient / scale and returns whether all of them are
  // finite: the 0-d bool to pass to schedule_step and update. Throws naming a parameter that has
  // no gradient.
  Tensor unscale(const std::vector<Tensor>& params) const;
  // Assigns the next scale and count of good steps from `finite`; returns what to realize.
  std::vector<Tensor> update(const Tensor& finite);

  const Tensor& current_scale() const { return scale_; }
  StateDict state_dict() const;  // "scale", "growth_tracker": handles for save and load

 private:
  GradScalerOpts o_;
  Tensor scale_, growth_tracker_;  // 0-d float32
};

}  // namespace tc::nn
