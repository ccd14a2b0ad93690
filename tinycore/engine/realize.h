// Running schedules: allocate each kernel's buffers, compile (cached), launch, and count.
#pragma once

#include <cstdint>
#include <vector>

#include "tinycore/schedule/schedule.h"

namespace tc::engine {

// Totals since the last reset, as tinygrad's GlobalCounters.
struct GlobalCounters {
  static inline int64_t kernel_count = 0;
  static inline double global_ops = 0;
  static inline double global_mem = 0;
  static inline double time_sum_s = 0;
  static void reset() { kernel_count = 0, global_ops = 0, global_mem = 0, time_sum_s = 0; }
};

void run_schedule(const std::vector<schedule::ScheduleItem>& items);

// Computes `roots` and returns, for each, the contiguous buffer view that holds its value.
std::vector<UOpRef> realize(const std::vector<UOpRef>& roots);

}  // namespace tc::engine
