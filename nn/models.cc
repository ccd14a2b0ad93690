#include "nn/models.h"

namespace tc::nn {

std::unique_ptr<Sequential> mnist_convnet(int64_t classes) {
  auto m = std::make_unique<Sequential>();
  auto relu = [](const Tensor& x) { return x.relu(); };
  auto pool = [](const Tensor& x) { return x.max_pool2d(); };
  m->add<Conv2d>(1, 32, 5);
  m->add(relu);
  m->add<Conv2d>(32, 32, 5);
  m->add(relu);
  m->add<BatchNorm>(32);
  m->add(pool);
  m->add<Conv2d>(32, 64, 3);
  m->add(relu);
  m->add<Conv2d>(64, 64, 3);
  m->add(relu);
  m->add<BatchNorm>(64);
  m->add(pool);
  m->add([](const Tensor& x) { return x.flatten(1); });
  m->add<Linear>(576, classes);
  return m;
}

}  // namespace tc::nn
