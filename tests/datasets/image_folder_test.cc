// Image folders the test writes with cv::imwrite: classes and files in name order, PNG pixels
// decoded exactly (RGB or gray), JPEG closely, augmentation against the naive reference with the
// draw for (seed, epoch, sample), the same batches from a DataLoader with or without workers,
// and an error naming the path for every kind of bad folder or file.
#include "datasets/image_folder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <opencv2/imgcodecs.hpp>
#include <optional>

#include "tests/datasets/naive_augment.h"
#include "tinycore/error.h"

namespace {

namespace fs = std::filesystem;
using tc::datasets::Augment;
using tc::datasets::ImageFolder;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// A BGR image (OpenCV's order) whose every byte depends on where it is and on `salt`.
cv::Mat test_image(int h, int w, int salt) {
  cv::Mat m(h, w, CV_8UC3);
  for (int y = 0; y < h; y++)
    for (int i = 0; i < w * 3; i++)
      m.ptr<uint8_t>(y)[i] = static_cast<uint8_t>(salt * 50 + 29 * y + 13 * i);
  return m;
}

cv::Mat bgr_to_rgb(const cv::Mat& bgr) {  // by hand, not with the cvtColor under test
  cv::Mat rgb = bgr.clone();
  for (int y = 0; y < bgr.rows; y++)
    for (int x = 0; x < bgr.cols; x++)
      for (int c = 0; c < 3; c++)
        rgb.ptr<uint8_t>(y)[x * 3 + c] = bgr.ptr<uint8_t>(y)[x * 3 + 2 - c];
  return rgb;
}

class ImageFolders : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tinycore-imagefolder-test-" + std::to_string(::getpid()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path image(const std::string& name, const cv::Mat& m) {
    fs::path p = root_ / name;
    fs::create_directories(p.parent_path());
    EXPECT_TRUE(cv::imwrite(p.string(), m));
    return p;
  }
  fs::path file(const std::string& name, const std::string& bytes) {
    fs::path p = root_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  // Three classes (named so that creation order is not name order) of 6x5 PNGs.
  std::map<std::string, cv::Mat> three_classes() {
    std::map<std::string, cv::Mat> written;
    int salt = 0;
    for (const char* name : {"set/dog/b.png", "set/cat/z.png", "set/dog/a.PNG", "set/ant/x.png",
                             "set/cat/deep/y.png"}) {
      written[name] = test_image(6, 5, salt++);
      image(name, written[name]);
    }
    file("set/dog/notes.txt", "not an image");
    return written;
  }
  fs::path root_;
};

TEST_F(ImageFolders, ClassesAndFilesInNameOrderPngPixelsExact) {
  std::map<std::string, cv::Mat> written = three_classes();
  ImageFolder set((root_ / "set").string());
  EXPECT_EQ(set.classes(), (std::vector<std::string>{"ant", "cat", "dog"}));
  ASSERT_EQ(set.size(), 5);
  std::vector<std::pair<std::string, int32_t>> want = {{"set/ant/x.png", 0},
                                                       {"set/cat/deep/y.png", 1},
                                                       {"set/cat/z.png", 1},
                                                       {"set/dog/a.PNG", 2},
                                                       {"set/dog/b.png", 2}};
  EXPECT_EQ(set.sample_shape(), (std::vector<int64_t>{3, 6, 5}));
  std::vector<float> x(set.sample_numel());
  for (int64_t i = 0; i < set.size(); i++) {
    EXPECT_EQ(set.path(i), (root_ / want[i].first).string());
    EXPECT_EQ(set.label(i), want[i].second);
    int32_t y = -1;
    set.get(i, 0, x.data(), &y);
    EXPECT_EQ(y, want[i].second);
    cv::Mat rgb = bgr_to_rgb(written[want[i].first]);
    std::vector<double> ref = naive::augment(rgb, {}, {});
    // exact bytes: values 1/255 apart, float rounding 1e-7
    for (size_t k = 0; k < x.size(); k++) ASSERT_NEAR(x[k], ref[k], 1e-6) << i << " " << k;
  }
  EXPECT_THAT([&] { set.path(5); },
              ThrowsMessage<tc::Error>(HasSubstr("sample 5 is out of range for 5 images")));
}

