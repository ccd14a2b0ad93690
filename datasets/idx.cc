#include "datasets/idx.h"

#include <filesystem>

#include "datasets/read_file.h"
#include "tinycore/error.h"
#include "tinycore/helpers.h"

namespace tc::datasets {

IdxArray read_idx(const std::string& path) {
  std::vector<uint8_t> b = read_file(path, "read_idx");
  if (b.size() < 4) fail("read_idx: %s is too short for an IDX header (%d bytes)", path, b.size());
  if (b[0] != 0 || b[1] != 0)
    fail("read_idx: %s has magic number %02x%02x%02x%02x, not an IDX file", path, b[0], b[1], b[2],
         b[3]);
  if (b[2] != 0x08)
    fail("read_idx: %s holds element type 0x%02x; only unsigned bytes (0x08) are read", path, b[2]);
  int rank = b[3];
  if (rank < 1 || b.size() < 4 + 4 * static_cast<size_t>(rank))
    fail("read_idx: %s is too short for its %d dimensions", path, rank);
  IdxArray a;
  uint64_t n = 1;
  for (int i = 0; i < rank; i++) {
    const uint8_t* p = &b[4 + 4 * i];
    uint32_t d = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    a.shape.push_back(d);
    n *= d;
    if (n > (uint64_t{1} << 40)) fail("read_idx: %s has dimensions too large to be real", path);
  }
  size_t header = 4 + 4 * static_cast<size_t>(rank);
  if (b.size() - header != n)
    fail("read_idx: %s holds %d data bytes, its dimensions need %d (truncated?)", path,
         b.size() - header, n);
  a.data.assign(b.begin() + static_cast<std::ptrdiff_t>(header), b.end());
  return a;
}

MnistSplit load_mnist(const std::string& dir, bool train) {
  auto find = [&](const std::string& stem) {
    for (const std::string& p : {dir + "/" + stem, dir + "/" + stem + ".gz"})
      if (std::filesystem::exists(p)) return p;
    fail("load_mnist: neither %s/%s nor its .gz exists%s", dir, stem,
         dir == kFashionMnistDir ? " (install Debian's dataset-fashion-mnist: bash tools/setup.sh)"
                                 : "");
  };
  std::string prefix = train ? "train" : "t10k";
  MnistSplit s{read_idx(find(prefix + "-images-idx3-ubyte")),
               read_idx(find(prefix + "-labels-idx1-ubyte"))};
  if (s.images.shape.size() != 3 || s.labels.shape.size() != 1 ||
      s.images.shape[0] != s.labels.shape[0])
    fail("load_mnist: %s: images of shape %s do not match labels of shape %s", dir,
         fmt_shape(s.images.shape), fmt_shape(s.labels.shape));
  return s;
}

}  // namespace tc::datasets
