// IDX files: small ones the test writes (plain and gzip) read back exactly; every kind of damage
// is an error naming the file; and Debian's Fashion-MNIST reads with the counts it documents.
#include "datasets/idx.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "tests/temp_cache_dir.h"
#include "tinycore/error.h"
#include "tinycore/runtime/disk_cache.h"

namespace {

using tc::datasets::read_idx;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data,
                      uint8_t type = 0x08) {
  std::string b = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<char>((d >> s) & 0xff));
  b.append(data.begin(), data.end());
  return b;
}

// Files in a folder of their own, and a disk cache of its own (TempCacheDir).
class IdxFiles : public tc::TempCacheDir {
 protected:
  void SetUp() override {
    TempCacheDir::SetUp();
    files_ = fs::temp_directory_path() / ("tinycore-idx-test-" + std::to_string(::getpid()));
    fs::create_directories(files_);
  }
  void TearDown() override {
    fs::remove_all(files_);
    TempCacheDir::TearDown();
  }
  std::string write(const std::string& name, const std::string& bytes, bool gz = false) {
    std::string p = (files_ / name).string();
    if (gz) {
      gzFile f = gzopen(p.c_str(), "wb");
      gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
      gzclose(f);
    } else {
      std::ofstream(p, std::ios::binary) << bytes;
    }
    return p;
  }
  std::string error_of(const std::string& path) {
    try {
      read_idx(path);
    } catch (const tc::Error& e) {
      return e.what();
    }
    return "(no error)";
  }
  fs::path files_;
};

TEST_F(IdxFiles, PlainAndGzipReadBack) {
  std::vector<uint8_t> px = {0, 1, 2, 3, 250, 251, 252, 253, 9, 8, 7, 6};
  for (bool gz : {false, true}) {
    tc::datasets::IdxArray a = read_idx(write(gz ? "i.gz" : "i", idx_bytes({3, 2, 2}, px), gz));
    EXPECT_EQ(a.shape, (std::vector<int64_t>{3, 2, 2}));
    EXPECT_EQ(a.data, px);
  }
}

TEST_F(IdxFiles, DamageIsAnErrorNamingTheFile) {
  std::string good = idx_bytes({2, 2}, {1, 2, 3, 4});
  std::string p = write("short", good.substr(0, good.size() - 1));
  EXPECT_THAT(error_of(p), HasSubstr(p + " holds 3 data bytes, its dimensions need 4"));
  EXPECT_THAT(error_of(write("long", good + "x")), HasSubstr("holds 5 data bytes"));
  EXPECT_THAT(error_of(write("magic", "\x12\x34" + good.substr(2))), HasSubstr("not an IDX file"));
  EXPECT_THAT(error_of(write("float", idx_bytes({1}, {0, 0, 0, 0}, 0x0d))),
              HasSubstr("element type 0x0d"));
  EXPECT_THAT(error_of(write("tiny", "\0\0", false)), HasSubstr("too short for an IDX header"));
  EXPECT_THAT(error_of(write("dims", std::string("\0\0\x08\x03\0\0", 6))),
              HasSubstr("too short for its 3 dimensions"));
  EXPECT_THAT(error_of((files_ / "nope").string()), HasSubstr("cannot open"));
  // a gzip stream cut short
  std::string gz_path = write("cut.gz", idx_bytes({64}, std::vector<uint8_t>(64, 7)), true);
  std::string gz;
  {
    std::ifstream f(gz_path, std::ios::binary);
    gz.assign(std::istreambuf_iterator<char>(f), {});
  }
  EXPECT_THAT(error_of(write("cut2.gz", gz.substr(0, gz.size() / 2))), HasSubstr("cut2.gz"));
}

// A gzip file of 1 MiB or more is inflated once and read back from the disk cache: a copy of the
// file damaged in place (same size and time) still reads right, from the cache; a damaged cache
// entry is inflated again; a rewritten file is read anew.
TEST_F(IdxFiles, LargeGzipIsInflatedOnce) {
  std::mt19937 rng(7);
  std::vector<uint8_t> px(1300 * 1000);
  for (uint8_t& v : px) v = static_cast<uint8_t>(rng());
  std::string p = write("big.gz", idx_bytes({1300, 1000}, px), true);
  ASSERT_GE(fs::file_size(p), 1u << 20);
  EXPECT_EQ(read_idx(p).data, px);
  ASSERT_EQ(tc::runtime::cache_entries("data").size(), 1u);
  ASSERT_EQ(cache_files("data").size(), 1u);
  fs::path pack = cache_files("data")[0];

  std::string gz;
  {
    std::ifstream f(p, std::ios::binary);
    gz.assign(std::istreambuf_iterator<char>(f), {});
  }
  auto when = fs::last_write_time(p);
  std::string bad = gz;
  bad[bad.size() / 2] ^= 0x55;
  write("big.gz", bad);
  fs::last_write_time(p, when);
  EXPECT_EQ(read_idx(p).data, px) << "read from the cache";

  write("big.gz", gz);
  fs::last_write_time(p, when);
  fs::resize_file(pack, fs::file_size(pack) / 2);
  EXPECT_EQ(tc::runtime::cache_entries("data").size(), 0u);
  EXPECT_EQ(read_idx(p).data, px) << "a damaged entry is inflated again";
  EXPECT_EQ(tc::runtime::cache_entries("data").size(), 1u) << "and stored again";

  std::vector<uint8_t> other(px.rbegin(), px.rend());
  write("big.gz", idx_bytes({1000, 1300}, other), true);
  tc::datasets::IdxArray a = read_idx(p);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{1000, 1300}));
  EXPECT_EQ(a.data, other);
}

TEST_F(IdxFiles, MnistSplitChecksCounts) {
  write("train-images-idx3-ubyte", idx_bytes({2, 2, 2}, std::vector<uint8_t>(8, 1)));
  write("train-labels-idx1-ubyte.gz", idx_bytes({2}, {3, 4}), true);
  tc::datasets::MnistSplit s = tc::datasets::load_mnist(files_.string(), true);
  EXPECT_EQ(s.labels.data, (std::vector<uint8_t>{3, 4}));
  write("t10k-images-idx3-ubyte", idx_bytes({3, 2, 2}, std::vector<uint8_t>(12, 1)));
  write("t10k-labels-idx1-ubyte", idx_bytes({2}, {3, 4}));
  EXPECT_THAT([&] { tc::datasets::load_mnist(files_.string(), false); },
              ::testing::ThrowsMessage<tc::Error>(HasSubstr("do not match labels")));
  EXPECT_THAT([&] { tc::datasets::load_mnist((files_ / "empty").string(), true); },
              ::testing::ThrowsMessage<tc::Error>(HasSubstr("nor its .gz exists")));
}

using FashionMnist = tc::TempCacheDir;  // its inflated images go to a cache of the test's own

TEST_F(FashionMnist, DebianPackageReads) {
  // installed by tools/setup.sh (dataset-fashion-mnist)
  tc::datasets::MnistSplit test = tc::datasets::load_mnist(tc::datasets::kFashionMnistDir, false);
  EXPECT_EQ(test.images.shape, (std::vector<int64_t>{10000, 28, 28}));
  std::vector<int> count(10, 0);
  for (uint8_t l : test.labels.data) {
    ASSERT_LT(l, 10);
    count[l]++;
  }
  for (int c : count) EXPECT_EQ(c, 1000);  // the test split is balanced
}

}  // namespace
