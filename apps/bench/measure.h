// How bench measures: the wall clock, random inputs, and the best time of kernels on the device
// they run on. Launches on an accelerator are asynchronous, so every timer waits for the device
// (Device::synchronize, or CUDA events on CUDA) before it reads a clock.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/bench/anchors.h"
#include "tinycore/runtime/device.h"
#include "tinycore/tensor.h"

namespace bench {

double now();  // seconds on a monotonic clock

// A realized tensor of `shape` with values in [-0.5, 0.5), the same on every device.
tc::Tensor random(tc::Shape shape);

// The device bench runs on (the default device).
tc::runtime::Device& device();

// Best time in milliseconds of `reps` runs of `launches` (after one warm-up run), each run
// waited for on `device`: timed by CUDA events on the CUDA device, else by the wall clock.
double device_time_ms(const std::function<void()>& launches, int reps);

// The kernels that compute `t`, scheduled once: a call runs them and waits for the device.
Workload kernels_of(const tc::Tensor& t);

// The best time of the kernels that compute `t` (scheduled once), by device_time_ms.
double time_ms(const tc::Tensor& t, int reps);

// The best times of the kernels that compute `t` and of each anchor, in milliseconds, timed in
// turns (best_ms_in_turns); with no anchors, {time_ms(t)}.
std::vector<double> time_beside(const tc::Tensor& t, const std::vector<Workload>& anchors,
                                int reps);

// Best times in milliseconds of each workload, measured in turns: each runs once to warm up, then
// every round runs each of them once. A busy moment of the shared machine then falls on a case
// and its anchors alike, not on whichever was being measured, so their ratio holds still.
std::vector<double> best_ms_in_turns(const std::vector<Workload>& workloads, int rounds);

// The PyTorch anchors: apps/bench/torch_anchors.py (beside this program's source) run by
// /usr/bin/python3 with `args`, its JSON answer; nullopt (and why, on stderr) where PyTorch is
// missing.
std::optional<nlohmann::json> run_pytorch(const std::string& args);

}  // namespace bench
