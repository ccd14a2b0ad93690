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
  // Counts writes into memory that already held a value (copyin, in-place assign), so cached
  // results computed from the old contents can tell they are stale.
  uint64_t version() const { return version_; }
  void bump_version() { version_++; }
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
