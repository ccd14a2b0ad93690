// A text corpus as a DataSource for language models, its tokens bytes or the characters it holds
// (data.vocab): 90% of the tokens for training, drawn as random windows (batch i of the run from
// a generator seeded by train.seed and i, so any position is re-entered exactly), the last 10%
// cut into consecutive windows to evaluate on.
// An epoch is as many windows as the training tokens hold (or data.limit windows).
#pragma once

#include <memory>

#include "apps/train/data_source.h"

namespace tc::train {

std::unique_ptr<DataSource> text_source(const config::Config& config);

}  // namespace tc::train
