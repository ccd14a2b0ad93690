// CIFAR-10 and CIFAR-100 in their binary versions (cifar-10-batches-bin, cifar-100-binary):
// fixed-size records of label byte(s) then a 32x32 colour image as red, green and blue planes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tc::datasets {

enum class Cifar { k10, k100 };

struct CifarSplit {
  int64_t n = 0;
  std::vector<uint8_t> images;         // (n, 3, 32, 32): each image's R, G, B planes, row-major
  std::vector<uint8_t> labels;         // (n,): CIFAR-10's class (0..9), CIFAR-100's fine (0..99)
  std::vector<uint8_t> coarse_labels;  // (n,): CIFAR-100's superclass (0..19); empty for CIFAR-10
};

inline constexpr int64_t kCifarImageBytes = 3 * 32 * 32;

// One file of records: CIFAR-10's <label><3072 pixels>, CIFAR-100's <coarse><fine><3072 pixels>.
// Throws tc::Error naming the file when it is missing, empty, not a whole number of records
// (truncated, or the other CIFAR's format), or holds a label out of range.
CifarSplit read_cifar_file(const std::string& path, Cifar kind);

// CIFAR-10 from cifar-10-batches-bin: data_batch_1.bin .. data_batch_5.bin (train, in that
// order) or test_batch.bin.
CifarSplit load_cifar10(const std::string& dir, bool train);

// CIFAR-100 from cifar-100-binary: train.bin or test.bin.
CifarSplit load_cifar100(const std::string& dir, bool train);

}  // namespace tc::datasets
