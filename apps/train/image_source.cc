#include "apps/train/image_source.h"

#include <algorithm>

#include "tinycore/error.h"
#include "tinycore/runtime/device.h"

namespace tc::train {
namespace {

int64_t limited(int64_t n, int64_t limit) { return limit > 0 ? std::min(n, limit) : n; }

class ImageSource : public DataSource {
 public:
  ImageSource(ImageSet set, const config::Config& c)
      : set_(std::move(set)),
        numel_(set_.shape[0] * set_.shape[1] * set_.shape[2]),
        eval_batch_(c.train.eval_batch_size),
        n_train_(limited(set_.n_train, c.data.limit)),
        n_test_(limited(set_.n_test, c.data.eval_limit)) {
    if (n_train_ < c.train.batch_size)
      fail("train.batch_size: %d is more than the %d training samples (data.limit)",
           c.train.batch_size, n_train_);
    loader_ = std::make_unique<datasets::DataLoader>(
        n_train_, numel_, set_.train,
        datasets::LoaderOpts{
            .batch_size = c.train.batch_size,
            .shuffle = true,
            .seed = static_cast<uint64_t>(c.train.seed),
            .drop_last = true,
            .workers = static_cast<int>(c.data.workers),
            .pin_memory = &runtime::get_device(runtime::default_device()).allocator()});
  }

  int64_t batches_per_epoch() const override { return loader_->batches_per_epoch(); }

  void seek(int64_t epoch, int64_t batch) override {
    loader_->start_epoch(epoch);
    for (int64_t b = 0; b < batch; b++) loader_->next();  // the order is fixed per epoch
  }

  StepBatch next_train() override {
    std::optional<datasets::Batch> b = loader_->next();
    if (!b) fail("%s: read past the end of an epoch", set_.name);
    return {Tensor::from_blob(b->x.data(), batch_shape(b->size), dtypes::float32),
            Tensor::from_blob(b->y.data(), Shape{b->size}, dtypes::int32), b->size};
  }

  int64_t eval_batches() const override { return (n_test_ + eval_batch_ - 1) / eval_batch_; }

  StepBatch eval_batch(int64_t i) override {
    int64_t begin = i * eval_batch_, valid = std::min(eval_batch_, n_test_ - begin);
    std::vector<float> x(static_cast<size_t>(eval_batch_ * numel_), 0.0f);
    std::vector<int32_t> y(static_cast<size_t>(eval_batch_), 0);
    for (int64_t k = 0; k < valid; k++) set_.test(begin + k, &x[k * numel_], &y[k]);
    return {Tensor::from_vector<float>(x, batch_shape(eval_batch_)),
            Tensor::from_vector<int32_t>(y, Shape{eval_batch_}), valid};
  }

 private:
  Shape batch_shape(int64_t n) const {
    return Shape{n, set_.shape[0], set_.shape[1], set_.shape[2]};
  }

  ImageSet set_;
  int64_t numel_, eval_batch_, n_train_, n_test_;
  std::unique_ptr<datasets::DataLoader> loader_;
};

}  // namespace

std::unique_ptr<DataSource> image_source(ImageSet set, const config::Config& config) {
  return std::make_unique<ImageSource>(std::move(set), config);
}

void check_model_fits(const config::Config& config, const std::string& data_name,
                      const std::vector<int64_t>& shape, int64_t classes) {
  const config::ModelConfig& m = config.model;
  if (m.name == "gpt")
    fail("data.name: %s holds images, for image models (mnist_convnet, resnet), not gpt",
         data_name);
  if (m.name == "mnist_convnet") {
    if (shape != std::vector<int64_t>{1, 28, 28})
      fail(
          "model.name: mnist_convnet takes 1x28x28 images, %s gives %dx%dx%d (data.size, "
          "data.crop)",
          data_name, shape[0], shape[1], shape[2]);
  } else if (m.in_channels != shape[0]) {
    fail("model.in_channels: %s images have %d channel%s, the model takes %d", data_name, shape[0],
         shape[0] == 1 ? "" : "s", m.in_channels);
  }
  if (m.classes < classes)
    fail("model.classes: %s has %d classes, the model predicts %d", data_name, classes, m.classes);
}

}  // namespace tc::train
