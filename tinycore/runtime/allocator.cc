#include "tinycore/runtime/allocator.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace tc::runtime {

namespace {
constexpr size_t kAlign = 64;  // a cache line, and enough for any vector load
size_t rounded(size_t bytes) { return (std::max<size_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign; }
}  // namespace

void* Allocator::alloc(size_t bytes) {
  size_t size = rounded(bytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      cached_ -= size;
      hits_++;
      return p;
    }
  }
  return raw_alloc(size);
}

void Allocator::free(void* ptr, size_t bytes) {
  if (!ptr) return;
  size_t size = rounded(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  free_[size].push_back(ptr);
  cached_ += size;
}

void Allocator::clear_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [size, list] : free_)
    for (void* p : list) raw_free(p, size);
  free_.clear();
  cached_ = 0;
}

size_t Allocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_;
}

void Allocator::copyin(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
void Allocator::copyout(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }

void* Allocator::raw_alloc(size_t bytes) {
  void* p = std::aligned_alloc(kAlign, bytes);
  if (!p) throw std::bad_alloc();
  return p;
}
void Allocator::raw_free(void* ptr, size_t) { std::free(ptr); }

void* Allocator::pinned_alloc(size_t bytes) { return Allocator::raw_alloc(rounded(bytes)); }
void Allocator::pinned_free(void* ptr, size_t bytes) { Allocator::raw_free(ptr, rounded(bytes)); }

}  // namespace tc::runtime
