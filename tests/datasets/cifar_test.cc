// CIFAR-10/100 binary files the test writes read back record by record (labels, pixel planes, the
// order of the five training batches); truncated, mistyped, missing files and bad labels are
// errors naming the file.
#include "datasets/cifar.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tinycore/error.h"

namespace {

namespace fs = std::filesystem;
using tc::datasets::Cifar;
using tc::datasets::CifarSplit;
using tc::datasets::kCifarImageBytes;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// A recognisable pixel for (record, byte offset): checks both where a record starts and the
// order of the planes inside it.
uint8_t pixel(int record, int offset) { return static_cast<uint8_t>(record * 31 + offset * 7); }

std::string records(int first, int count, const std::vector<std::vector<uint8_t>>& labels) {
  std::string b;
  for (int r = 0; r < count; r++) {
    for (uint8_t l : labels[r]) b.push_back(static_cast<char>(l));
    for (int o = 0; o < kCifarImageBytes; o++) b.push_back(static_cast<char>(pixel(first + r, o)));
  }
  return b;
}

class CifarFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tinycore-cifar-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& bytes) {
    std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  void expect_images(const CifarSplit& s, int first_record) {
    ASSERT_EQ(s.images.size(), static_cast<size_t>(s.n * kCifarImageBytes));
    for (int64_t i = 0; i < s.n; i++)
      for (int o = 0; o < kCifarImageBytes; o += 97)  // a spread of offsets in every plane
        ASSERT_EQ(s.images[i * kCifarImageBytes + o], pixel(first_record + i, o)) << i << " " << o;
  }
  fs::path dir_;
};

TEST_F(CifarFiles, Cifar10RecordsReadBack) {
  CifarSplit s =
      tc::datasets::read_cifar_file(write("b.bin", records(0, 3, {{7}, {0}, {9}})), Cifar::k10);
  EXPECT_EQ(s.n, 3);
  EXPECT_EQ(s.labels, (std::vector<uint8_t>{7, 0, 9}));
  EXPECT_TRUE(s.coarse_labels.empty());
  expect_images(s, 0);
  // the red plane is the first 1024 bytes: pixel (row 1, col 2) of the green plane of record 2
  EXPECT_EQ(s.images[2 * kCifarImageBytes + 1024 + 32 * 1 + 2], pixel(2, 1024 + 34));
}

TEST_F(CifarFiles, Cifar10TrainJoinsTheFiveBatchesInOrder) {
  for (int b = 1; b <= 5; b++)
    write("data_batch_" + std::to_string(b) + ".bin",
          records(2 * (b - 1), 2, {{static_cast<uint8_t>(b)}, {static_cast<uint8_t>(b)}}));
  write("test_batch.bin", records(100, 1, {{4}}));
  CifarSplit train = tc::datasets::load_cifar10(dir_.string(), true);
  EXPECT_EQ(train.n, 10);
  EXPECT_EQ(train.labels, (std::vector<uint8_t>{1, 1, 2, 2, 3, 3, 4, 4, 5, 5}));
  expect_images(train, 0);
  CifarSplit test = tc::datasets::load_cifar10(dir_.string(), false);
  EXPECT_EQ(test.labels, (std::vector<uint8_t>{4}));
  expect_images(test, 100);
  fs::remove(dir_ / "data_batch_4.bin");
  EXPECT_THAT(
      [&] { tc::datasets::load_cifar10(dir_.string(), true); },
      ThrowsMessage<tc::Error>(HasSubstr("cannot open " + (dir_ / "data_batch_4.bin").string())));
}

TEST_F(CifarFiles, Cifar100HasCoarseAndFineLabels) {
  write("train.bin", records(0, 2, {{19, 99}, {3, 42}}));
  write("test.bin", records(5, 1, {{0, 1}}));
  CifarSplit train = tc::datasets::load_cifar100(dir_.string(), true);
  EXPECT_EQ(train.coarse_labels, (std::vector<uint8_t>{19, 3}));
  EXPECT_EQ(train.labels, (std::vector<uint8_t>{99, 42}));
  expect_images(train, 0);
  CifarSplit test = tc::datasets::load_cifar100(dir_.string(), false);
  EXPECT_EQ(test.coarse_labels, (std::vector<uint8_t>{0}));
  EXPECT_EQ(test.labels, (std::vector<uint8_t>{1}));
  expect_images(test, 5);
}

TEST_F(CifarFiles, DamageIsAnErrorNamingTheFile) {
  auto error_of = [](const std::string& path, Cifar kind) -> std::string {
    try {
      tc::datasets::read_cifar_file(path, kind);
    } catch (const tc::Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  std::string two = records(0, 2, {{1}, {2}});
  std::string p = write("cut.bin", two.substr(0, two.size() - 5));
  EXPECT_THAT(error_of(p, Cifar::k10),
              HasSubstr(p + " holds 6141 bytes, not a whole number of CIFAR-10 records of 3073"));
  // a CIFAR-100 file read as CIFAR-10: its records are one byte longer
  std::string c100 = write("c100.bin", records(0, 2, {{1, 2}, {3, 4}}));
  EXPECT_THAT(error_of(c100, Cifar::k10), HasSubstr("not a whole number of CIFAR-10 records"));
  EXPECT_THAT(error_of(write("two.bin", two), Cifar::k100),
              HasSubstr("not a whole number of CIFAR-100 records of 3074 bytes"));
  EXPECT_THAT(error_of(write("empty.bin", ""), Cifar::k10), HasSubstr("empty.bin holds 0 bytes"));
  std::string bad = write("label.bin", records(0, 2, {{3}, {10}}));
  EXPECT_THAT(error_of(bad, Cifar::k10),
              HasSubstr(bad + ": record 1 has class label 10, CIFAR-10 has 10"));
  EXPECT_THAT(error_of(write("fine.bin", records(0, 1, {{2, 100}})), Cifar::k100),
              HasSubstr("record 0 has fine label 100, CIFAR-100 has 100"));
  EXPECT_THAT(error_of(write("coarse.bin", records(0, 1, {{20, 5}})), Cifar::k100),
              HasSubstr("record 0 has coarse label 20, CIFAR-100 has 20"));
  EXPECT_THAT(error_of((dir_ / "missing.bin").string(), Cifar::k10),
              HasSubstr("read_cifar_file: cannot open " + (dir_ / "missing.bin").string()));
  EXPECT_THAT([&] { tc::datasets::load_cifar100((dir_ / "nope").string(), false); },
              ThrowsMessage<tc::Error>(HasSubstr((dir_ / "nope" / "test.bin").string())));
}

}  // namespace
