// The CUDA device: kernels rendered as CUDA C, compiled by NVRTC for the GPU's architecture and
// launched with the driver API on one stream of the GPU's primary context. libcuda is loaded at
// run time (dlopen), so a binary runs where no driver is installed and simply lists no CUDA
// device.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "tinycore/runtime/device.h"

namespace tc::runtime {

// Launches captured once on a CUDA device's stream and replayed as one graph launch, with the
// arguments they were captured with (a hook for TinyJit's replay; not wired in yet).
class CudaGraph {
 public:
  virtual ~CudaGraph() = default;
  // Enqueues the captured launches on the device's stream.
  virtual void replay() = 0;
};

// What the CUDA device offers beyond Device: its GPU, timing with events, graphs. Reach it with
// dynamic_cast<CudaDevice*>(&get_device("CUDA")).
class CudaDevice : public Device {
 public:
  // The GPU's architecture ("sm_90"), its name ("NVIDIA H200") and memory in bytes.
  virtual const std::string& arch() const = 0;
  virtual const std::string& gpu_name() const = 0;
  virtual size_t total_memory() const = 0;
  // The GPU time in milliseconds of the launches `launches` enqueues, measured by CUDA events
  // recorded on the device's stream before and after; waits for them to finish.
  virtual double time_ms(const std::function<void()>& launches) = 0;
  // The CUstream that every launch and copy of this device goes to (for cuBLAS).
  virtual void* stream() const = 0;
  // Makes the GPU's context current on the calling thread, for a library called directly.
  virtual void make_current() const = 0;
  // Records, without running them, the launches `launches` enqueues, as a CUDA graph.
  virtual std::unique_ptr<CudaGraph> capture(const std::function<void()>& launches) = 0;
};

// The first GPU (a CudaDevice), or nullptr when libcuda.so.1 is missing, cuInit fails or there
// is no GPU; cuda_unavailable_reason() then says which.
std::unique_ptr<Device> make_cuda_device();

// Why make_cuda_device() finds no GPU ("libcuda.so.1 cannot be loaded (...)", "cuInit failed:
// ...", "no CUDA GPU"), or "" when it finds one.
std::string cuda_unavailable_reason();

}  // namespace tc::runtime
