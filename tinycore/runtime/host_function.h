// Functions of the host that a graph runs as kernels of their own (Ops::CUSTOM, its arg the
// name a function was registered under, its sources of one size and dtype): a collective over
// processes (dist/), which generated code cannot be. The scheduler gives each its sources realized
// and contiguous and a fresh output buffer of its first source's shape and dtype, so it runs, and
// TinyJit captures and replays it, in order among the kernels around it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "tinycore/dtype.h"
#include "tinycore/runtime/device.h"

namespace tc::runtime {

// One run: bufs[0] is the output, bufs[1..] the sources, each `numel` elements of `dtype` on
// `device` (host pointers on the CPU, device handles elsewhere).
struct HostCall {
  void* const* bufs;
  int64_t numel;
  DType dtype;
  Device& device;
};

struct HostFunction {
  std::function<void(const HostCall&)> run;
  // The function (registered by that name) whose value over the output's gradient is the single
  // source's gradient: an all-reduce's is itself. Empty: no gradient flows through.
  std::string gradient;
};

// Registers `fn` under `name` (a second registration of a name replaces the first).
void register_host_function(const std::string& name, HostFunction fn);
// The function registered as `name`; throws tc::Error naming it when there is none.
const HostFunction& host_function(const std::string& name);

// A program that runs the host function `name` over its buffers of `numel` elements.
std::shared_ptr<Program> host_program(const std::string& name, int64_t numel, DType dtype,
                                      Device& device);

// A program that copies `bytes` from its buffer 1, on `from`, to its buffer 0, on `to` (an
// Ops::COPY): directly where either side's memory is the host's, else through host memory.
std::shared_ptr<Program> copy_program(Device& from, Device& to, size_t bytes);

}  // namespace tc::runtime
