// What the trainer reads: a training stream in a fixed, seeded order that can be re-entered at
// any (epoch, batch), and a fixed evaluation set, as device tensors ready for a step. Inputs x
// are whatever the model takes (images (B, C, H, W) float, tokens (B, T) int32); targets y are
// the class index of each output position ((B,) or (B, T) int32), so one loss serves all:
// sparse cross-entropy over the last axis of the logits.
#pragma once

#include <cstdint>
#include <memory>

#include "apps/common/config.h"
#include "datasets/text.h"
#include "tinycore/tensor.h"

namespace tc::train {

struct StepBatch {
  Tensor x, y;
  int64_t valid = 0;  // rows that are real data (an evaluation batch is padded to full size)
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual int64_t batches_per_epoch() const = 0;
  // Positions the training stream before batch `batch` of epoch `epoch`: the batches that follow
  // are the ones an uninterrupted run would see there.
  virtual void seek(int64_t epoch, int64_t batch) = 0;
  virtual StepBatch next_train() = 0;  // throws past the end of the epoch
  virtual int64_t eval_batches() const = 0;
  virtual StepBatch eval_batch(int64_t i) = 0;  // every one the same shape
  // Text: its tokens (a model.vocab of 0 takes their number; throughput is also counted in
  // tokens). Images: none.
  virtual const datasets::Vocab* vocab() const { return nullptr; }
};

// The data set config.data names, batched as config.train says. Throws tc::Error naming the key
// for a data set that does not fit the model (channels, classes, vocabulary, context).
std::unique_ptr<DataSource> make_data_source(const config::Config& config);

}  // namespace tc::train
