#include "apps/infer/classifier.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_format.h"
#include "datasets/idx.h"
#include "tinycore/error.h"

namespace tc::infer {

Classifier::Classifier(const std::string& run_dir, int64_t max_batch)
    : run_(load_run(run_dir)), max_batch_(max_batch) {
  const config::Config& c = run_.config;
  if (c.model.name == "gpt")
    fail("run '%s' is a gpt model, not an image classifier: use --text", run_dir);
  if (max_batch < 1) fail("Classifier: max_batch must be at least 1, got %d", max_batch);
  // Every image data set train reads is Fashion-MNIST's: 28x28, one channel.
  channels_ = c.model.in_channels;
  side_ = datasets::kMnistSide;
  for (int64_t i = 0; i < c.model.classes; i++)
    labels_.push_back(c.data.name == "fashion_mnist" && i < 10 ? datasets::kFashionMnistClasses[i]
                                                               : std::to_string(i));
}

Classifier::~Classifier() = default;

void Classifier::warm_up() {
  std::vector<float> blank(static_cast<size_t>(channels_ * side_ * side_), 0.0f);
  for (int64_t n = 1;; n = std::min(2 * n, max_batch_)) {
    for (int run = 0; run < 2; run++) classify(std::vector<std::vector<float>>(n, blank), 1);
    if (n == max_batch_) break;
  }
}

std::vector<float> Classifier::preprocess(std::string_view bytes, const ImageLimits& limits) const {
  std::vector<float> out = decode_image(bytes, channels_, side_, side_, limits);
  const config::DataConfig& d = run_.config.data;
  if (d.normalize)
    for (float& v : out) v = static_cast<float>((v / 255.0 - d.mean) / d.std);
  return out;
}

std::vector<std::vector<ClassScore>> Classifier::classify(
    const std::vector<std::vector<float>>& images, int64_t topk) {
  int64_t n = static_cast<int64_t>(images.size()), pixels = channels_ * side_ * side_;
  if (n < 1 || n > max_batch_) fail("classify: %d images, expected 1 .. %d", n, max_batch_);
  if (topk < 1 || topk > classes())
    fail("topk: expected an integer in 1..%d, got %d", classes(), topk);
  int64_t size = 1;  // padded to a power of two: few captures, and a lone image stays small
  while (size < n) size *= 2;
  size = std::min(size, max_batch_);
  std::vector<float> batch(static_cast<size_t>(size * pixels), 0.0f);
  for (int64_t i = 0; i < n; i++) {
    if (static_cast<int64_t>(images[i].size()) != pixels)
      fail("classify: image %d has %d values, the model takes %d", i, images[i].size(), pixels);
    std::copy(images[i].begin(), images[i].end(), batch.begin() + i * pixels);
  }
  std::unique_ptr<TinyJit>& step = steps_[size];
  if (!step)
    step = std::make_unique<TinyJit>([this](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{(*run_.model)(in[0]).softmax(-1).realize()};
    });
  Tensor x = Tensor::from_vector<float>(batch, Shape{size, channels_, side_, side_});
  std::vector<float> probs = (*step)({x})[0].data<float>();
  std::vector<std::vector<ClassScore>> out;
  for (int64_t i = 0; i < n; i++) {
    const float* p = &probs[static_cast<size_t>(i * classes())];
    std::vector<int64_t> order(static_cast<size_t>(classes()));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p[a] > p[b]; });
    std::vector<ClassScore>& scores = out.emplace_back();
    for (int64_t k = 0; k < topk; k++)
      scores.push_back({order[k], labels_[order[k]], static_cast<double>(p[order[k]])});
  }
  return out;
}

}  // namespace tc::infer
