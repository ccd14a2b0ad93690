// infer --model: an ONNX model run once from the command line, on inputs read from .npy files or
// an image, its outputs printed or saved as .npy files.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace tc::infer {

struct OnnxCliArgs {
  std::string model;
  std::vector<std::string> inputs;  // "name=file.npy", or "file.npy" for a model of one input
  // --image FILE fills the input no --input gave (NCHW float32, batch 1): decoded, resized to
  // --size "HxW" or "N" (default: the input's declared height and width), scaled to 0..1 and
  // normalized per channel by --mean and --std "r,g,b" (default 0 and 1).
  std::string image, size, mean, std;
  std::string output_dir;  // where <output>.npy files go; empty: print the outputs
};

// Runs the model and prints (or saves) every output. Throws tc::Error naming the argument, file
// or input that is wrong.
void run_onnx_cli(const OnnxCliArgs& args, FILE* out);

}  // namespace tc::infer
