// How bench measures: the wall clock, random inputs, and the best time of kernels on the device
// they run on. Launches on an accelerator are asynchronous, so every timer waits for the device
// (Device::synchronize, or CUDA events on CUDA) before it reads a clock.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "apps/bench/anchors.h"
#include "apps/bench/report.h"
#include "tinycore/runtime/device.h"
#include "tinycore/tensor.h"

namespace bench {

double now();  // seconds on a monotonic clock

// A realized tensor of `shape` with values in [-0.5, 0.5), the same on every device (and for
// every shape the same first values, unless the seed differs).
tc::Tensor random(tc::Shape shape, uint32_t seed = 12345);

// The device bench runs on (the default device).
tc::runtime::Device& device();

// The anchors (Eigen, OpenBLAS, BLIS, oneDNN, STREAM) run on the host: they are measured beside
// the CPU device alone.
bool on_cpu();

// Best time in milliseconds of `reps` runs of `launches` (after one warm-up run), each run
// waited for on `device`: timed by CUDA events on the CUDA device, else by the wall clock.
double device_time_ms(const std::function<void()>& launches, int reps);

// The kernels that compute `t`, scheduled once: a call runs them and waits for the device.
Workload kernels_of(const tc::Tensor& t);

// The best time of the kernels that compute `t` (scheduled once), by device_time_ms.
double time_ms(const tc::Tensor& t, int reps);

// The times of workloads run in turns: each runs once to warm up, then every round runs each of
// them once, in order. A busy moment of the shared machine then falls on a case and its anchors
// alike, not on whichever was being measured. Ratios are taken round by round (the anchor's time
// over the case's in the same round) and reported as their median and spread.
struct Turns {
  std::vector<std::vector<double>> ms;  // ms[workload][round]

  double median_ms(size_t workload) const;
  // workload `anchor`'s time over workload `of`'s, round by round: median, min and max
  Ratio ratio(size_t anchor, size_t of = 0) const;
};
Turns time_in_turns(const std::vector<Workload>& workloads, int rounds);

// The kernels that compute `t` (scheduled once) as workload 0, then `anchors`, in turns.
Turns time_beside(const tc::Tensor& t, const std::vector<Workload>& anchors, int rounds);

// The median of `v` (the mean of the middle two for an even count); 0 for none.
double median(std::vector<double> v);

}  // namespace bench
