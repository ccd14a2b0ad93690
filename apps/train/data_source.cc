#include "apps/train/data_source.h"

#include "apps/train/image_data.h"
#include "apps/train/text_data.h"
#include "tinycore/error.h"

namespace tc::train {

// Further data sets (image folders, CIFAR: datasets/image_folder.h, datasets/cifar.h) plug in
// here as DataSources of their own.
std::unique_ptr<DataSource> make_data_source(const config::Config& config) {
  const std::string& name = config.data.name;
  if (name == "fashion_mnist") return fashion_mnist_source(config);
  if (name == "text") return text_source(config);
  fail("data.name: no data set '%s' (fashion_mnist, text)", name);
}

}  // namespace tc::train
