// oneDNN (Debian's libdnnl 2.6, built on OpenMP) as the anchor a user of a CPU framework would
// pick: its 2-D convolutions (forward, backward-data, backward-weights) and its fp32 matmul. Each
// is set up once, as a user of oneDNN sets it up (primitive made, inputs reordered into the
// layouts it prefers), so that a call of the workload runs the primitive alone, on `threads`
// OpenMP threads.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "apps/bench/anchors.h"

namespace bench {

enum class ConvPass { kForward, kBackwardData, kBackwardWeights };

// A convolution pass set up in oneDNN: `run` executes the primitive on buffers it owns, `result`
// reads its output back in the plain layout (y and dx NCHW, dw OIHW).
struct OnednnConv {
  Workload run;
  std::function<std::vector<float>()> result;
};

// The pass's two inputs in plain layouts (x and dy NCHW, w OIHW): forward (x, w), backward-data
// (dy, w), backward-weights (x, dy). Throws std::runtime_error naming the pass and the shape where
// oneDNN makes no primitive for them.
OnednnConv onednn_conv(const ConvShape& s, ConvPass pass, const std::vector<float>& a,
                       const std::vector<float>& b, int threads);

// C = A*B with A m x k, B k x n, fp32 row-major (plain layouts: the user's matrices as they are).
// Throws std::runtime_error naming the shape where oneDNN makes no primitive.
Workload onednn_sgemm(int m, int k, int n, int threads);

// "oneDNN 2.6.3 (OpenMP, 2 threads, ISA ...)": the version, runtime and ISA it runs.
std::string onednn_info(int threads);

}  // namespace bench
