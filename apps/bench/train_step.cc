#include "apps/bench/train_step.h"

#include <vector>

#include "apps/bench/measure.h"

namespace bench {

using tc::Tensor;

TrainStep::TrainStep(tc::nn::Module& model, tc::nn::Optimizer& opt, Tensor x, Tensor y)
    : x_(std::move(x)), y_(std::move(y)), jit_([&model, &opt](const std::vector<Tensor>& in) {
        Tensor::Train train;
        opt.zero_grad();
        Tensor loss = model(in[0]).sparse_categorical_crossentropy(in[1]);
        loss.backward();
        std::vector<Tensor> to_realize = opt.schedule_step();
        for (const Tensor& b : model.buffers()) to_realize.push_back(b);
        to_realize.push_back(loss);
        tc::realize_all(to_realize);
        return std::vector<Tensor>{loss};
      }) {
  const double t0 = now();
  jit_({x_, y_})[0].item<float>();
  first_s_ = now() - t0;
}

void TrainStep::operator()() {
  jit_({x_, y_});
  device().synchronize();
}

}  // namespace bench
