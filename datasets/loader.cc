#include "datasets/loader.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "tinycore/error.h"

namespace tc::datasets {

DataLoader::DataLoader(int64_t n, int64_t sample_numel, Fetch fetch, LoaderOpts opts)
    : n_(n), sample_numel_(sample_numel), fetch_(std::move(fetch)), o_(opts) {
  if (n < 0 || sample_numel <= 0) fail("DataLoader: %d samples of %d values", n, sample_numel);
  if (o_.batch_size <= 0) fail("DataLoader: batch_size must be positive, got %d", o_.batch_size);
  if (o_.workers < 1 || o_.prefetch < 1)
    fail("DataLoader: needs at least one worker and one prefetched batch (got %d, %d)", o_.workers,
         o_.prefetch);
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
  int64_t begin = b * o_.batch_size, end = std::min(n_, begin + o_.batch_size);
  batch.size = end - begin;
  batch.x.resize(static_cast<size_t>(batch.size * sample_numel_));
  batch.y.resize(static_cast<size_t>(batch.size));
  for (int64_t i = begin; i < end; i++) {
    int64_t k = i - begin, idx = order_[static_cast<size_t>(i)];
    batch.index.push_back(idx);
    fetch_(idx, batch.x.data() + k * sample_numel_, batch.y.data() + k);
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
