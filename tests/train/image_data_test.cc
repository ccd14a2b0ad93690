// The image data sets of train (apps/train/image_data.h) on files the test writes: a tiny ResNet
// trains end to end on an image folder and on CIFAR-10; evaluation batches are the pixels scaled
// (or center-cropped) as a naive loop computes them, padded with zero rows; training samples are
// the augmentation drawn for (seed, epoch, sample), the same from two sources and after a seek;
// and every bad data set or data/model mismatch is an error naming the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <set>
#include <sstream>

#include "apps/train/data_source.h"
#include "apps/train/trainer.h"
#include "datasets/augment.h"
#include "datasets/cifar.h"
#include "tests/datasets/naive_augment.h"
#include "tests/error_message.h"
#include "tests/train/tiny_run.h"
#include "tinycore/error.h"

namespace {

namespace fs = std::filesystem;
using tc::config::Config;
using tc::datasets::Cifar;
using tc::datasets::kCifarImageBytes;
using tc::train::DataSource;
using tc::train::make_data_source;
using tc::train::StepBatch;

// --- an image folder: 3 classes whose colour is the class (red, green, blue), with texture ---

constexpr int kSide = 12, kClasses = 3;
const char* const kClassNames[kClasses] = {"blue_sky", "grass", "red_car"};

// RGB byte (y, x, channel) of image `i` of class `k`.
uint8_t folder_pixel(int k, int i, int y, int x, int c) {
  int bright = c == 2 - k ? 170 : 30;  // blue_sky: blue, grass: green, red_car: red
  return static_cast<uint8_t>(bright + (i * 11 + y * 7 + x * 5 + c * 3) % 60);
}

cv::Mat folder_rgb(int k, int i) {
  cv::Mat m(kSide, kSide, CV_8UC3);
  for (int y = 0; y < kSide; y++)
    for (int x = 0; x < kSide; x++)
      for (int c = 0; c < 3; c++) m.ptr<uint8_t>(y)[x * 3 + c] = folder_pixel(k, i, y, x, c);
  return m;
}

// <root>/<split>/<class>/img_<i>.png for `per_class` images of each of `classes`.
void write_split(const std::string& root, const std::string& split, int per_class,
                 std::vector<std::string> classes = {kClassNames, kClassNames + kClasses}) {
  for (size_t k = 0; k < classes.size(); k++)
    for (int i = 0; i < per_class; i++) {
      fs::path p = fs::path(root) / split / classes[k] / ("img_" + std::to_string(i) + ".png");
      fs::create_directories(p.parent_path());
      cv::Mat rgb = folder_rgb(static_cast<int>(k), i), bgr;
      cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
      ASSERT_TRUE(cv::imwrite(p.string(), bgr)) << p;
    }
}

std::string image_folder(const std::string& name) {
  std::string root = tinyrun::fresh_dir(name) + "/images";
  write_split(root, "train", 8);
  write_split(root, "val", 4);
  return root;
}

// --- CIFAR binary files: the class shows in which planes are bright ---

// CIFAR-10's records use 4 of its classes, so that a few steps learn them; CIFAR-100's spread
// over all 100 (to check the fine label is the one read).
int cifar_label(int record, int classes) { return classes == 10 ? record % 4 : record * 7 % 100; }
uint8_t cifar_pixel(int record, int label, int offset) {
  bool bright = (((label + 1) >> (offset / 1024)) & 1) != 0;
  return static_cast<uint8_t>((bright ? 150 : 40) + (record * 7 + offset * 13) % 32);
}

// Writes `records` records numbered from `first` (CIFAR-100: coarse label = fine / 5).
void write_cifar_file(const std::string& path, Cifar kind, int first, int records) {
  std::ofstream out(path, std::ios::binary);
  for (int r = first; r < first + records; r++) {
    int label = cifar_label(r, kind == Cifar::k10 ? 10 : 100);
    if (kind == Cifar::k100) out.put(static_cast<char>(label / 5));
    out.put(static_cast<char>(label));
    for (int o = 0; o < kCifarImageBytes; o++) out.put(static_cast<char>(cifar_pixel(r, label, o)));
  }
}

// CIFAR-10: five training batches of 8 records (0..39), a test batch of 20 (1000..1019).
// CIFAR-100: train.bin of 40, test.bin of 20, numbered alike.
constexpr int kTestFirst = 1000, kTestRecords = 20;
std::string cifar_dir(const std::string& name, Cifar kind) {
  std::string dir = tinyrun::fresh_dir(name);
  if (kind == Cifar::k10) {
    for (int b = 1; b <= 5; b++)
      write_cifar_file(dir + "/data_batch_" + std::to_string(b) + ".bin", kind, (b - 1) * 8, 8);
    write_cifar_file(dir + "/test_batch.bin", kind, kTestFirst, kTestRecords);
  } else {
    write_cifar_file(dir + "/train.bin", kind, 0, 40);
    write_cifar_file(dir + "/test.bin", kind, kTestFirst, kTestRecords);
  }
  return dir;
}

// The CIFAR image of `record` as an RGB HWC image, for the naive reference.
cv::Mat cifar_rgb(int record, int classes) {
  cv::Mat m(32, 32, CV_8UC3);
  int label = cifar_label(record, classes);
  for (int y = 0; y < 32; y++)
    for (int x = 0; x < 32; x++)
      for (int c = 0; c < 3; c++)
        m.ptr<uint8_t>(y)[x * 3 + c] = cifar_pixel(record, label, c * 1024 + y * 32 + x);
  return m;
}

const std::vector<std::string> kCifarAugment = {"data.pad=4", "data.crop=32", "data.flip=true"};

Config cifar_config(const std::string& dir, std::vector<std::string> extra = {},
                    const std::string& name = "cifar10", int64_t samples = 32) {
  extra.insert(extra.begin(), {"data.name=" + name, "data.path=" + dir, "model.in_channels=3",
                               "model.classes=" + std::string(name == "cifar10" ? "10" : "100")});
  return tinyrun::tiny_config("resnet", tinyrun::fresh_dir("cifar_run"), samples, extra);
}

Config folder_config(const std::string& root, std::vector<std::string> extra = {}) {
  extra.insert(extra.begin(), {"data.name=image_folder", "data.path=" + root, "model.in_channels=3",
                               "model.classes=3"});
  return tinyrun::tiny_config("resnet", tinyrun::fresh_dir("folder_run"), 24, extra);
}

std::vector<float> floats(const tc::Tensor& t) { return t.data<float>(); }
std::vector<int32_t> ints(const tc::Tensor& t) { return t.data<int32_t>(); }

TEST(ImageData, ResnetTrainsOnAnImageFolderWithResizeCropAndFlip) {
  Config c = folder_config(image_folder("folder_train"),
                           {"data.size=10", "data.crop=8", "data.flip=true"});
  tc::train::RunResult r = tc::train::run_training(c, tinyrun::silent());
  tinyrun::expect_finished_run(c, r, 6);
  ASSERT_TRUE(r.eval_accuracy);  // over the 12 val images
  EXPECT_NEAR(*r.eval_accuracy * 12, std::round(*r.eval_accuracy * 12), 1e-6);
}

TEST(ImageData, ResnetTrainsOnCifar10WithPadCropAndFlip) {
  Config c = cifar_config(cifar_dir("cifar_train", Cifar::k10), kCifarAugment);
  tc::train::RunResult r = tc::train::run_training(c, tinyrun::silent());
  tinyrun::expect_finished_run(c, r, 6);
  ASSERT_TRUE(r.eval_accuracy);  // over data.eval_limit = 20 test images
  EXPECT_NEAR(*r.eval_accuracy * 20, std::round(*r.eval_accuracy * 20), 1e-6);
}

// Evaluation neither pads nor flips, and a 32 crop of 32x32 images is the image: the batches are
// (pixel / 255 - mean) / std in CHW order, the last one padded with zero rows.
TEST(ImageData, CifarEvalBatchesAreTheScaledPixels) {
  for (Cifar kind : {Cifar::k10, Cifar::k100}) {
    const int classes = kind == Cifar::k10 ? 10 : 100;
    const std::string name = kind == Cifar::k10 ? "cifar10" : "cifar100";
    Config c = cifar_config(cifar_dir("cifar_eval", kind), kCifarAugment, name);
    c.data.mean = 0.45;
    c.data.std = 0.2;
    std::unique_ptr<DataSource> data = make_data_source(c);
    ASSERT_EQ(data->eval_batches(), 2);  // 20 images in batches of 16
    for (int64_t b = 0; b < 2; b++) {
      StepBatch batch = data->eval_batch(b);
      EXPECT_EQ(batch.valid, b == 0 ? 16 : 4);
      ASSERT_EQ(batch.x.shape(), (tc::Shape{16, 3, 32, 32}));
      std::vector<float> x = floats(batch.x);
      std::vector<int32_t> y = ints(batch.y);
      for (int64_t row = 0; row < 16; row++) {
        int record = kTestFirst + static_cast<int>(b * 16 + row);
        bool real = row < batch.valid;
        EXPECT_EQ(y[row], real ? cifar_label(record, classes) : 0) << name << " " << row;
        for (int c3 = 0; c3 < 3; c3++)
          for (int p = 0; p < 1024; p++) {
            int label = cifar_label(record, classes);
            double want =
                real ? (cifar_pixel(record, label, c3 * 1024 + p) / 255.0 - 0.45) / 0.2 : 0;
            ASSERT_NEAR(x[(row * 3 + c3) * 1024 + p], want, 1e-5) << name << " " << row;
          }
      }
    }
  }
}

// data.normalize=false gives the raw bytes, unaugmented (no OpenCV) and center-cropped (OpenCV).
TEST(ImageData, CifarRawPixelsWithoutNormalize) {
  const std::string dir = cifar_dir("cifar_raw", Cifar::k10);
  const int label = cifar_label(kTestFirst, 10);
  std::vector<float> x =
      floats(make_data_source(cifar_config(dir, {"data.normalize=false"}))->eval_batch(0).x);
  for (int p = 0; p < 3 * 1024; p++)
    ASSERT_EQ(x[p], static_cast<float>(cifar_pixel(kTestFirst, label, p))) << p;
  x = floats(make_data_source(cifar_config(dir, {"data.normalize=false", "data.crop=30"}))
                 ->eval_batch(0)
                 .x);
  for (int c = 0; c < 3; c++)
    for (int y = 0; y < 30; y++)
      for (int i = 0; i < 30; i++)  // the crop starts at (1, 1)
        ASSERT_EQ(
            x[(c * 30 + y) * 30 + i],
            static_cast<float>(cifar_pixel(kTestFirst, label, c * 1024 + (y + 1) * 32 + i + 1)));
}

// An evaluation image of the folder is its center crop, as the naive loop takes it.
TEST(ImageData, ImageFolderEvalIsTheCenterCrop) {
  Config c = folder_config(image_folder("folder_eval"),
                           {"data.crop=8", "data.pad=2", "data.flip=true", "data.mean=0.5"});
  std::unique_ptr<DataSource> data = make_data_source(c);
  ASSERT_EQ(data->eval_batches(), 1);  // 12 val images, a batch of 16
  StepBatch batch = data->eval_batch(0);
  EXPECT_EQ(batch.valid, 12);
  ASSERT_EQ(batch.x.shape(), (tc::Shape{16, 3, 8, 8}));
  std::vector<float> x = floats(batch.x);
  std::vector<int32_t> y = ints(batch.y);
  tc::datasets::Augment plain{
      .crop_h = 8, .crop_w = 8, .mean = {0.5f, 0.5f, 0.5f}, .std = {0.3530f, 0.3530f, 0.3530f}};
  for (int row = 0; row < 16; row++) {
    EXPECT_EQ(y[row], row < 12 ? row / 4 : 0);
    std::vector<double> want(3 * 64, 0.0);
    if (row < 12) want = naive::augment(folder_rgb(row / 4, row % 4), plain, {.top = 2, .left = 2});
    for (size_t k = 0; k < want.size(); k++) ASSERT_NEAR(x[row * 192 + k], want[k], 1e-5) << row;
  }
  // one channel when the model takes one: the images decoded to gray
  c.model.in_channels = 1;
  EXPECT_EQ(make_data_source(c)->eval_batch(0).x.shape(), (tc::Shape{16, 1, 8, 8}));
}

// A training sample as the test wrote it.
struct Sample {
  cv::Mat rgb;
  int label;
};

// Every training row is the naive augmentation `a` of one distinct sample with the draw for
// (train.seed, epoch, sample), and carries that sample's label.
void expect_augmented_rows(const StepBatch& b, const std::vector<Sample>& samples,
                           const tc::datasets::Augment& a, int64_t epoch, uint64_t seed) {
  std::vector<float> x = floats(b.x);
  std::vector<int32_t> y = ints(b.y);
  const size_t numel = x.size() / b.x.shape()[0];
  std::set<int> seen;
  for (int64_t row = 0; row < b.valid; row++) {
    int match = -1;
    for (int s = 0; s < static_cast<int>(samples.size()) && match < 0; s++) {
      const cv::Mat& image = samples[s].rgb;
      tc::datasets::AugmentDraw d = tc::datasets::draw_augment(
          a, image.rows, image.cols, tc::datasets::mix_seed(seed, static_cast<uint64_t>(epoch), s));
      std::vector<double> want = naive::augment(image, a, d);
      bool same = want.size() == numel;
      for (size_t k = 0; k < numel && same; k++)
        same = std::abs(x[row * numel + k] - want[k]) < 1e-5;
      if (same) match = s;
    }
    ASSERT_GE(match, 0) << "row " << row << " of epoch " << epoch << " is no sample's draw";
    EXPECT_TRUE(seen.insert(match).second) << "sample " << match << " twice";
    EXPECT_EQ(y[row], samples[match].label);
  }
}

const tc::datasets::Augment kCifarDraws{.crop_h = 32,
                                        .crop_w = 32,
                                        .pad = 4,
                                        .hflip = true,
                                        .mean = {0.2860f, 0.2860f, 0.2860f},
                                        .std = {0.3530f, 0.3530f, 0.3530f}};

std::vector<Sample> cifar_samples(int n) {  // CIFAR-10's first n training records
  std::vector<Sample> s;
  for (int r = 0; r < n; r++) s.push_back({cifar_rgb(r, 10), cifar_label(r, 10)});
  return s;
}

// The image folder's training images too are the draws for (seed, epoch, sample).
TEST(ImageData, ImageFolderTrainingIsTheDrawForSeedEpochAndSample) {
  Config c = folder_config(image_folder("folder_augment"),
                           {"data.crop=8", "data.pad=2", "data.flip=true", "train.seed=3"});
  std::vector<Sample> samples;  // in the folder's order: classes, then files, by name
  for (int k = 0; k < kClasses; k++)
    for (int i = 0; i < 8; i++) samples.push_back({folder_rgb(k, i), k});
  tc::datasets::Augment a{.crop_h = 8,
                          .crop_w = 8,
                          .pad = 2,
                          .hflip = true,
                          .mean = {0.2860f, 0.2860f, 0.2860f},
                          .std = {0.3530f, 0.3530f, 0.3530f}};
  std::unique_ptr<DataSource> data = make_data_source(c);
  data->seek(2, 0);
  expect_augmented_rows(data->next_train(), samples, a, 2, 3);
}

TEST(ImageData, TrainingAugmentationIsReproducibleAndResumes) {
  std::string dir = cifar_dir("cifar_augment", Cifar::k10);
  Config c = cifar_config(dir, kCifarAugment);  // 32 samples: two batches of 16 per epoch
  c.train.seed = 5;
  Config two_workers = c;
  two_workers.data.workers = 2;
  std::unique_ptr<DataSource> a = make_data_source(c), b = make_data_source(two_workers);
  ASSERT_EQ(a->batches_per_epoch(), 2);
  std::vector<std::vector<float>> run;
  for (int64_t epoch = 0; epoch < 2; epoch++) {
    a->seek(epoch, 0);
    b->seek(epoch, 0);
    for (int batch = 0; batch < 2; batch++) {
      StepBatch from_a = a->next_train(), from_b = b->next_train();
      expect_augmented_rows(from_a, cifar_samples(32), kCifarDraws, epoch, 5);
      run.push_back(floats(from_a.x));
      EXPECT_EQ(run.back(), floats(from_b.x)) << "epoch " << epoch << " batch " << batch;
      EXPECT_EQ(ints(from_a.y), ints(from_b.y));
    }
  }
  EXPECT_NE(run[0], run[2]);  // another epoch, other draws
  std::unique_ptr<DataSource> resumed = make_data_source(c);
  resumed->seek(1, 1);
  EXPECT_EQ(floats(resumed->next_train().x), run[3]);
  EXPECT_THROW(resumed->next_train(), tc::Error);  // past the end of the epoch

  // the draws the rows were checked against do pad, crop and flip
  int flips = 0, shifted = 0;
  for (int s = 0; s < 32; s++) {
    auto d = tc::datasets::draw_augment(kCifarDraws, 32, 32, tc::datasets::mix_seed(5, 0, s));
    flips += d.flip;
    shifted += d.top != 4 || d.left != 4;
  }
  EXPECT_GT(flips, 0);
  EXPECT_GT(shifted, 0);
}

// The comment of configs/resnet.yaml shows how to switch it to an image folder and to CIFAR-10:
// those command lines, with DIR a folder of the test's, give data sources of the right shape.
TEST(ImageData, TheCommandLinesInResnetYamlWork) {
  std::ifstream in(tinyrun::kRoot + "/configs/resnet.yaml");
  const std::string command = "#   train --config configs/resnet.yaml ", more = "#     ";
  std::vector<std::vector<std::string>> commands;
  for (std::string line; std::getline(in, line);) {
    bool starts = line.rfind(command, 0) == 0;
    if (!starts && (commands.empty() || line.rfind(more, 0) != 0)) continue;
    if (starts) commands.emplace_back();
    std::istringstream words(line.substr(starts ? command.size() : more.size()));
    for (std::string w; words >> w;) commands.back().push_back(w);
  }
  ASSERT_EQ(commands.size(), 2u) << "the image folder and the CIFAR-10 command lines";
  const std::string folder = image_folder("yaml_folder"),
                    cifar = cifar_dir("yaml_cifar", Cifar::k10);
  for (std::vector<std::string> overrides : commands) {
    const bool is_cifar =
        std::find(overrides.begin(), overrides.end(), "data.name=cifar10") != overrides.end();
    for (std::string& o : overrides)
      if (o == "data.path=DIR") o = "data.path=" + (is_cifar ? cifar : folder);
    overrides.insert(overrides.end(),
                     {"data.workers=1", "train.batch_size=4", "train.eval_batch_size=4"});
    Config c = tc::config::load_config(tinyrun::kRoot + "/configs/resnet.yaml", overrides);
    std::unique_ptr<DataSource> data = make_data_source(c);
    EXPECT_EQ(data->eval_batch(0).x.shape(),
              is_cifar ? (tc::Shape{4, 3, 32, 32}) : (tc::Shape{4, 3, kSide, kSide}));
  }
}

std::string error_of(const Config& c) {
  return error_message([&] { make_data_source(c); });
}

TEST(ImageData, BadDataSetsAndMismatchesNameTheKey) {
  const std::string cifar = cifar_dir("cifar_bad", Cifar::k10);
  // an unknown data set: the config lists the choices, and so does make_data_source
  try {
    cifar_config(cifar, {"data.name=imagenet"});
    ADD_FAILURE() << "no error";
  } catch (const tc::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "command line override 'data.name=imagenet': data.name: 'imagenet' is not one of "
              "fashion_mnist, cifar10, cifar100, image_folder, text");
  }
  Config unknown = cifar_config(cifar);
  unknown.data.name = "imagenet";
  EXPECT_EQ(error_of(unknown),
            "data.name: no data set 'imagenet' (fashion_mnist, cifar10, cifar100, image_folder, "
            "text)");

