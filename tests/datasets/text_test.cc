// Text corpora: a file and a folder the test writes (fortune's .dat/.u8 files left out), byte and
// char vocabularies against a naive sorted set, the split, random windows whose y is x shifted,
// every error, and Debian's fortunes as the default corpus.
#include "datasets/text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "tinycore/error.h"

namespace {

namespace fs = std::filesystem;
using tc::datasets::read_text_corpus;
using tc::datasets::TokenBatch;
using tc::datasets::Vocab;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

class TextFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tinycore-text-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  fs::path dir_;
};

TEST_F(TextFiles, FileAndFolderOfFortunes) {
  write("corpus/zoo", "Zebras.\n%\n");
  write("corpus/art", "A poem.\n%\n");
  write("corpus/art.dat", std::string("\0\0\0\x02\0\0\0\x01", 8));  // strfile's binary index
  fs::create_symlink("art", dir_ / "corpus" / "art.u8");            // the package's UTF-8 links
  write("corpus/off/rude", "not read: a sub-folder\n");
  EXPECT_EQ(read_text_corpus((dir_ / "corpus").string()), "A poem.\n%\nZebras.\n%\n");
  EXPECT_EQ(read_text_corpus((dir_ / "corpus" / "zoo").string()), "Zebras.\n%\n");
  std::string missing = (dir_ / "missing").string();
  EXPECT_THAT(
      [&] { read_text_corpus(missing); },
      ThrowsMessage<tc::Error>(HasSubstr("read_text_corpus: " + missing + " does not exist")));
  fs::create_directories(dir_ / "empty");
  write("blank", "");
  for (const char* empty : {"empty", "blank"})
    EXPECT_THAT([&] { read_text_corpus((dir_ / empty).string()); },
                ThrowsMessage<tc::Error>(HasSubstr((dir_ / empty).string() + " holds no text")));
}

TEST(Vocab, BytesAreTheirOwnTokens) {
  Vocab v = Vocab::bytes();
  EXPECT_EQ(v.size(), 256);
  std::string all;
  for (int b = 255; b >= 0; b--) all.push_back(static_cast<char>(b));
  std::vector<int32_t> tokens = v.encode(all);
  for (int i = 0; i < 256; i++) EXPECT_EQ(tokens[i], 255 - i);
  EXPECT_EQ(v.decode(tokens), all);
  EXPECT_THAT(
      [&] {
        v.decode({3, 256});
      },
      ThrowsMessage<tc::Error>(
          HasSubstr("token 256 at offset 1 is outside this 256-token vocabulary")));
}

TEST(Vocab, CharsAreTheSortedBytesOfTheText) {
  std::string text = "the quick brown fox, caf\xc3\xa9!\n";
  Vocab v = Vocab::chars(text);
  std::set<uint8_t> unique(text.begin(), text.end());  // the naive reference: sorted, unique
  std::vector<uint8_t> sorted(unique.begin(), unique.end());
  ASSERT_EQ(v.size(), static_cast<int32_t>(sorted.size()));
  std::vector<int32_t> tokens = v.encode(text);
  for (size_t i = 0; i < text.size(); i++) {
    int32_t want = static_cast<int32_t>(
        std::find(sorted.begin(), sorted.end(), static_cast<uint8_t>(text[i])) - sorted.begin());
    EXPECT_EQ(tokens[i], want) << i;
  }
  EXPECT_EQ(tokens[text.size() - 1], 0);  // '\n' is the smallest byte
  EXPECT_EQ(v.decode(tokens), text);
  EXPECT_THAT([&] { v.encode("quiz"); },
              ThrowsMessage<tc::Error>(HasSubstr("byte 0x7a at offset 3 is not in this")));
  EXPECT_THAT([&] { v.decode({-1}); }, ThrowsMessage<tc::Error>(HasSubstr("token -1 at offset 0")));
}

TEST(TextSplit, TrainThenValidation) {
  std::vector<int32_t> tokens = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
  tc::datasets::TokenSplit s = tc::datasets::split_tokens(tokens, 0.2);
  EXPECT_EQ(s.train, (std::vector<int32_t>{5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(s.val, (std::vector<int32_t>{13, 14}));
  EXPECT_EQ(tc::datasets::split_tokens(tokens, 0).train, tokens);
  EXPECT_THAT([&] { tc::datasets::split_tokens(tokens, 1); },
              ThrowsMessage<tc::Error>(HasSubstr("val_fraction must be in [0, 1), got 1")));
}

TEST(TextWindows, YIsXShiftedAndStartsCoverTheText) {
  const int64_t n = 12, context = 4, batch = 100;
  std::vector<int32_t> tokens(n);
  for (int64_t i = 0; i < n; i++) tokens[i] = static_cast<int32_t>(100 + i * 3);  // start = value
  std::mt19937_64 rng(7);
  TokenBatch b = tc::datasets::random_windows(tokens, batch, context, rng);
  ASSERT_EQ(b.x.size(), static_cast<size_t>(batch * context));
  ASSERT_EQ(b.y.size(), b.x.size());
  std::set<int64_t> starts;
  for (int64_t r = 0; r < batch; r++) {
    int64_t start = (b.x[r * context] - 100) / 3;
    ASSERT_GE(start, 0);
    ASSERT_LE(start, n - context - 1);  // the last window's y ends at the last token
    starts.insert(start);
    for (int64_t t = 0; t < context; t++) {
      EXPECT_EQ(b.x[r * context + t], tokens[start + t]);
      EXPECT_EQ(b.y[r * context + t], tokens[start + t + 1]);
    }
  }
  EXPECT_EQ(starts.size(), static_cast<size_t>(n - context));  // every start drawn in 100
  std::mt19937_64 same(7), other(8);
  EXPECT_EQ(tc::datasets::random_windows(tokens, batch, context, same).x, b.x);
  EXPECT_NE(tc::datasets::random_windows(tokens, batch, context, other).x, b.x);
  EXPECT_NE(tc::datasets::random_windows(tokens, batch, context, rng).x, b.x);  // the next batch
  EXPECT_THAT([&] { tc::datasets::random_windows(tokens, 2, 12, rng); },
              ThrowsMessage<tc::Error>(HasSubstr("12 tokens are too few for a window of 12 + 1")));
  EXPECT_THAT([&] { tc::datasets::random_windows(tokens, 0, 3, rng); },
              ThrowsMessage<tc::Error>(HasSubstr("batch and context must be positive")));
}

TEST(Fortunes, DebianPackageIsTheDefaultCorpus) {
  // installed by tools/setup.sh (fortunes): its data files, by name, from "art" to "zippy"
  std::string text = read_text_corpus();
  fs::path dir = tc::datasets::kFortunesDir;
  std::string first = slurp(dir / "art"), last = slurp(dir / "zippy");
  ASSERT_GT(first.size(), 10000u);
  EXPECT_GT(text.size(), 2000000u);
  EXPECT_EQ(text.substr(0, first.size()), first);
  EXPECT_EQ(text.substr(text.size() - last.size()), last);
  EXPECT_EQ(text.find('\0'), std::string::npos);  // no strfile index (.dat) got in
  Vocab chars = Vocab::chars(text);
  EXPECT_GT(chars.size(), 90);  // printable ASCII and then some
  EXPECT_EQ(chars.decode(chars.encode(text)), text);
}

}  // namespace
