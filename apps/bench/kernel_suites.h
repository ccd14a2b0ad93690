// The compute-bound suites: GEMM (beside Eigen, OpenBLAS, BLIS and oneDNN on the CPU, cuBLAS on
// CUDA) and the convolutions of ResNet-18 and ResNet-50, forward and both backward passes (beside
// oneDNN, whose results they must match, and im2col + Eigen forward).
#pragma once

#include <vector>

#include "apps/bench/device_peak.h"
#include "apps/bench/report.h"

namespace bench {

// Each case is printed as it is measured. `small`: tiny sizes, for the smoke test.
std::vector<Result> gemm_suite(bool small, const Peaks& p);
std::vector<Result> conv_suite(bool small, const Peaks& p);

}  // namespace bench
