#include "apps/bench/measure.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tinycore/engine/realize.h"
#include "tinycore/schedule/schedule.h"
#ifdef TC_HAVE_CUDA
#include "tinycore/runtime/cuda_device.h"
#endif

namespace bench {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

tc::Tensor random(tc::Shape shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(n);
  uint32_t s = seed;
  for (float& x : v)
    x = static_cast<float>((s = s * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
  return tc::Tensor(v, shape).realize();
}

tc::runtime::Device& device() { return tc::runtime::get_device(tc::runtime::default_device()); }

bool on_cpu() { return device().language() == tc::runtime::Language::kLlvm; }

double device_time_ms(const std::function<void()>& launches, int reps) {
  tc::runtime::Device& dev = device();
  launches();
  dev.synchronize();
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
#ifdef TC_HAVE_CUDA
    if (auto* gpu = dynamic_cast<tc::runtime::CudaDevice*>(&dev)) {
      best = std::min(best, gpu->time_ms(launches));
      continue;
    }
#endif
    double t0 = now();
    launches();
    dev.synchronize();
    best = std::min(best, (now() - t0) * 1e3);
  }
  return best;
}

Workload kernels_of(const tc::Tensor& t) {
  auto items = std::make_shared<std::vector<tc::schedule::ScheduleItem>>(
      tc::schedule::create_schedule({t.uop()}));
  return [items] {
    tc::engine::run_schedule(*items);
    device().synchronize();
  };
}

double time_ms(const tc::Tensor& t, int reps) {
  auto items = tc::schedule::create_schedule({t.uop()});
  return device_time_ms([&] { tc::engine::run_schedule(items); }, reps);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + h, v.end());
  if (v.size() % 2) return v[h];
  return (v[h] + *std::max_element(v.begin(), v.begin() + h)) / 2;
}

double Turns::median_ms(size_t workload) const { return median(ms.at(workload)); }

Ratio Turns::ratio(size_t anchor, size_t of) const {
  std::vector<double> r;
  for (size_t i = 0; i < ms.at(of).size(); i++) r.push_back(ms.at(anchor)[i] / ms[of][i]);
  if (r.empty()) return {};
  return {median(r), *std::min_element(r.begin(), r.end()), *std::max_element(r.begin(), r.end())};
}

Turns time_in_turns(const std::vector<Workload>& workloads, int rounds) {
  for (const Workload& w : workloads) w();
  Turns t{std::vector<std::vector<double>>(workloads.size())};
  for (int r = 0; r < rounds; r++)
    for (size_t i = 0; i < workloads.size(); i++) {
      double t0 = now();
      workloads[i]();
      t.ms[i].push_back((now() - t0) * 1e3);
    }
  return t;
}

Turns time_beside(const tc::Tensor& t, const std::vector<Workload>& anchors, int rounds) {
  std::vector<Workload> all = {kernels_of(t)};
  all.insert(all.end(), anchors.begin(), anchors.end());
  return time_in_turns(all, rounds);
}

}  // namespace bench
