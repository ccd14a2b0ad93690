// MNIST-style IDX files (also gzip-compressed, as Debian's dataset-fashion-mnist ships them):
// a magic number naming the element type and rank, big-endian dimensions, then the data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tc::datasets {

struct IdxArray {
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // unsigned bytes (the only element type MNIST uses)
};

// Reads `path` (".gz" is decompressed); throws tc::Error naming the file for a missing or
// unreadable file, a wrong magic number, an element type other than unsigned byte, or a file
// shorter or longer than its dimensions say.
IdxArray read_idx(const std::string& path);

// Fashion-MNIST / MNIST: images (n, 28, 28) and labels (n,) from a directory holding
// {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]. Throws when counts disagree.
struct MnistSplit {
  IdxArray images, labels;
};
MnistSplit load_mnist(const std::string& dir, bool train);

// Where Debian's dataset-fashion-mnist package puts the files.
inline const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
// Its classes, by label.
inline const char* const kFashionMnistClasses[10] = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
// The side of its square images.
inline constexpr int64_t kMnistSide = 28;

}  // namespace tc::datasets
