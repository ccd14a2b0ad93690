#include "apps/common/run_vocab.h"

#include <fstream>
#include <iterator>

#include "tinycore/error.h"

namespace tc::config {

datasets::Vocab load_run_vocab(const std::string& dir, const Config& config) {
  if (config.data.name != "text" || config.data.vocab != "chars") return datasets::Vocab::bytes();
  const std::string path = dir + "/" + kVocabFile;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail("%s: missing or unreadable; a run with data.vocab chars keeps its tokens there", path);
  std::string symbols((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  datasets::Vocab vocab = datasets::Vocab::chars(symbols);
  if (symbols.empty() || vocab.symbols() != symbols || vocab.size() > config.model.vocab)
    fail("%s: expected up to %d distinct bytes in order (model.vocab), got %d bytes", path,
         config.model.vocab, symbols.size());
  return vocab;
}

}  // namespace tc::config
