// An image classifier from a run (mnist_convnet, resnet): image bytes (PNG, JPEG, BMP, ... as
// stb_image decodes them) in, the top classes with probabilities out. Preprocessing is the
// training data's: the image is converted to the model's channels, resized to its input side
// (area averaging), scaled to 0..1 and normalized with data.mean / data.std when data.normalize.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "apps/infer/image_input.h"
#include "apps/infer/run_files.h"
#include "tinycore/jit/jit.h"

namespace tc::infer {

struct ClassScore {
  int64_t index = 0;
  std::string label;  // the data set's class name ("Ankle boot"), or the index as text
  double prob = 0;
};

class Classifier {
 public:
  // Loads the run; batches of up to max_batch images run through TinyJit steps, one per batch
  // size, each batch padded to the next power of two (at most max_batch).
  Classifier(const std::string& run_dir, int64_t max_batch = 1);
  ~Classifier();

  // The model's input (channels * side * side floats) for encoded image bytes. Throws
  // ImageTooLarge past the limits, tc::Error for bytes that are not a decodable image, each
  // saying what is wrong. Thread safe (touches no tensors).
  std::vector<float> preprocess(std::string_view image_bytes, const ImageLimits& limits = {}) const;

  // Class probabilities of up to max_batch preprocessed images, the topk best of each, most
  // probable first. Not thread safe: one thread runs the model.
  std::vector<std::vector<ClassScore>> classify(const std::vector<std::vector<float>>& images,
                                                int64_t topk);

  // Runs every padded batch size twice, so each is captured before a client waits on it.
  void warm_up();

  int64_t max_batch() const { return max_batch_; }
  int64_t classes() const { return run_.config.model.classes; }
  int64_t channels() const { return channels_; }
  int64_t side() const { return side_; }

 private:
  LoadedRun run_;
  int64_t max_batch_, channels_, side_;
  std::vector<std::string> labels_;
  std::map<int64_t, std::unique_ptr<TinyJit>> steps_;  // by padded batch size
};

}  // namespace tc::infer
