// Device memory for buffers, with a free-list cache keyed by size so steady-state training
// allocates nothing. The base class is host memory; a device whose memory the host cannot
// address (a GPU) overrides the raw allocation and the copies, and its pointers are handles
// (a CUdeviceptr, a cl_mem) that only its programs and copies interpret.
#pragma once

#include <cstddef>
#include <filesystem>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tc::runtime {

class Allocator {
 public:
  virtual ~Allocator() = default;
  void* alloc(size_t bytes);
  void free(void* ptr, size_t bytes);  // keeps the block for the next alloc of this size
  void clear_cache();
  size_t cached_bytes() const;
  size_t cache_hits() const { return hits_; }

  // Host memory to device memory `dst` and back; `bytes` fit the buffer.
  virtual void copyin(void* dst, const void* src, size_t bytes);
  virtual void copyout(void* dst, const void* src, size_t bytes);

  // Pinned host memory (see pinned.h): host memory that copyin reads fastest. Here plain
  // 64-byte-aligned memory; a GPU's allocator returns page-locked memory.
  virtual void* pinned_alloc(size_t bytes);
  virtual void pinned_free(void* ptr, size_t bytes);

 protected:
  // A new block of `bytes` (a multiple of 64, never 0), and its release. Device allocators
  // clear the cache in their destructor (clear_cache calls raw_free, virtual).
  virtual void* raw_alloc(size_t bytes);
  virtual void raw_free(void* ptr, size_t bytes);

 private:
  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t cached_ = 0, hits_ = 0;
};

// Host memory (the CPU device): frees its cache when destroyed.
class HostAllocator : public Allocator {
 public:
  ~HostAllocator() override { clear_cache(); }
};

// Whether a virtio balloon among `virtio_devices` (/sys/bus/virtio/devices) reports the guest's
// free memory to its hypervisor, which then takes it back: the CPU allocator's large blocks use
// small pages there (allocator.cc says why).
bool hypervisor_takes_free_memory(const std::filesystem::path& virtio_devices);

}  // namespace tc::runtime