TEST_F(ImageFolders, GrayscaleAndJpeg) {
  cv::Mat gray(4, 3, CV_8UC1);
  for (int i = 0; i < 12; i++) gray.data[i] = static_cast<uint8_t>(i * 20 + 5);
  image("g/only/a.png", gray);
  ImageFolder g((root_ / "g").string(), {.grayscale = true});
  EXPECT_EQ(g.sample_shape(), (std::vector<int64_t>{1, 4, 3}));
  std::vector<float> x(12);
  int32_t y;
  g.get(0, 0, x.data(), &y);
  for (int i = 0; i < 12; i++) EXPECT_NEAR(x[i], gray.data[i] / 255.0, 1e-6);
  // JPEG is lossy: a flat colour (no edges to ring) comes back within a few levels
  cv::Mat flat(16, 16, CV_8UC3, cv::Scalar(40, 120, 200));  // B, G, R
  image("j/c/a.jpg", flat);
  image("j/c/b.JPEG", flat);
  ImageFolder j((root_ / "j").string());
  ASSERT_EQ(j.size(), 2);
  std::vector<float> px(j.sample_numel());
  j.get(1, 0, px.data(), &y);
  for (int k = 0; k < 256; k++) {
    EXPECT_NEAR(px[k] * 255, 200, 3);  // red first
    EXPECT_NEAR(px[256 + k] * 255, 120, 3);
    EXPECT_NEAR(px[512 + k] * 255, 40, 3);
  }
}

TEST_F(ImageFolders, AugmentationIsTheDrawForSeedEpochAndSample) {
  std::map<std::string, cv::Mat> written = three_classes();
  Augment a{.crop_h = 4,
            .crop_w = 4,
            .pad = 2,
            .hflip = true,
            .mean = {0.4f, 0.5f, 0.6f},
            .std = {0.2f, 0.25f, 0.3f}};
  ImageFolder set((root_ / "set").string(), {.augment = a, .seed = 11});
  EXPECT_EQ(set.sample_shape(), (std::vector<int64_t>{3, 4, 4}));
  std::vector<float> x(set.sample_numel()), again(x.size());
  int flips = 0, distinct_epochs = 0;
  for (int64_t epoch = 0; epoch < 6; epoch++)
    for (int64_t i = 0; i < set.size(); i++) {
      int32_t y;
      set.get(i, epoch, x.data(), &y);
      tc::datasets::AugmentDraw d = tc::datasets::draw_augment(
          a, 6, 5,
          tc::datasets::mix_seed(11, static_cast<uint64_t>(epoch), static_cast<uint64_t>(i)));
      flips += d.flip;
      std::vector<double> ref =
          naive::augment(bgr_to_rgb(written[fs::relative(set.path(i), root_).string()]), a, d);
      for (size_t k = 0; k < x.size(); k++) ASSERT_NEAR(x[k], ref[k], 1e-5) << epoch << " " << i;
      set.get(i, epoch, again.data(), &y);
      EXPECT_EQ(again, x);  // reproducible
      if (epoch > 0) {
        set.get(i, 0, again.data(), &y);
        distinct_epochs += again != x;
      }
    }
  EXPECT_GT(flips, 5);
  EXPECT_LT(flips, 25);
  EXPECT_GT(distinct_epochs, 15);  // of 25: a new draw per epoch
  // another seed, other draws
  ImageFolder other((root_ / "set").string(), {.augment = a, .seed = 12});
  int differ = 0;
  for (int64_t i = 0; i < set.size(); i++) {
    int32_t y;
    set.get(i, 0, x.data(), &y);
    other.get(i, 0, again.data(), &y);
    differ += x != again;
  }
  EXPECT_GT(differ, 0);
}

