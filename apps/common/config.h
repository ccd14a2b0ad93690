// The YAML configuration the programs share (train writes it beside its checkpoints, infer reads
// it back): typed sections model, data, optim, train and log, read from a file or text, with
// `key.path=value` overrides from the command line. One table of fields (config.cc) is the
// schema: it types and checks every key, holds the defaults, documents each key for --help and
// prints the effective config. Every mistake throws tc::Error naming the key, the file and the
// line, e.g. "configs/mnist.yaml:12: optim.lr: expected a number, got 'fast'".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tc::config {

struct ModelConfig {
  std::string name;             // mnist_convnet | resnet | gpt
  int64_t classes = 10;         // image models: output classes
  int64_t in_channels = 1;      // image models: input channels
  int64_t depth = 8;            // resnet: 8, 20, 32, ... (cifar) or 18, 34, 50 (imagenet)
  std::string style = "cifar";  // resnet: cifar (3 stages 16/32/64) | imagenet (torchvision)
  int64_t width = 16;           // resnet cifar: channels of the first stage
  int64_t vocab = 0;            // gpt: vocabulary (0: the data's, as data.vocab says)
  int64_t context = 128;        // gpt: tokens per sequence
  int64_t layers = 4;           // gpt: transformer blocks
  int64_t dim = 256;            // gpt: embedding width
  int64_t heads = 4;            // gpt: attention heads
};

struct DataConfig {
  std::string name;             // fashion_mnist | cifar10 | cifar100 | image_folder | text
  std::string path;             // where the data is; empty: the data set's default location
  std::string vocab = "bytes";  // text: bytes (all 256) | chars (those the corpus holds)
  int64_t limit = 0;            // training samples used (0: all)
  int64_t eval_limit = 0;       // test samples used (0: all)
  int64_t workers = 2;          // loader threads
  bool normalize = true;        // images: (x / 255 - mean) / std, else raw 0..255
  double mean = 0.2860;         // Fashion-MNIST's pixel mean and deviation (of x / 255)
  double std = 0.3530;
  int64_t size = 0;   // images: resize to size x size first (0: keep)
  int64_t crop = 0;   // images: random crop (training), center crop (evaluation); 0: none
  int64_t pad = 0;    // images: zeros on each side before the random crop (training)
  bool flip = false;  // images: random horizontal flip (training)
};

struct OptimConfig {
  std::string name;  // sgd | adam | adamw | lamb | muon
  double lr = 0;
  double momentum = 0.9;  // sgd, muon
  bool nesterov = false;  // sgd
  double weight_decay = 0;
  double b1 = 0.9, b2 = 0.999, eps = 1e-8;  // adam, adamw, lamb
  double grad_clip = 0;                     // max global gradient norm (0: off)
  std::string schedule = "constant";        // constant | cosine | step | onecycle
  int64_t warmup = 0;                       // cosine: warm-up steps
  double min_lr = 0;                        // cosine: final lr
  int64_t step_size = 1000;                 // step: steps between decays
  double gamma = 0.1;                       // step: decay factor
};

struct TrainConfig {
  int64_t batch_size = 0;
  int64_t epochs = 1;
  int64_t max_steps = 0;   // steps in all (0: epochs * batches per epoch)
  int64_t eval_every = 0;  // steps between evaluations (0: at each epoch's end)
  int64_t eval_batch_size = 1000;
  int64_t checkpoint_every = 0;   // steps between checkpoints (0: at each epoch's end)
  int64_t seed = 0;               // weights, data order and random ops
  int64_t stop_after = 0;         // testing --resume: stop as if killed after this step (0: off)
  std::string dtype = "float32";  // of the products (mixed precision: float16, bfloat16)
  double loss_scale = 65536.0;    // float16: the first scale of dynamic loss scaling
};

struct LogConfig {
  std::string name;          // runs/<name>; empty: the config file's stem
  std::string dir = "runs";  // where runs go
  int64_t print_every = 50;  // steps between progress lines when stderr is not a terminal
};

// Data-parallel training under mpirun (tinycore/dist): ignored by a single process.
struct DistConfig {
  double timeout_s = 60;        // a collective longer than this ends every rank
  bool sync_batchnorm = false;  // batch statistics over every rank's share (false: per rank)
  double bucket_mb = 25;        // gradients all-reduced in buckets of at most this size
  bool check_replicas = false;  // compare every rank's weights after each step (a debug aid)
};

struct Config {
  ModelConfig model;
  DataConfig data;
  OptimConfig optim;
  TrainConfig train;
  LogConfig log;
  DistConfig dist;
};

// Parses YAML `text` read from `source` (a path, used in messages and for log.name's default),
// then applies `overrides` ("optim.lr=3e-4"). Throws tc::Error for YAML syntax errors, unknown
// sections or keys, values of the wrong type or out of range, and missing required fields.
Config parse_config(const std::string& text, const std::string& source,
                    const std::vector<std::string>& overrides = {});
// The same for the file at `path` (an unreadable file is an error naming it).
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// The effective config as YAML (every key, in schema order); parse_config reads it back equal.
std::string to_yaml(const Config& config);
// Every key with its type, default and meaning, for --help.
std::string describe_keys();

}  // namespace tc::config
