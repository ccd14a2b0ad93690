#include "apps/train/data_source.h"

#include "apps/train/image_data.h"
#include "apps/train/text_data.h"
#include "tinycore/error.h"

namespace tc::train {

std::unique_ptr<DataSource> make_data_source(const config::Config& config) {
  const std::string& name = config.data.name;
  if (name == "fashion_mnist") return fashion_mnist_source(config);
  if (name == "cifar10") return cifar_source(config, datasets::Cifar::k10);
  if (name == "cifar100") return cifar_source(config, datasets::Cifar::k100);
  if (name == "image_folder") return image_folder_source(config);
  if (name == "text") return text_source(config);
  fail("data.name: no data set '%s' (fashion_mnist, cifar10, cifar100, image_folder, text)", name);
}

}  // namespace tc::train
