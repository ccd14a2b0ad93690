#include "apps/train/image_data.h"

#include <algorithm>
#include <array>
#include <filesystem>

#include "apps/train/image_source.h"
#include "apps/train/image_transform.h"
#include "datasets/idx.h"
#include "datasets/image_folder.h"
#include "tinycore/error.h"

namespace tc::train {
namespace {

namespace fs = std::filesystem;

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// Training and test images held in memory as 8-bit CHW planes of h x w with a label byte each
// (Fashion-MNIST, CIFAR); `owner` keeps the bytes alive as long as the fetches that read them.
struct Pixels {
  std::shared_ptr<const void> owner;
  const uint8_t *train_images, *train_labels, *test_images, *test_labels;
  int64_t n_train, n_test;
};

ImageSet in_memory(const std::string& name, const std::vector<int64_t>& shape, int h, int w,
                   std::shared_ptr<const ImageTransform> t, const Pixels& p) {
  const int64_t stride = shape[0] * h * w;  // one stored image
  ImageSet s{.name = name, .shape = shape, .n_train = p.n_train, .n_test = p.n_test};
  s.train = [p, t, h, w, stride](int64_t i, int64_t epoch, float* x, int32_t* y) {
    t->train_planes(p.train_images + i * stride, h, w, epoch, i, x);
    *y = p.train_labels[i];
  };
  s.test = [p, t, h, w, stride](int64_t i, float* x, int32_t* y) {
    t->eval_planes(p.test_images + i * stride, h, w, x);
    *y = p.test_labels[i];
  };
  return s;
}

// The first class folder only one of two sorted lists has.
std::string first_difference(const std::vector<std::string>& a, const std::vector<std::string>& b,
                             bool* in_a) {
  for (const std::string& c : a)
    if (!std::binary_search(b.begin(), b.end(), c)) return *in_a = true, c;
  for (const std::string& c : b)
    if (!std::binary_search(a.begin(), a.end(), c)) return *in_a = false, c;
  return "";
}

}  // namespace

std::unique_ptr<DataSource> fashion_mnist_source(const config::Config& c) {
  constexpr int kSide = static_cast<int>(datasets::kMnistSide);
  auto t = std::make_shared<const ImageTransform>(c.data, 1, c.train.seed);
  std::vector<int64_t> shape = t->shape(kSide, kSide);
  check_model_fits(c, "fashion_mnist", shape, 10);  // before the files are read
  const std::string dir = c.data.path.empty() ? datasets::kFashionMnistDir : c.data.path;
  auto has = [&](const std::string& f) {
    std::error_code ec;
    return fs::exists(dir + "/" + f, ec);
  };
  if (!has("train-images-idx3-ubyte") && !has("train-images-idx3-ubyte.gz") &&
      is_dir(fs::path(dir) / "train"))
    fail(
        "data.path: %s holds no Fashion-MNIST IDX files but a train/ folder: for a folder of "
        "images (train/<class>/, val/<class>/) set data.name=image_folder (and "
        "model.in_channels=3 for colour images)",
        dir);
  auto splits = std::make_shared<const std::array<datasets::MnistSplit, 2>>(
      std::array{datasets::load_mnist(dir, true), datasets::load_mnist(dir, false)});
  const datasets::MnistSplit &train = (*splits)[0], &test = (*splits)[1];
  for (const datasets::MnistSplit* s : {&train, &test})
    if (s->images.shape[1] != kSide || s->images.shape[2] != kSide)
      fail("data.path: %s holds images of %dx%d, Fashion-MNIST's are %dx%d", dir,
           s->images.shape[1], s->images.shape[2], kSide, kSide);
  return image_source(in_memory("fashion_mnist", shape, kSide, kSide, t,
                                {splits, train.images.data.data(), train.labels.data.data(),
                                 test.images.data.data(), test.labels.data.data(),
                                 train.labels.shape[0], test.labels.shape[0]}),
                      c);
}

std::unique_ptr<DataSource> cifar_source(const config::Config& c, datasets::Cifar kind) {
  const bool c10 = kind == datasets::Cifar::k10;
  const char* name = c10 ? "cifar10" : "cifar100";
  if (c.data.path.empty())
    fail("data.path: %s needs the folder of %s (there is no default location)", name,
         c10 ? "cifar-10-batches-bin (data_batch_1.bin .. data_batch_5.bin, test_batch.bin)"
             : "cifar-100-binary (train.bin, test.bin)");
  auto t = std::make_shared<const ImageTransform>(c.data, 3, c.train.seed);
  std::vector<int64_t> shape = t->shape(32, 32);
  check_model_fits(c, name, shape, c10 ? 10 : 100);
  auto load = c10 ? datasets::load_cifar10 : datasets::load_cifar100;
  auto splits = std::make_shared<const std::array<datasets::CifarSplit, 2>>(
      std::array{load(c.data.path, true), load(c.data.path, false)});
  const datasets::CifarSplit &train = (*splits)[0], &test = (*splits)[1];
  return image_source(in_memory(name, shape, 32, 32, t,
                                {splits, train.images.data(), train.labels.data(),
                                 test.images.data(), test.labels.data(), train.n, test.n}),
                      c);
}

std::unique_ptr<DataSource> image_folder_source(const config::Config& c) {
  const std::string& root = c.data.path;
  const char* layout = "train/<class>/ and val/<class>/ (or test/<class>/) of .jpg/.png images";
  if (root.empty()) fail("data.path: image_folder needs a folder holding %s", layout);
  const int channels = c.model.name == "mnist_convnet" ? 1 : static_cast<int>(c.model.in_channels);
  if (channels != 1 && channels != 3)
    fail(
        "model.in_channels: image_folder decodes images to 1 (gray) or 3 (RGB) channels, the "
        "model takes %d",
        c.model.in_channels);
  const fs::path train_dir = fs::path(root) / "train";
  fs::path eval_dir = fs::path(root) / "val";
  if (!is_dir(train_dir))
    fail("data.path: %s has no train/ folder (image_folder reads %s)", root, layout);
  if (!is_dir(eval_dir)) eval_dir = fs::path(root) / "test";
  if (!is_dir(eval_dir))
    fail(
        "data.path: %s has neither a val/ nor a test/ folder to evaluate on (image_folder reads "
        "%s)",
        root, layout);

  auto t = std::make_shared<const ImageTransform>(c.data, channels, c.train.seed);
  // ImageFolder lists and decodes; the images are transformed here, as every data set's are
  const datasets::ImageFolderOpts decode_only{.grayscale = channels == 1};
  auto train = std::make_shared<const datasets::ImageFolder>(train_dir.string(), decode_only);
  auto eval = std::make_shared<const datasets::ImageFolder>(eval_dir.string(), decode_only);
  if (train->classes() != eval->classes()) {
    bool in_train = false;
    std::string odd = first_difference(train->classes(), eval->classes(), &in_train);
    fail("data.path: %s and %s must hold the same class folders, but '%s' is only in %s",
         train_dir.string(), eval_dir.string(), odd, (in_train ? train_dir : eval_dir).string());
  }
  // a sample's shape from the size of the first image (sample_shape without augmentation)
  auto shape_of = [&](const datasets::ImageFolder& f) {
    return t->shape(static_cast<int>(f.sample_shape()[1]), static_cast<int>(f.sample_shape()[2]));
  };
  const std::vector<int64_t> shape = shape_of(*eval);
  check_model_fits(c, "image_folder", shape, static_cast<int64_t>(train->classes().size()));
  if (shape_of(*train) != shape)
    fail(
        "data.size: the images of %s are %dx%d, those of %s %dx%d: set data.size (or data.crop) "
        "so that all give samples of one size",
        train_dir.string(), train->sample_shape()[1], train->sample_shape()[2], eval_dir.string(),
        eval->sample_shape()[1], eval->sample_shape()[2]);

  // Image i decoded, checked to give a sample of `shape` (images may differ in size when
  // data.size or data.crop makes them the same).
  auto decode = [t, shape](const datasets::ImageFolder& f, int64_t i) {
    cv::Mat image = f.decode(i);
    if (t->shape(image.rows, image.cols) != shape)
      fail(
          "image_folder: %s is %dx%d, the first image %dx%d: set data.size (or data.crop) so "
          "that all give samples of one size",
          f.path(i), image.rows, image.cols, f.sample_shape()[1], f.sample_shape()[2]);
    return image;
  };
  ImageSet s{
      .name = "image_folder", .shape = shape, .n_train = train->size(), .n_test = eval->size()};
  s.train = [train, t, decode](int64_t i, int64_t epoch, float* x, int32_t* y) {
    t->train_image(decode(*train, i), epoch, i, x);
    *y = train->label(i);
  };
  s.test = [eval, t, decode](int64_t i, float* x, int32_t* y) {
    t->eval_image(decode(*eval, i), x);
    *y = eval->label(i);
  };
  return image_source(std::move(s), c);
}

}  // namespace tc::train
