// Every image data set as one DataSource: the training samples through the background
// DataLoader (shuffled per epoch under train.seed, full batches only so every step has one
// shape), the test samples as evaluation batches padded to train.eval_batch_size. A data set
// only says what its samples are and how to fetch one (apps/train/image_data.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/train/data_source.h"
#include "datasets/loader.h"

namespace tc::train {

struct ImageSet {
  std::string name;            // the data set, for messages
  std::vector<int64_t> shape;  // (C, H, W) of a sample as the model takes it
  int64_t n_train = 0;         // training samples (data.limit applies on top)
  int64_t n_test = 0;          // evaluation samples (data.eval_limit applies on top)
  datasets::DataLoader::EpochFetch train = {};  // training sample i of an epoch (may be augmented)
  datasets::DataLoader::Fetch test = {};        // evaluation sample i; may run on several threads
};

std::unique_ptr<DataSource> image_source(ImageSet set, const config::Config& config);

// Checks, before any file is read, that a data set of `classes` classes with samples of `shape`
// fits config.model; throws tc::Error naming the key (model.in_channels, model.classes, ...).
void check_model_fits(const config::Config& config, const std::string& data_name,
                      const std::vector<int64_t>& shape, int64_t classes);

}  // namespace tc::train
