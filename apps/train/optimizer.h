// The optimizer and learning-rate schedule config.optim names (nn/optim.h, nn/lr_scheduler.h).
#pragma once

#include <memory>
#include <vector>

#include "apps/common/config.h"
#include "nn/lr_scheduler.h"
#include "nn/optim.h"

namespace tc::train {

std::unique_ptr<nn::Optimizer> make_optimizer(const config::OptimConfig& o,
                                              std::vector<Tensor> params);
// None for a constant learning rate. total_steps: the run's length (cosine, onecycle).
std::unique_ptr<nn::LRScheduler> make_schedule(const config::OptimConfig& o, nn::Optimizer& opt,
                                               int64_t total_steps);

}  // namespace tc::train
