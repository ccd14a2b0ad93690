#include "apps/train/optimizer.h"

#include "tinycore/error.h"

namespace tc::train {

std::unique_ptr<nn::Optimizer> make_optimizer(const config::OptimConfig& o,
                                              std::vector<Tensor> params) {
  if (o.name == "sgd")
    return std::make_unique<nn::SGD>(std::move(params), nn::SGDOpts{.lr = o.lr,
                                                                    .momentum = o.momentum,
                                                                    .weight_decay = o.weight_decay,
                                                                    .nesterov = o.nesterov});
  if (o.name == "adam")
    return std::make_unique<nn::Adam>(
        std::move(params), nn::AdamOpts{.lr = o.lr, .b1 = o.b1, .b2 = o.b2, .eps = o.eps});
  if (o.name == "adamw")
    return std::make_unique<nn::AdamW>(
        std::move(params),
        nn::AdamWOpts{
            .lr = o.lr, .b1 = o.b1, .b2 = o.b2, .eps = o.eps, .weight_decay = o.weight_decay});
  if (o.name == "lamb")
    return std::make_unique<nn::LAMB>(
        std::move(params),
        nn::LAMBOpts{
            .lr = o.lr, .b1 = o.b1, .b2 = o.b2, .eps = o.eps, .weight_decay = o.weight_decay});
  if (o.name == "muon")
    return std::make_unique<nn::Muon>(
        std::move(params),
        nn::MuonOpts{.lr = o.lr, .momentum = o.momentum, .weight_decay = o.weight_decay});
  fail("optim.name: no optimizer '%s' (sgd, adam, adamw, lamb, muon)", o.name);
}

std::unique_ptr<nn::LRScheduler> make_schedule(const config::OptimConfig& o, nn::Optimizer& opt,
                                               int64_t total_steps) {
  if (o.schedule == "constant") return nullptr;
  if (o.schedule == "step") return std::make_unique<nn::StepLR>(opt, o.lr, o.step_size, o.gamma);
  if (o.schedule == "cosine") {
    if (o.warmup >= total_steps)
      fail("optim.warmup: %d warm-up steps leave nothing of a %d-step run", o.warmup, total_steps);
    return std::make_unique<nn::CosineWarmupLR>(opt, o.lr, o.warmup, total_steps, o.min_lr);
  }
  if (o.schedule == "onecycle") return std::make_unique<nn::OneCycleLR>(opt, o.lr, total_steps);
  fail("optim.schedule: no schedule '%s' (constant, cosine, step, onecycle)", o.schedule);
}

}  // namespace tc::train
