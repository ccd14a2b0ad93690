// Running schedules: allocate each kernel's buffers, compile (cached), launch, and count.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tinycore/codegen/kernel.h"
#include "tinycore/runtime/buffer.h"
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
// Adds a launch of `kernel` that took `seconds` to the GlobalCounters; DEBUG=2 prints its line
// (name, memory, time, GFLOP/s and GB/s).
void count_launch(const codegen::Kernel& kernel, runtime::Device& device, size_t args,
                  double seconds);

// Computes `roots` and returns, for each, the contiguous buffer view that holds its value: its
// target when one is given (see schedule::create_schedule).
std::vector<UOpRef> realize(const std::vector<UOpRef>& roots,
                            const std::vector<UOpRef>& targets = {});

// One kernel launch as it ran: what TinyJit records and replays.
struct Launch {
  std::shared_ptr<const codegen::Kernel> kernel;
  std::vector<std::shared_ptr<runtime::Buffer>> bufs;  // bufs[i] is argument i
  std::vector<bool> fresh;  // argument i was first allocated by this launch (it is an output)
  int shares = 1;
};

// While alive, every launch on this thread is appended to `launches` (after it ran), and every
// node a schedule marked `realized` to `marked`. Captures do not nest: a second one on the same
// thread throws.
class LaunchCapture {
 public:
  LaunchCapture(std::vector<Launch>* launches, std::vector<UOpRef>* marked);
  ~LaunchCapture();
  LaunchCapture(const LaunchCapture&) = delete;
  LaunchCapture& operator=(const LaunchCapture&) = delete;
  static bool active();

  // While alive, the capture running on this thread (if any) is suspended: launches are not
  // recorded and host reads are allowed. For values computed only from constants that a step
  // reads on the host (an ONNX model's shapes): replay reads their buffers as constants.
  class Pause {
   public:
    Pause();
    ~Pause();
    Pause(const Pause&) = delete;
    Pause& operator=(const Pause&) = delete;

   private:
    std::vector<Launch>* launches_;
    std::vector<UOpRef>* marked_;
  };
};

// While alive, each schedule run on this thread frees the values it computed only on the way to
// its roots (and targets) once their last kernel has read them, so later kernels of the same
// schedule reuse their memory; the graph nodes that cached those values compute them again if
// read later. A TinyJit's plain calls run in one: their step then touches about the memory its
// capture plans, not a buffer per value. Ignored while a LaunchCapture records.
class FreeIntermediates {
 public:
  FreeIntermediates();
  ~FreeIntermediates();
  FreeIntermediates(const FreeIntermediates&) = delete;
  FreeIntermediates& operator=(const FreeIntermediates&) = delete;
};

}  // namespace tc::engine
