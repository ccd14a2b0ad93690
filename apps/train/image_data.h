// Fashion-MNIST as a DataSource: the training images through the background DataLoader
// (shuffled per epoch under train.seed, full batches only so every step has one shape), the
// test images as evaluation batches padded to train.eval_batch_size.
#pragma once

#include <memory>

#include "apps/train/data_source.h"

namespace tc::train {

std::unique_ptr<DataSource> fashion_mnist_source(const config::Config& config);

}  // namespace tc::train
