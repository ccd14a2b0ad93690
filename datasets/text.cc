#include "datasets/text.h"

#include <algorithm>
#include <filesystem>

#include "datasets/read_file.h"
#include "tinycore/error.h"

namespace tc::datasets {
namespace fs = std::filesystem;

std::string read_text_corpus(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    fail("read_text_corpus: %s does not exist%s", path,
         path == kFortunesDir ? " (install Debian's fortunes package: bash tools/setup.sh)" : "");
  std::vector<std::string> files;
  if (fs::is_directory(path, ec)) {
    for (const fs::directory_entry& e : fs::directory_iterator(path)) {
      std::string ext = e.path().extension().string();
      if (e.is_regular_file() && ext != ".dat" && ext != ".u8") files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  std::string text;
  for (const std::string& f : files) {
    std::vector<uint8_t> b = read_file(f, "read_text_corpus");
    text.append(b.begin(), b.end());
  }
  if (text.empty()) fail("read_text_corpus: %s holds no text", path);
  return text;
}

Vocab Vocab::bytes() {
  Vocab v;
  for (int b = 0; b < 256; b++) {
    v.bytes_.push_back(static_cast<uint8_t>(b));
    v.token_[b] = b;
  }
  return v;
}

Vocab Vocab::chars(std::string_view text) {
  std::array<bool, 256> seen{};
  for (char c : text) seen[static_cast<uint8_t>(c)] = true;
  Vocab v;
  v.token_.fill(-1);
  for (int b = 0; b < 256; b++)
    if (seen[b]) {
      v.token_[b] = v.size();
      v.bytes_.push_back(static_cast<uint8_t>(b));
    }
  return v;
}

std::vector<int32_t> Vocab::encode(std::string_view text) const {
  std::vector<int32_t> out(text.size());
  for (size_t i = 0; i < text.size(); i++) {
    uint8_t b = static_cast<uint8_t>(text[i]);
    if (token_[b] < 0)
      fail("Vocab::encode: byte 0x%02x at offset %d is not in this %d-token vocabulary", b, i,
           size());
    out[i] = token_[b];
  }
  return out;
}

std::string Vocab::decode(const std::vector<int32_t>& tokens) const {
  std::string out(tokens.size(), '\0');
  for (size_t i = 0; i < tokens.size(); i++) {
    if (tokens[i] < 0 || tokens[i] >= size())
      fail("Vocab::decode: token %d at offset %d is outside this %d-token vocabulary", tokens[i], i,
           size());
    out[i] = static_cast<char>(bytes_[tokens[i]]);
  }
  return out;
}

TokenSplit split_tokens(const std::vector<int32_t>& tokens, double val_fraction) {
  if (!(val_fraction >= 0 && val_fraction < 1))
    fail("split_tokens: val_fraction must be in [0, 1), got %g", val_fraction);
  auto cut = tokens.begin() + static_cast<std::ptrdiff_t>(tokens.size() * (1 - val_fraction));
  return {std::vector<int32_t>(tokens.begin(), cut), std::vector<int32_t>(cut, tokens.end())};
}

TokenBatch random_windows(const std::vector<int32_t>& tokens, int64_t batch, int64_t context,
                          std::mt19937_64& rng) {
  if (batch <= 0 || context <= 0)
    fail("random_windows: batch and context must be positive, got %d and %d", batch, context);
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n < context + 1)
    fail("random_windows: %d tokens are too few for a window of %d + 1", n, context);
  TokenBatch out{batch, context, std::vector<int32_t>(batch * context),
                 std::vector<int32_t>(batch * context)};
  for (int64_t b = 0; b < batch; b++) {
    int64_t start = static_cast<int64_t>(rng() % static_cast<uint64_t>(n - context));
    std::copy_n(&tokens[start], context, &out.x[b * context]);
    std::copy_n(&tokens[start + 1], context, &out.y[b * context]);
  }
  return out;
}

}  // namespace tc::datasets