  EXPECT_EQ(error_of(cifar_config("")),
            "data.path: cifar10 needs the folder of cifar-10-batches-bin (data_batch_1.bin .. "
            "data_batch_5.bin, test_batch.bin) (there is no default location)");
  EXPECT_EQ(error_of(cifar_config("", {}, "cifar100")),
            "data.path: cifar100 needs the folder of cifar-100-binary (train.bin, test.bin) "
            "(there is no default location)");
  EXPECT_EQ(error_of(cifar_config(cifar, {"model.in_channels=1"})),
            "model.in_channels: cifar10 images have 3 channels, the model takes 1");
  EXPECT_EQ(error_of(cifar_config(cifar, {"model.classes=10"}, "cifar100")),
            "model.classes: cifar100 has 100 classes, the model predicts 10");
  EXPECT_EQ(error_of(cifar_config(cifar, {"model.name=mnist_convnet"})),
            "model.name: mnist_convnet takes 1x28x28 images, cifar10 gives 3x32x32 (data.size, "
            "data.crop)");
  EXPECT_EQ(error_of(cifar_config(cifar, {"data.crop=40", "data.pad=4"})),
            "data.crop: 40 is larger than the 32x32 images: evaluation's center crop must fit "
            "them without data.pad");
  EXPECT_EQ(error_of(cifar_config(cifar, {"data.size=24", "data.crop=28"})),
            "data.crop: 28 is larger than the 24x24 images (data.size): evaluation's center crop "
            "must fit them without data.pad");

