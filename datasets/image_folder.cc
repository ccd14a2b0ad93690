#include "datasets/image_folder.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "datasets/read_file.h"
#include "tinycore/error.h"

namespace tc::datasets {
namespace fs = std::filesystem;
namespace {

bool is_image(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

}  // namespace

ImageFolder::ImageFolder(const std::string& root, ImageFolderOpts opts) : o_(std::move(opts)) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) fail("ImageFolder: root folder %s does not exist", root);
  for (const fs::directory_entry& e : fs::directory_iterator(root))
    if (e.is_directory()) classes_.push_back(e.path().filename().string());
  if (classes_.empty()) fail("ImageFolder: %s holds no class folders", root);
  std::sort(classes_.begin(), classes_.end());
  for (size_t c = 0; c < classes_.size(); c++) {
    fs::path dir = fs::path(root) / classes_[c];
    std::vector<std::string> images;
    for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir))
      if (e.is_regular_file() && is_image(e.path())) images.push_back(e.path().string());
    if (images.empty())
      fail("ImageFolder: class folder %s holds no images (.jpg, .jpeg, .png)", dir.string());
    std::sort(images.begin(), images.end());
    files_.insert(files_.end(), images.begin(), images.end());
    labels_.insert(labels_.end(), images.size(), static_cast<int32_t>(c));
  }
  int channels = o_.grayscale ? 1 : 3;
  if (o_.augment.resize_h) {
    shape_ = augmented_shape(o_.augment, channels, o_.augment.resize_h, o_.augment.resize_w);
  } else {
    cv::Mat first = decode(0);
    first_h_ = first.rows, first_w_ = first.cols;
    shape_ = augmented_shape(o_.augment, channels, first_h_, first_w_);
  }
}

const std::string& ImageFolder::path(int64_t i) const {
  if (i < 0 || i >= size()) fail("ImageFolder: sample %d is out of range for %d images", i, size());
  return files_[static_cast<size_t>(i)];
}

int32_t ImageFolder::label(int64_t i) const {
  path(i);  // the range check
  return labels_[static_cast<size_t>(i)];
}

cv::Mat ImageFolder::decode(int64_t i) const {
  const std::string& file = path(i);
  std::vector<uint8_t> bytes = read_file(file, "ImageFolder");
  cv::Mat image;
  if (!bytes.empty()) {
    try {
      image = cv::imdecode(cv::Mat(1, static_cast<int>(bytes.size()), CV_8U, bytes.data()),
                           o_.grayscale ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR);
    } catch (const cv::Exception&) {  // a damaged file can trip OpenCV's own checks
      image = cv::Mat();
    }
  }
  if (image.empty())
    fail("ImageFolder: cannot decode %s (%d bytes): not a readable JPEG or PNG", file,
         bytes.size());
  if (!o_.grayscale) cv::cvtColor(image, image, cv::COLOR_BGR2RGB);
  return image;
}

void ImageFolder::get(int64_t i, int64_t epoch, float* x, int32_t* y) const {
  cv::Mat image = decode(i);
  if (!o_.augment.resize_h && (image.rows != first_h_ || image.cols != first_w_))
    fail("ImageFolder: %s is %dx%d, the first image %dx%d; without a resize all must match",
         path(i), image.rows, image.cols, first_h_, first_w_);
  AugmentDraw d =
      draw_augment(o_.augment, image.rows, image.cols,
                   mix_seed(o_.seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(i)));
  augment_image(image, o_.augment, d, x);
  *y = labels_[static_cast<size_t>(i)];
}

DataLoader::EpochFetch ImageFolder::fetch() const {
  return [this](int64_t i, int64_t epoch, float* x, int32_t* y) { get(i, epoch, x, y); };
}

}  // namespace tc::datasets
