// Reference models shared by the programs (train, bench): built from nn's layers with the
// parameter names PyTorch would give them.
#pragma once

#include <memory>

#include "nn/layers.h"

namespace tc::nn {

// tinygrad's examples/beautiful_mnist.py convnet for 1x28x28 inputs: conv 32x5x5 twice,
// batchnorm, maxpool, conv 64x3x3 twice, batchnorm, maxpool, linear 576 -> classes.
std::unique_ptr<Sequential> mnist_convnet(int64_t classes = 10);

}  // namespace tc::nn