  const std::string root = tinyrun::fresh_dir("folder_bad");
  auto folder_error = [&](std::vector<std::string> extra = {}) {
    return error_of(folder_config(root, std::move(extra)));
  };
  EXPECT_EQ(error_of(folder_config("")),
            "data.path: image_folder needs a folder holding train/<class>/ and val/<class>/ (or "
            "test/<class>/) of .jpg/.png images");
  EXPECT_EQ(folder_error(), "data.path: " + root +
                                " has no train/ folder (image_folder reads train/<class>/ and "
                                "val/<class>/ (or test/<class>/) of .jpg/.png images)");
  write_split(root, "train", 2);
  EXPECT_EQ(folder_error(), "data.path: " + root +
                                " has neither a val/ nor a test/ folder to evaluate on "
                                "(image_folder reads train/<class>/ and val/<class>/ (or "
                                "test/<class>/) of .jpg/.png images)");
  write_split(root, "test", 1, {"blue_sky", "grass", "red_car", "zebra"});
  EXPECT_EQ(folder_error(), "data.path: " + root + "/train and " + root +
                                "/test must hold the same class folders, but 'zebra' is only in " +
                                root + "/test");
  fs::remove_all(root + "/test/zebra");
  EXPECT_EQ(make_data_source(folder_config(root, {"train.batch_size=4"}))->eval_batch(0).valid,
            3);  // test/ serves when there is no val/
  EXPECT_EQ(folder_error({"model.in_channels=2"}),
            "model.in_channels: image_folder decodes images to 1 (gray) or 3 (RGB) channels, the "
            "model takes 2");
  EXPECT_EQ(folder_error({"model.classes=2"}),
            "model.classes: image_folder has 3 classes, the model predicts 2");

  // Fashion-MNIST pointed at an image folder: the message says how to read it as one
  Config mnist =
      tinyrun::tiny_config("resnet", tinyrun::fresh_dir("mnist_bad"), 16, {"data.path=" + root});
  EXPECT_EQ(error_of(mnist),
            "data.path: " + root +
                " holds no Fashion-MNIST IDX files but a train/ folder: for a folder of images "
                "(train/<class>/, val/<class>/) set data.name=image_folder (and "
                "model.in_channels=3 for colour images)");
  mnist.model.name = "gpt";
  EXPECT_EQ(error_of(mnist),
            "data.name: fashion_mnist holds images, for image models (mnist_convnet, resnet), not "
            "gpt");
}

}  // namespace
