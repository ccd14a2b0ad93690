// The onnx suite: ResNet-50 and MobileNetV2 as PyTorch exports them to ONNX (full size, 224x224),
// through tinycore's importer: the latency of a batch (median after warm-up, under TinyJit) and
// the first run of a fresh process with a cold kernel cache (import, schedule, compile, run),
// beside PyTorch on the same weights and OpenCV's DNN module on the same file.
#pragma once

#include <cstdint>
#include <vector>

#include "apps/bench/report.h"

namespace bench {

// The cases for each model and batch. The models are exported by apps/bench/torch_anchors.py
// into a cache folder ($TC_BENCH_ONNX_DIR, else tinycore-bench-onnx in the user's cache); where
// PyTorch or torchvision is missing, says that the suite needs them and returns no case.
std::vector<Result> onnx_suite(const std::vector<int64_t>& batches);

// The environment variable that makes this program the child that times a first run, and that
// child's side: the model, batch and answer file come from the environment the parent set.
inline constexpr const char* kOnnxFirstRunEnv = "TC_BENCH_ONNX_FIRST_RUN";
int onnx_first_run_child(const char* answer);

}  // namespace bench
