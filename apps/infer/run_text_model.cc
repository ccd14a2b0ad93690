// The GPT of a train run as a TextModel: its bytes or characters are the tokens (data.vocab), and
// it has no end-of-text token and no batched prefill (a prompt is fed one token a step).
#include "apps/common/run_vocab.h"
#include "apps/infer/run_files.h"
#include "apps/infer/text_model.h"
#include "nn/transformer.h"
#include "tinycore/error.h"

namespace tc::infer {
namespace {

class RunTextModel : public TextModel {
 public:
  explicit RunTextModel(const std::string& dir)
      : run_(load_run(dir)), vocab_(config::load_run_vocab(dir, run_.config)) {
    if (run_.config.model.name != "gpt")
      fail("run '%s' is a %s model, not a GPT: use --image", dir, run_.config.model.name);
    gpt_ = static_cast<nn::GPT*>(run_.model.get());
  }
  // only tokens the vocabulary can decode (a model.vocab above it has rows never trained)
  int64_t vocab() const override { return vocab_.size(); }
  int64_t context() const override { return run_.config.model.context; }
  std::vector<int32_t> encode(std::string_view text) const override { return vocab_.encode(text); }
  std::string token_text(int32_t token) const override { return vocab_.decode({token}); }
  bool ends_text(int32_t) const override { return false; }
  void allocate(int64_t) override {}  // the GPT's caches follow the batch of each decode
  Tensor decode(const Tensor& tokens, const Tensor& positions) override {
    return gpt_->decode(tokens, positions);
  }

 private:
  LoadedRun run_;
  datasets::Vocab vocab_;  // what train's text data used (config::load_run_vocab)
  nn::GPT* gpt_;
};

}  // namespace

std::unique_ptr<TextModel> load_run_text_model(const std::string& run_dir) {
  return std::make_unique<RunTextModel>(run_dir);
}

}  // namespace tc::infer
