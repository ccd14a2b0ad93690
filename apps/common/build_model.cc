#include "apps/common/build_model.h"

#include "nn/models.h"
#include "nn/resnet.h"
#include "nn/transformer.h"
#include "tinycore/error.h"

namespace tc::config {

std::unique_ptr<nn::Module> build_model(const ModelConfig& m) {
  if (m.name == "mnist_convnet") {
    if (m.in_channels != 1)
      fail("model.in_channels: mnist_convnet takes 1 input channel (28x28), got %d", m.in_channels);
    return nn::mnist_convnet(m.classes);
  }
  if (m.name == "resnet") {
    try {
      return std::make_unique<nn::ResNet>(nn::ResNetOpts{.depth = m.depth,
                                                         .cifar = m.style == "cifar",
                                                         .in_channels = m.in_channels,
                                                         .classes = m.classes,
                                                         .width = m.width});
    } catch (const Error& e) {
      throw Error(absl::StrCat("model.depth / model.style: ", e.what()));
    }
  }
  if (m.name == "gpt") {
    if (m.dim % m.heads != 0)
      fail("model.heads: %d heads do not divide model.dim %d", m.heads, m.dim);
    if (m.vocab == 0)  // train sets it from its data before building; a run's config has it set
      fail("model.vocab: 0 (the data's) is only known to train, give the vocabulary size");
    return std::make_unique<nn::GPT>(nn::GPTConfig{.vocab = m.vocab,
                                                   .context = m.context,
                                                   .layers = m.layers,
                                                   .width = m.dim,
                                                   .heads = m.heads});
  }
  fail("model.name: no model '%s' (mnist_convnet, resnet, gpt)", m.name);
}

}  // namespace tc::config
