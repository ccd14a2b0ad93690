// Host memory for buffers, with a free-list cache keyed by size so steady-state training
// allocates nothing.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tc::runtime {

class Allocator {
 public:
  void* alloc(size_t bytes);
  void free(void* ptr, size_t bytes);  // keeps the block for the next alloc of this size
  void clear_cache();
  size_t cached_bytes() const;
  size_t cache_hits() const { return hits_; }
  ~Allocator();

 private:
  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t cached_ = 0, hits_ = 0;
};

}  // namespace tc::runtime