TEST_F(ImageFolders, LoaderBatchesDoNotDependOnWorkers) {
  three_classes();
  ImageFolder set((root_ / "set").string(),
                  {.augment = {.crop_h = 4, .crop_w = 4, .pad = 1, .hflip = true}, .seed = 3});
  auto epochs = [&](int workers) {
    tc::datasets::DataLoader loader(set.size(), set.sample_numel(), set.fetch(),
                                    {.batch_size = 2, .seed = 9, .workers = workers});
    std::vector<std::vector<float>> xs;
    std::vector<int32_t> ys;
    for (int64_t e = 0; e < 2; e++) {
      loader.start_epoch(e);
      while (std::optional<tc::datasets::Batch> b = loader.next()) {
        xs.emplace_back(b->x.begin(), b->x.end());
        for (int64_t k = 0; k < b->size; k++) {
          EXPECT_EQ(b->y[k], set.label(b->index[k]));
          ys.push_back(b->y[k]);
        }
      }
    }
    return std::make_pair(xs, ys);
  };
  auto inline_batches = epochs(0);
  EXPECT_EQ(inline_batches.first.size(), 6u);
  EXPECT_EQ(epochs(3), inline_batches);
}

TEST_F(ImageFolders, BadFoldersAndFilesAreErrorsNamingThem) {
  std::string missing = (root_ / "missing").string();
  EXPECT_THAT([&] { ImageFolder{missing}; },
              ThrowsMessage<tc::Error>(HasSubstr("root folder " + missing + " does not exist")));
  file("flat/a.png", "");
  EXPECT_THAT(
      [&] { ImageFolder{(root_ / "flat").string()}; },
      ThrowsMessage<tc::Error>(HasSubstr((root_ / "flat").string() + " holds no class folders")));
  image("sparse/cat/a.png", test_image(6, 5, 0));
  file("sparse/dog/readme.txt", "no images here");
  EXPECT_THAT([&] { ImageFolder{(root_ / "sparse").string()}; },
              ThrowsMessage<tc::Error>(HasSubstr(
                  "class folder " + (root_ / "sparse" / "dog").string() + " holds no images")));

  // files that are not images: found at once when the first one sizes the set, else on get()
  fs::path good = image("bad/a/0.png", test_image(6, 5, 1));
  std::string png;
  {
    std::ifstream f(good, std::ios::binary);
    png.assign(std::istreambuf_iterator<char>(f), {});
  }
  fs::path garbage = file("bad/a/1.png", "this is not a PNG file at all");
  fs::path cut = file("bad/a/2.png", png.substr(0, png.size() / 2));
  fs::path empty = file("bad/a/3.jpg", "");
  fs::path bigger = image("bad/a/4.png", test_image(7, 5, 2));
  ImageFolder set((root_ / "bad").string());
  std::vector<float> x(set.sample_numel());
  int32_t y;
  auto error_of = [&](int64_t i) -> std::string {
    try {
      set.get(i, 0, x.data(), &y);
    } catch (const tc::Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(error_of(0), "(no error)");
  EXPECT_THAT(error_of(1), HasSubstr("cannot decode " + garbage.string()));
  EXPECT_THAT(error_of(2), HasSubstr("cannot decode " + cut.string()));
  EXPECT_THAT(error_of(3), HasSubstr("cannot decode " + empty.string() + " (0 bytes)"));
  EXPECT_THAT(error_of(4), HasSubstr(bigger.string() + " is 7x5, the first image 6x5"));
  fs::remove(good);
  EXPECT_THAT(error_of(0), HasSubstr("ImageFolder: cannot open " + good.string()));
  // with a resize, sizes may differ; a damaged file still reaches the loader's caller
  ImageFolder resized((root_ / "bad").string(), {.augment = {.resize_h = 3, .resize_w = 3}});
  tc::datasets::DataLoader loader(resized.size(), resized.sample_numel(), resized.fetch(),
                                  {.batch_size = 5, .shuffle = false});
  EXPECT_THAT([&] { loader.next(); }, ThrowsMessage<tc::Error>(HasSubstr("ImageFolder: cannot")));
  EXPECT_THAT([&] { ImageFolder{(root_ / "bad").string()}; },  // now the first file is garbage
              ThrowsMessage<tc::Error>(HasSubstr("cannot decode " + garbage.string())));
}

}  // namespace
