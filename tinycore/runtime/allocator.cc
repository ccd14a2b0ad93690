#include "tinycore/runtime/allocator.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>

namespace tc::runtime {

namespace {
constexpr size_t kAlign = 64;  // a cache line, and enough for any vector load
size_t round_up(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

// Blocks of at least a huge page are mapped on huge-page boundaries, in whole huge pages (so
// buffers of nearby sizes reuse each other's cached blocks), and offered to the kernel's
// transparent huge pages where they pay: memory first touched 2 MB at a time costs a fraction of
// 4 KB faults. Not under a hypervisor that takes back the guest's free memory (free page
// reporting): the large free blocks huge pages come from are then the host's again, and faulting
// one back in costs 2-3 ms, 5x the same memory in small pages (400 MB first touched on a
// Firecracker VM: 1.0-1.2 s in huge pages, 0.23 s in small ones; 0.05 s in huge pages freed a
// moment before). Under AddressSanitizer every block stays malloc's, exactly sized, whose
// redzones catch a kernel writing past its end.
constexpr size_t kHugePage = size_t{2} << 20;
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMapHuge = false;
#else
constexpr bool kMapHuge = true;
#endif
bool mapped_huge(size_t bytes) { return kMapHuge && bytes >= kHugePage; }
// The size a block is allocated and cached at: whole huge pages for a mapped one.
size_t rounded(size_t bytes) {
  return round_up(std::max<size_t>(bytes, 1), mapped_huge(bytes) ? kHugePage : kAlign);
}
bool huge_pages_pay() {
  static const bool pay = !hypervisor_takes_free_memory("/sys/bus/virtio/devices");
  return pay;
}

void* map_huge(size_t bytes) {
  size_t size = rounded(bytes);
  void* raw =
      mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  // keep the aligned `size` bytes inside the mapping, return the rest
  auto start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = round_up(start, kHugePage);
  if (aligned > start) munmap(raw, aligned - start);
  if (size_t tail = start + kHugePage - aligned; tail > 0)
    munmap(reinterpret_cast<void*>(aligned + size), tail);
  void* p = reinterpret_cast<void*>(aligned);
  // advice only: without THP the pages are simply small
  madvise(p, size, huge_pages_pay() ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  // small pages faulted in by one call, not one fault a page as kernels write them: 0.85 GB/s
  // against 0.36-0.58 on that VM (MNIST's first step 0.56-0.69 -> 0.40-0.49 s); before Linux 5.14
  // the call fails and the pages fault in as written
  if (!huge_pages_pay()) madvise(p, size, MADV_POPULATE_WRITE);
  return p;
}
}  // namespace

bool hypervisor_takes_free_memory(const std::filesystem::path& virtio_devices) {
  constexpr const char* kBalloon = "0x0005";  // VIRTIO_ID_BALLOON
  constexpr size_t kReporting = 5;            // VIRTIO_BALLOON_F_REPORTING, a feature bit
  std::error_code ec;
  for (const auto& d : std::filesystem::directory_iterator(virtio_devices, ec)) {
    std::string id, features;  // features: one '0' or '1' per bit, bit 0 first
    if (std::ifstream(d.path() / "device") >> id && id == kBalloon &&
        std::ifstream(d.path() / "features") >> features && features.size() > kReporting &&
        features[kReporting] == '1')
      return true;
  }
  return false;
}

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
  if (mapped_huge(bytes)) return map_huge(bytes);
  void* p = std::aligned_alloc(kAlign, bytes);
  if (!p) throw std::bad_alloc();
  return p;
}
void Allocator::raw_free(void* ptr, size_t bytes) {
  if (mapped_huge(bytes))
    munmap(ptr, rounded(bytes));
  else
    std::free(ptr);
}

void* Allocator::pinned_alloc(size_t bytes) { return Allocator::raw_alloc(rounded(bytes)); }
void Allocator::pinned_free(void* ptr, size_t bytes) { Allocator::raw_free(ptr, rounded(bytes)); }

}  // namespace tc::runtime
