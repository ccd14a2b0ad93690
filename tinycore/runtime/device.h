// The device contract: an allocator, and a compiler from rendered source to a runnable Program.
// Devices are found by name in a registry ("CPU", "CUDA", "CL").
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tinycore/helpers.h"
#include "tinycore/runtime/allocator.h"

namespace tc::runtime {

// How much a device may spend compiling a kernel (codegen::compile_effort): a device may spend
// less on a kernel with little to gain from optimization (the CPU does: most of a cold start is
// compiling).
enum class CompileEffort {
  kFull,   // a scalar reduce: every optimization (its loops are the compiler's to optimize)
  kTiled,  // a vectorized reduce: its register tiles need only a few loop passes
  kLight,  // no reduce loop: a stream through memory, a short pass list
  kQuick,  // so little work that it runs in microseconds however it is compiled
};
const char* effort_name(CompileEffort effort);

// The language a device's kernels are rendered in: LLVM IR (the CPU's) or a GPU's C dialect.
enum class Language { kLlvm, kCuda, kOpenCl, kHip };
const char* language_name(Language language);  // "llvm", "cuda", "opencl", "hip"
// The language called `name` (case-insensitive); throws tc::Error naming the known ones.
Language language_named(const std::string& name);

// How many compiled kernels a process keeps for reuse, in each cache (TC_KERNEL_CACHE, default
// 4096). Past it a cache starts again: kernels in use live on, the others' code is freed.
inline int kernel_cache_limit() { return std::max(1, getenv_int("TC_KERNEL_CACHE", 4096)); }

// How a kernel is launched: on a GPU, `global` work-groups (CUDA's grid) of `local` threads each,
// per dimension x, y, z (the CPU ignores them); `nargs` buffer arguments; the compile effort.
struct LaunchSpec {
  std::array<int64_t, 3> global{1, 1, 1}, local{1, 1, 1};
  int nargs = 0;
  CompileEffort effort = CompileEffort::kFull;
};

// A compiled kernel: runs over its buffers' pointers (handles, on a GPU), split into `shares`
// parts that may run in parallel (1 runs it whole). On a GPU, run only enqueues the launch:
// Device::synchronize waits for it, and copies to the host wait by themselves.
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
  // Compiles (or fetches from the compile cache) the kernel `fn_name` in `source`, launched as
  // `launch` says.
  virtual std::shared_ptr<Program> compile(const std::string& fn_name, const std::string& source,
                                           const LaunchSpec& launch = {}) = 0;
  // The language its kernels' source is rendered in.
  virtual Language language() const = 0;
  // Waits until every launch enqueued so far has finished.
  virtual void synchronize() {}
  // A GPU (or other accelerator): preferred over the CPU as the default device.
  virtual bool is_accelerator() const { return false; }
  // Its buffers are plain host memory (the CPU's), so a buffer can adopt memory it did not
  // allocate.
  virtual bool uses_host_memory() const { return false; }
  // How many shares a kernel can usefully be split into (the CPU's threads).
  virtual int parallelism() const { return 1; }
  // Bytes in one SIMD register, and how many such registers there are.
  virtual int simd_bytes() const { return 16; }
  virtual int simd_registers() const { return 16; }
  // The CPU multiplies bytes four to an int32 in one instruction (AVX512-VNNI's vpdpbusd: DOT4).
  virtual bool byte_dot() const { return false; }
  // Bytes of cache each core has to itself (a CPU's L2): what a kernel may expect to stay there.
  virtual int64_t cache_bytes() const { return int64_t{1} << 20; }
  // How many kernels `compile` may build at once from different threads (1: one at a time).
  virtual int compile_threads() const { return 1; }
};

// The device named `name` (case-insensitive, an optional ":N" suffix ignored); throws tc::Error
// naming the available devices when there is no such device.
Device& get_device(const std::string& name);
// DEVICE from the environment, else the best available device: the first accelerator in the
// registry's order of preference, else the CPU.
const std::string& default_device();
// Makes `name` the default device (what `--device NAME` of the programs does), before anything
// asked for the default; throws naming the device when it is unknown or unavailable, or when
// another default was already chosen.
void set_default_device(const std::string& name);
// The devices that can run here (a device whose driver or hardware is missing is not listed).
std::vector<std::string> available_devices();
// Every device tinycore knows, available or not.
std::vector<std::string> known_devices();
// Why device `name` is not available here ("" when it is): no driver, no hardware, not built.
std::string unavailable_reason(const std::string& name);

// A device kind's factory: the device, or nullptr when it cannot run here (no driver, no
// hardware), never throwing for that.
using DeviceFactory = std::unique_ptr<Device> (*)();

}  // namespace tc::runtime
