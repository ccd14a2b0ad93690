#include "apps/train/text_data.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_format.h"
#include "datasets/text.h"
#include "tinycore/error.h"

namespace tc::train {
namespace {

constexpr double kValFraction = 0.1;

class Text : public DataSource {
 public:
  explicit Text(const config::Config& c)
      : batch_(c.train.batch_size),
        context_(c.model.context),
        eval_batch_(c.train.eval_batch_size),
        seed_(static_cast<uint64_t>(c.train.seed)) {
    if (c.model.name != "gpt")
      fail("data.name: text is for language models (model.name: gpt), not %s", c.model.name);
    std::string text = c.data.path.empty() ? datasets::read_text_corpus()
                                           : datasets::read_text_corpus(c.data.path);
    const bool chars = c.data.vocab == "chars";
    vocab_ = chars ? datasets::Vocab::chars(text) : datasets::Vocab::bytes();
    if (c.model.vocab != 0 && c.model.vocab < vocab_.size())
      fail("model.vocab: %s, the model has %d (0: as many as the text has)",
           chars ? absl::StrFormat("the text has %d characters (data.vocab: chars)", vocab_.size())
                 : absl::StrFormat("text tokens are bytes (%d of them)", vocab_.size()),
           c.model.vocab);
    split_ = datasets::split_tokens(vocab_.encode(text), kValFraction);
    int64_t windows = static_cast<int64_t>(split_.train.size()) / context_;
    if (c.data.limit > 0) windows = std::min(windows, c.data.limit);
    batches_ = windows / batch_;
    if (batches_ == 0)
      fail("train.batch_size: %d windows of %d tokens are more than the corpus holds (%d)", batch_,
           context_, windows);
    n_eval_ = (static_cast<int64_t>(split_.val.size()) - 1) / context_;
    if (c.data.eval_limit > 0) n_eval_ = std::min(n_eval_, c.data.eval_limit);
  }

  int64_t batches_per_epoch() const override { return batches_; }
  void seek(int64_t epoch, int64_t batch) override {
    epoch_ = epoch;
    next_ = batch;
  }

  StepBatch next_train() override {
    if (next_ >= batches_) fail("text: read past the end of an epoch");
    std::mt19937_64 rng(seed_ * 1000003 + static_cast<uint64_t>(epoch_ * batches_ + next_++));
    datasets::TokenBatch b = datasets::random_windows(split_.train, batch_, context_, rng);
    return {Tensor::from_vector<int32_t>(b.x, Shape{batch_, context_}),
            Tensor::from_vector<int32_t>(b.y, Shape{batch_, context_}), batch_};
  }

  int64_t eval_batches() const override { return (n_eval_ + eval_batch_ - 1) / eval_batch_; }

  StepBatch eval_batch(int64_t i) override {
    int64_t begin = i * eval_batch_, valid = std::min(eval_batch_, n_eval_ - begin);
    std::vector<int32_t> x(static_cast<size_t>(eval_batch_ * context_), 0), y = x;
    for (int64_t k = 0; k < valid; k++) {
      auto start = split_.val.begin() + (begin + k) * context_;
      std::copy_n(start, context_, x.begin() + k * context_);
      std::copy_n(start + 1, context_, y.begin() + k * context_);
    }
    return {Tensor::from_vector<int32_t>(x, Shape{eval_batch_, context_}),
            Tensor::from_vector<int32_t>(y, Shape{eval_batch_, context_}), valid};
  }

  const datasets::Vocab* vocab() const override { return &vocab_; }

 private:
  int64_t batch_, context_, eval_batch_;
  uint64_t seed_;
  datasets::Vocab vocab_;
  datasets::TokenSplit split_;
  int64_t batches_ = 0, n_eval_ = 0, epoch_ = 0, next_ = 0;
};

}  // namespace

std::unique_ptr<DataSource> text_source(const config::Config& config) {
  return std::make_unique<Text>(config);
}

}  // namespace tc::train
