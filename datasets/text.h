// Text for character- or byte-level language models: a corpus read from a file or a folder of
// files, a vocabulary of bytes, a train/val split, and random windows of tokens as (x, y) batches
// where y is x shifted one token on.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace tc::datasets {

// The default corpus: Debian's fortunes package (about 2.6 MB of English quotes and jokes).
inline const char* kFortunesDir = "/usr/share/games/fortunes";

// The text of `path`: a file, or every data file directly in a folder, by name order, joined
// (fortune's index files *.dat and its *.u8 links to the data files are left out). Throws
// tc::Error naming the path when it is missing or holds no text.
std::string read_text_corpus(const std::string& path = kFortunesDir);

// Tokens are bytes: all 256 of them, or only those a text uses (sorted, so the token order is the
// byte order). Characters beyond ASCII are their UTF-8 bytes, as in byte-level models.
class Vocab {
 public:
  static Vocab bytes();
  static Vocab chars(std::string_view text);

  int32_t size() const { return static_cast<int32_t>(bytes_.size()); }
  std::vector<int32_t> encode(std::string_view text) const;      // throws on a byte not in it
  std::string decode(const std::vector<int32_t>& tokens) const;  // throws on a token out of range
  // The tokens' bytes in token order: Vocab::chars(symbols()) is this vocabulary again.
  std::string symbols() const { return std::string(bytes_.begin(), bytes_.end()); }

 private:
  std::vector<uint8_t> bytes_;      // token -> byte
  std::array<int32_t, 256> token_;  // byte -> token, -1 where it has none
};

// The first 1 - val_fraction of the tokens for training, the rest for validation: two contiguous
// pieces, so no window spans both.
struct TokenSplit {
  std::vector<int32_t> train, val;
};
TokenSplit split_tokens(const std::vector<int32_t>& tokens, double val_fraction);

struct TokenBatch {
  int64_t batch = 0, context = 0;
  std::vector<int32_t> x, y;  // (batch, context) each, row-major: y[b][t] = x[b][t + 1]
};
// `batch` windows of context + 1 tokens, each starting at a uniformly random place drawn from
// rng (the same rng state, the same batch). Throws when the tokens are fewer than a window.
TokenBatch random_windows(const std::vector<int32_t>& tokens, int64_t batch, int64_t context,
                          std::mt19937_64& rng);

}  // namespace tc::datasets
