#include "datasets/loader.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "tinycore/error.h"

namespace tc::datasets {

// Arrays of batches the caller is done with, kept for the next batches to fill. Bounded by the
// most batches alive at once (those prefetched and the caller's), so it never grows.
struct BatchPool {
  std::mutex mu;
  std::vector<Batch> spare;  // unlinked from the pool, so destroying one frees its arrays
  size_t capacity = 0;
};

Batch::~Batch() {
  std::shared_ptr<BatchPool> pool = pool_.lock();
  if (!pool || x.capacity() == 0) return;
  Batch arrays;
  arrays.x = std::move(x);
  arrays.y = std::move(y);
  arrays.index = std::move(index);
  std::lock_guard<std::mutex> lock(pool->mu);
  if (pool->spare.size() < pool->capacity) pool->spare.push_back(std::move(arrays));
}

DataLoader::DataLoader(int64_t n, int64_t sample_numel, Fetch fetch, LoaderOpts opts)
    : DataLoader(
          n, sample_numel,
          [fetch = std::move(fetch)](int64_t i, int64_t, float* x, int32_t* y) { fetch(i, x, y); },
          opts) {}

DataLoader::DataLoader(int64_t n, int64_t sample_numel, EpochFetch fetch, LoaderOpts opts)
    : n_(n),
      sample_numel_(sample_numel),
      fetch_(std::move(fetch)),
      o_(opts),
      pool_(std::make_shared<BatchPool>()) {
  if (n < 0 || sample_numel <= 0) fail("DataLoader: %d samples of %d values", n, sample_numel);
  if (o_.batch_size <= 0) fail("DataLoader: batch_size must be positive, got %d", o_.batch_size);
  if (o_.workers < 0 || o_.prefetch < 1)
    fail("DataLoader: workers must be >= 0 and prefetch >= 1 (got %d, %d)", o_.workers,
         o_.prefetch);
  pool_->capacity = static_cast<size_t>(o_.prefetch) + 2;
  pool_->spare.reserve(pool_->capacity);
  start_epoch(0);
}

DataLoader::~DataLoader() { stop_workers(); }

int64_t DataLoader::batches_per_epoch() const {
  return o_.drop_last ? n_ / o_.batch_size : (n_ + o_.batch_size - 1) / o_.batch_size;
}

void DataLoader::stop_workers() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  space_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void DataLoader::start_epoch(int64_t epoch) {
  stop_workers();
  epoch_ = epoch;
  order_.resize(static_cast<size_t>(n_));
  std::iota(order_.begin(), order_.end(), 0);
  if (o_.shuffle) {
    std::mt19937_64 rng(o_.seed * 1000003 + static_cast<uint64_t>(epoch));
    for (size_t i = order_.size(); i > 1; i--)  // Fisher-Yates: the same on every platform
      std::swap(order_[i - 1], order_[rng() % i]);
  }
  done_.clear();
  error_ = nullptr;
  next_to_build_ = next_to_return_ = 0;
  stop_ = false;
  for (int w = 0; w < o_.workers; w++) threads_.emplace_back([this] { work(); });
}

Batch DataLoader::assemble(int64_t b) const {
  Batch batch;
  batch.x = runtime::PinnedVector<float>(runtime::PinnedAllocator<float>(o_.pin_memory));
  batch.y = runtime::PinnedVector<int32_t>(runtime::PinnedAllocator<int32_t>(o_.pin_memory));
  {
    std::lock_guard<std::mutex> lock(pool_->mu);
    if (!pool_->spare.empty()) {
      batch = std::move(pool_->spare.back());
      pool_->spare.pop_back();
    }
  }
  batch.pool_ = pool_;
  int64_t begin = b * o_.batch_size, end = std::min(n_, begin + o_.batch_size);
  batch.size = end - begin;
  batch.x.resize(static_cast<size_t>(batch.size * sample_numel_));  // no-op on a reused array
  batch.y.resize(static_cast<size_t>(batch.size));
  batch.index.clear();
  for (int64_t i = begin; i < end; i++) {
    int64_t k = i - begin, idx = order_[static_cast<size_t>(i)];
    batch.index.push_back(idx);
    fetch_(idx, epoch_, batch.x.data() + k * sample_numel_, batch.y.data() + k);
  }
  return batch;
}

void DataLoader::work() {
  for (;;) {
    int64_t b;
    {
      std::unique_lock<std::mutex> lock(mu_);
      space_.wait(lock, [&] { return stop_ || next_to_build_ < next_to_return_ + o_.prefetch; });
      if (stop_ || next_to_build_ >= batches_per_epoch()) return;
      b = next_to_build_++;
    }
    Batch batch;
    std::exception_ptr err;
    try {
      batch = assemble(b);
    } catch (...) {
      err = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (err && !error_) error_ = err;
      done_[b] = std::move(batch);
    }
    ready_.notify_all();
  }
}

std::optional<Batch> DataLoader::next() {
  if (o_.workers == 0) {
    if (next_to_return_ >= batches_per_epoch()) return std::nullopt;
    Batch b = assemble(next_to_return_);  // a fetch error leaves this batch next, as with workers
    next_to_return_++;
    return b;
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (next_to_return_ >= batches_per_epoch()) return std::nullopt;
  ready_.wait(lock, [&] { return error_ || done_.count(next_to_return_); });
  if (error_) std::rethrow_exception(error_);
  Batch b = std::move(done_[next_to_return_]);
  done_.erase(next_to_return_++);
  lock.unlock();
  space_.notify_all();
  return b;
}

}  // namespace tc::datasets
