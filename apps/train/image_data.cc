#include "apps/train/image_data.h"

#include <algorithm>

#include "datasets/idx.h"
#include "datasets/loader.h"
#include "tinycore/error.h"

namespace tc::train {
namespace {

constexpr int64_t kSide = datasets::kMnistSide, kPixels = kSide * kSide;

class FashionMnist : public DataSource {
 public:
  explicit FashionMnist(const config::Config& c)
      : dir_(c.data.path.empty() ? datasets::kFashionMnistDir : c.data.path),
        train_(datasets::load_mnist(dir_, true)),
        test_(datasets::load_mnist(dir_, false)),
        normalize_(c.data.normalize),
        mean_(c.data.mean),
        std_(c.data.std),
        eval_batch_(c.train.eval_batch_size) {
    n_train_ = limited(train_.labels.shape[0], c.data.limit);
    n_test_ = limited(test_.labels.shape[0], c.data.eval_limit);
    if (n_train_ < c.train.batch_size)
      fail("train.batch_size: %d is more than the %d training samples (data.limit)",
           c.train.batch_size, n_train_);
    loader_ = std::make_unique<datasets::DataLoader>(
        n_train_, kPixels, [this](int64_t i, float* x, int32_t* y) { fetch(train_, i, x, y); },
        datasets::LoaderOpts{.batch_size = c.train.batch_size,
                             .shuffle = true,
                             .seed = static_cast<uint64_t>(c.train.seed),
                             .drop_last = true,
                             .workers = static_cast<int>(c.data.workers)});
  }

  int64_t batches_per_epoch() const override { return loader_->batches_per_epoch(); }

  void seek(int64_t epoch, int64_t batch) override {
    loader_->start_epoch(epoch);
    for (int64_t b = 0; b < batch; b++) loader_->next();  // the order is fixed per epoch
  }

  StepBatch next_train() override {
    std::optional<datasets::Batch> b = loader_->next();
    if (!b) fail("fashion_mnist: read past the end of an epoch");
    return {Tensor::from_vector<float>(b->x, Shape{b->size, 1, kSide, kSide}),
            Tensor::from_vector<int32_t>(b->y, Shape{b->size}), b->size};
  }

  int64_t eval_batches() const override { return (n_test_ + eval_batch_ - 1) / eval_batch_; }

  StepBatch eval_batch(int64_t i) override {
    int64_t begin = i * eval_batch_, valid = std::min(eval_batch_, n_test_ - begin);
    std::vector<float> x(static_cast<size_t>(eval_batch_ * kPixels), 0.0f);
    std::vector<int32_t> y(static_cast<size_t>(eval_batch_), 0);
    for (int64_t k = 0; k < valid; k++) fetch(test_, begin + k, &x[k * kPixels], &y[k]);
    return {Tensor::from_vector<float>(x, Shape{eval_batch_, 1, kSide, kSide}),
            Tensor::from_vector<int32_t>(y, Shape{eval_batch_}), valid};
  }

  const char* unit() const override { return "samples"; }

 private:
  static int64_t limited(int64_t n, int64_t limit) { return limit > 0 ? std::min(n, limit) : n; }

  void fetch(const datasets::MnistSplit& s, int64_t i, float* x, int32_t* y) const {
    const uint8_t* px = &s.images.data[static_cast<size_t>(i * kPixels)];
    for (int64_t p = 0; p < kPixels; p++)
      x[p] = normalize_ ? static_cast<float>((px[p] / 255.0 - mean_) / std_) : px[p];
    *y = s.labels.data[static_cast<size_t>(i)];
  }

  std::string dir_;
  datasets::MnistSplit train_, test_;
  bool normalize_;
  double mean_, std_;
  int64_t eval_batch_, n_train_ = 0, n_test_ = 0;
  std::unique_ptr<datasets::DataLoader> loader_;
};

}  // namespace

std::unique_ptr<DataSource> fashion_mnist_source(const config::Config& config) {
  const config::ModelConfig& m = config.model;  // checked before the files are read
  if (m.name != "mnist_convnet" && m.in_channels != 1)
    fail("model.in_channels: fashion_mnist images have 1 channel, the model takes %d",
         m.in_channels);
  if (m.classes < 10)
    fail("model.classes: fashion_mnist has 10 classes, the model predicts %d", m.classes);
  return std::make_unique<FashionMnist>(config);
}

}  // namespace tc::train
