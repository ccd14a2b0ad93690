// The tokens of a GPT run's text, as train made them and infer reads them back: bytes (data.vocab
// bytes), or the characters its corpus held (chars). A chars run keeps them in its folder as
// vocab.bin (the tokens' bytes in token order), since the corpus may change or move after
// training and a different set of characters would give the tokens other meanings.
#pragma once

#include <string>

#include "apps/common/config.h"
#include "datasets/text.h"

namespace tc::config {

inline constexpr const char* kVocabFile = "vocab.bin";  // Vocab::symbols()

// The vocabulary of the run in `dir` whose config is `config`. Throws tc::Error naming the file
// when a chars run has none, or one that is not distinct bytes in order or is larger than
// model.vocab. Runs of other data than text get bytes.
datasets::Vocab load_run_vocab(const std::string& dir, const Config& config);

}  // namespace tc::config
