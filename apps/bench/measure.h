// How bench measures: the wall clock, random inputs, and the best time of kernels on the device
// they run on. Launches on an accelerator are asynchronous, so every timer waits for the device
// (Device::synchronize, or CUDA events on CUDA) before it reads a clock.
#pragma once

#include <functional>

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

// The same for the kernels that compute `t` (scheduled and compiled once, before timing).
double time_ms(const tc::Tensor& t, int reps);

}  // namespace bench
