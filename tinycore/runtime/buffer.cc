#include "tinycore/runtime/buffer.h"

#include <cstring>

#include "tinycore/error.h"
#include "tinycore/runtime/device.h"

namespace tc::runtime {

Buffer::Buffer(Device& device, DType dtype, size_t size)
    : device_(device), dtype_(dtype), size_(size) {}

Buffer::~Buffer() {
  if (ptr_) device_.allocator().free(ptr_, nbytes());
}

void* Buffer::ensure_allocated() {
  if (!ptr_) ptr_ = device_.allocator().alloc(nbytes());
  return ptr_;
}

void Buffer::copyin(const void* src, size_t bytes) {
  TC_CHECK(bytes == nbytes(), "copyin of ", bytes, " bytes into a buffer of ", nbytes());
  version_++;
  if (bytes) std::memcpy(ensure_allocated(), src, bytes);
}

void Buffer::copyout(void* dst, size_t bytes) {
  TC_CHECK(bytes == nbytes(), "copyout of ", bytes, " bytes from a buffer of ", nbytes());
  if (bytes) std::memcpy(dst, ensure_allocated(), bytes);
}

}  // namespace tc::runtime
