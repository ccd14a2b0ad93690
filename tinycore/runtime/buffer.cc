#include "tinycore/runtime/buffer.h"

#include <atomic>
#include <new>

#include "tinycore/error.h"
#include "tinycore/runtime/device.h"

namespace tc::runtime {

Buffer::Buffer(Device& device, DType dtype, size_t size)
    : device_(device), dtype_(dtype), size_(size) {}

Buffer::~Buffer() { release(); }

void Buffer::release() {
  if (ptr_ && !owner_) device_.allocator().free(ptr_, nbytes());
  ptr_ = nullptr;
  owner_.reset();
}

bool Buffer::adopt(void* memory, std::shared_ptr<const void> owner) {
  if (!device_.uses_host_memory() || reinterpret_cast<uintptr_t>(memory) % kBufferAlignment != 0)
    return false;
  release();
  ptr_ = memory;
  owner_ = std::move(owner);
  bump_version();
  return true;
}

void* Buffer::ensure_allocated() {
  if (ptr_) return ptr_;
  try {
    ptr_ = device_.allocator().alloc(nbytes());
  } catch (const std::bad_alloc&) {  // a size no memory holds is the caller's, named
    fail("%s: out of memory allocating %d bytes (%d %s values)", device_.name(), nbytes(), size_,
         dtype_.name());
  }
  return ptr_;
}

namespace {
std::atomic<uint64_t> write_clock{0}, floor_clock{0};
}

void Buffer::bump_version() { version_ = write_clock.fetch_add(1, std::memory_order_relaxed) + 1; }
uint64_t Buffer::clock() { return write_clock.load(std::memory_order_relaxed); }
void Buffer::invalidate_cached_values() {
  floor_clock.store(write_clock.fetch_add(1, std::memory_order_relaxed) + 1,
                    std::memory_order_relaxed);
}
uint64_t Buffer::cache_floor() { return floor_clock.load(std::memory_order_relaxed); }

void Buffer::copyin(const void* src, size_t bytes) {
  TC_CHECK(bytes == nbytes(), "copyin of ", bytes, " bytes into a buffer of ", nbytes());
  bump_version();
  if (bytes) device_.allocator().copyin(ensure_allocated(), src, bytes);
}

void Buffer::copyout(void* dst, size_t bytes) {
  TC_CHECK(bytes == nbytes(), "copyout of ", bytes, " bytes from a buffer of ", nbytes());
  if (bytes) device_.allocator().copyout(dst, ensure_allocated(), bytes);
}

}  // namespace tc::runtime
