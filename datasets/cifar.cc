#include "datasets/cifar.h"

#include "datasets/read_file.h"
#include "tinycore/error.h"

namespace tc::datasets {

CifarSplit read_cifar_file(const std::string& path, Cifar kind) {
  std::vector<uint8_t> b = read_file(path, "read_cifar_file");
  const bool c100 = kind == Cifar::k100;
  const size_t label_bytes = c100 ? 2 : 1, record = label_bytes + kCifarImageBytes;
  const char* name = c100 ? "CIFAR-100" : "CIFAR-10";
  if (b.empty() || b.size() % record != 0)
    fail(
        "read_cifar_file: %s holds %d bytes, not a whole number of %s records of %d bytes "
        "(truncated, or not %s?)",
        path, b.size(), name, record, name);
  CifarSplit s;
  s.n = static_cast<int64_t>(b.size() / record);
  s.images.resize(s.n * kCifarImageBytes);
  s.labels.resize(s.n);
  if (c100) s.coarse_labels.resize(s.n);
  for (int64_t i = 0; i < s.n; i++) {
    const uint8_t* r = &b[i * record];
    // the label bytes are the only check that the file is the format we think it is
    auto label = [&](uint8_t v, int classes, const char* what) {
      if (v >= classes)
        fail("read_cifar_file: %s: record %d has %s label %d, %s has %d", path, i, what, v, name,
             classes);
      return v;
    };
    if (c100) s.coarse_labels[i] = label(r[0], 20, "coarse");
    s.labels[i] = c100 ? label(r[1], 100, "fine") : label(r[0], 10, "class");
    std::copy(r + label_bytes, r + record, &s.images[i * kCifarImageBytes]);
  }
  return s;
}

namespace {

void append(CifarSplit& to, CifarSplit&& from) {
  to.n += from.n;
  to.images.insert(to.images.end(), from.images.begin(), from.images.end());
  to.labels.insert(to.labels.end(), from.labels.begin(), from.labels.end());
  to.coarse_labels.insert(to.coarse_labels.end(), from.coarse_labels.begin(),
                          from.coarse_labels.end());
}

}  // namespace

CifarSplit load_cifar10(const std::string& dir, bool train) {
  if (!train) return read_cifar_file(dir + "/test_batch.bin", Cifar::k10);
  CifarSplit all;
  for (int i = 1; i <= 5; i++)
    append(all, read_cifar_file(dir + "/data_batch_" + std::to_string(i) + ".bin", Cifar::k10));
  return all;
}

CifarSplit load_cifar100(const std::string& dir, bool train) {
  return read_cifar_file(dir + (train ? "/train.bin" : "/test.bin"), Cifar::k100);
}

}  // namespace tc::datasets
