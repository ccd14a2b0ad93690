// A device buffer: `size` elements of `dtype`, allocated on first use and returned to its
// device's allocator cache when the last reference goes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tinycore/dtype.h"

namespace tc::runtime {

class Device;

class Buffer {
 public:
  Buffer(Device& device, DType dtype, size_t size);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  Device& device() const { return device_; }
  DType dtype() const { return dtype_; }
  size_t size() const { return size_; }
  size_t nbytes() const { return size_ * dtype_.itemsize(); }
  bool allocated() const { return ptr_ != nullptr; }

  void* ensure_allocated();
  // Gives the memory back to the device's cache: the contents are gone, and the next use
  // allocates again.
  void release();
  // When memory that already held a value was last written (copyin, in-place assign, a replayed
  // TinyJit step), on a process-wide clock, so results cached before then, of this buffer or
  // computed from it, can tell they are stale.
  uint64_t version() const { return version_; }
  void bump_version();
  static uint64_t clock();  // the time of the latest write of any buffer
  // Makes every value cached until now stale, as if all buffers were written (a TinyJit capture
  // must compute, and so record, everything its step reads); values cached later are fresh from
  // `cache_floor()` on.
  static void invalidate_cached_values();
  static uint64_t cache_floor();
  void copyin(const void* src, size_t bytes);
  void copyout(void* dst, size_t bytes);

 private:
  Device& device_;
  DType dtype_;
  size_t size_;
  void* ptr_ = nullptr;
  uint64_t version_ = 0;
};

}  // namespace tc::runtime
