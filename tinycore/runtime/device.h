// The device contract: an allocator, and a compiler from rendered source to a runnable Program.
// Devices are found by name in a registry ("CPU", later "CUDA", "CL").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tinycore/runtime/allocator.h"

namespace tc::runtime {

// A compiled kernel: runs over its buffers' raw pointers, split into `shares` parts that may
// run in parallel (1 runs it whole).
class Program {
 public:
  virtual ~Program() = default;
  virtual void run(void* const* bufs, int shares = 1) = 0;
  // Only part `part` of the kernel split into `parts`, on the calling thread: a sample of its
  // work (BEAM probes a candidate with it before timing it whole).
  virtual void run_part(void* const* bufs, int part, int parts) = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const std::string& name() const = 0;
  virtual Allocator& allocator() = 0;
  // Compiles (or fetches from the compile cache) the kernel `fn_name` in `source`.
  virtual std::shared_ptr<Program> compile(const std::string& fn_name,
                                           const std::string& source) = 0;
  // The name of the renderer that produces this device's source ("llvm", ...).
  virtual const std::string& renderer() const = 0;
  // How many shares a kernel can usefully be split into (the CPU's threads).
  virtual int parallelism() const { return 1; }
  // Bytes in one SIMD register, and how many such registers there are.
  virtual int simd_bytes() const { return 16; }
  virtual int simd_registers() const { return 16; }
};

// The device named `name` (case-insensitive, an optional ":N" suffix ignored); throws tc::Error
// naming the available devices when there is no such device.
Device& get_device(const std::string& name);
// DEVICE from the environment, else the best available device.
const std::string& default_device();
std::vector<std::string> available_devices();

}  // namespace tc::runtime
