// A device buffer: `size` elements of `dtype`, allocated on first use and returned to its
// device's allocator cache when the last reference goes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tinycore/dtype.h"

namespace tc::runtime {

class Device;

// What every buffer's memory is aligned to, and so what a kernel may assume of its arguments (the
// CPU renderer declares it): a GGUF file's default tensor alignment, so that its tensors can be
// adopted in place.
constexpr size_t kBufferAlignment = 32;

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
  // Uses `memory` (nbytes() of host memory that `owner` keeps alive: a mapped file) as this
  // buffer's, without a copy; false, and nothing changes, where the device's memory is not the
  // host's or `memory` is not aligned to kBufferAlignment. Released, the buffer lets go of it and
  // the next use allocates afresh.
  bool adopt(void* memory, std::shared_ptr<const void> owner);
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
  std::shared_ptr<const void> owner_;  // of adopted memory, which is not the allocator's
  uint64_t version_ = 0;
};

}  // namespace tc::runtime
