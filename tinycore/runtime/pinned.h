// Pinned host memory: host arrays a device copies from without staging them first, as PyTorch's
// pin_memory. For a GPU that is page-locked memory its DMA engine reads directly (a copy from
// pageable memory goes through a driver buffer, at about half the speed); for the CPU device it
// is plain host memory. A data loader fills its batches in it, so a batch reaches the device in
// one copy.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

#include "tinycore/runtime/allocator.h"

namespace tc::runtime {

// A standard allocator drawing from `device`'s pinned host memory (Allocator::pinned_alloc), or
// from plain host memory when it has no device.
template <typename T>
class PinnedAllocator {
 public:
  using value_type = T;
  // a container's storage moves and swaps with it, and stays with the device it came from
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using propagate_on_container_copy_assignment = std::true_type;

  PinnedAllocator() = default;
  explicit PinnedAllocator(Allocator* device) : device_(device) {}
  template <typename U>
  PinnedAllocator(const PinnedAllocator<U>& other) : device_(other.device()) {}

  T* allocate(size_t n) {
    size_t bytes = n * sizeof(T);
    return static_cast<T*>(device_ ? device_->pinned_alloc(bytes)
                                   : ::operator new (bytes, std::align_val_t{alignof(T)}));
  }
  void deallocate(T* p, size_t n) {
    if (device_)
      device_->pinned_free(p, n * sizeof(T));
    else
      ::operator delete (p, std::align_val_t{alignof(T)});
  }

  Allocator* device() const { return device_; }
  template <typename U>
  bool operator==(const PinnedAllocator<U>& other) const {
    return device_ == other.device();
  }

 private:
  Allocator* device_ = nullptr;
};

template <typename T>
using PinnedVector = std::vector<T, PinnedAllocator<T>>;

}  // namespace tc::runtime
