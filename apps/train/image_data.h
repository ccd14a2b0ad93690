// The image data sets train reads, each described as an ImageSet and served by the one image
// DataSource (apps/train/image_source.h), with the data.* image keys applied
// (apps/train/image_transform.h): Fashion-MNIST's IDX files, CIFAR-10/100's binary files, and
// folders of images in torchvision's ImageFolder layout (<data.path>/train/<class>/ and
// <data.path>/val/<class>/ or test/<class>/, as ImageNet-style sets come).
#pragma once

#include <memory>

#include "apps/train/data_source.h"
#include "datasets/cifar.h"

namespace tc::train {

std::unique_ptr<DataSource> fashion_mnist_source(const config::Config& config);
std::unique_ptr<DataSource> cifar_source(const config::Config& config, datasets::Cifar kind);
std::unique_ptr<DataSource> image_folder_source(const config::Config& config);

}  // namespace tc::train
