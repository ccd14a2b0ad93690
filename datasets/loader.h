// A data loader: batches of samples from any indexable dataset, shuffled per epoch under a seed,
// assembled by background worker threads that run ahead of the training step (up to `prefetch`
// batches), so the step never waits on decoding or augmentation. Results do not depend on the
// number of workers: batch i always holds the same samples, in the same order.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "tinycore/runtime/pinned.h"

namespace tc::datasets {

struct BatchPool;

// A batch owns its arrays. When it is destroyed they go back to the loader that made it, which
// fills them again for a later batch: steady-state loading allocates (and page-faults) nothing.
struct Batch {
  int64_t size = 0;                  // samples in it (the last batch may be short)
  runtime::PinnedVector<float> x;    // size * sample_numel inputs, sample-major
  runtime::PinnedVector<int32_t> y;  // size labels
  std::vector<int64_t> index;        // which dataset samples they are

  Batch() = default;
  Batch(const Batch&) = default;
  Batch(Batch&&) noexcept = default;
  Batch& operator=(const Batch&) = default;
  Batch& operator=(Batch&&) noexcept = default;
  ~Batch();

 private:
  friend class DataLoader;
  std::weak_ptr<BatchPool> pool_;  // where the arrays return (gone with the loader)
};

struct LoaderOpts {
  int64_t batch_size = 32;
  bool shuffle = true;
  uint64_t seed = 0;
  bool drop_last = false;
  int workers = 2;   // 0: batches are assembled by next() itself, on the caller's thread
  int prefetch = 4;  // batches ready ahead at most
  // The device allocator whose pinned host memory holds the batches, so they reach its device in
  // one copy with no staging (page-locked memory for a GPU, as PyTorch's pin_memory); none: plain
  // host memory.
  runtime::Allocator* pin_memory = nullptr;
};

class DataLoader {
 public:
  // Writes sample `index` into x (sample_numel floats) and its label into *y; may run on several
  // threads at once. An exception it throws reaches the caller of next().
  using Fetch = std::function<void(int64_t index, float* x, int32_t* y)>;
  // The same, told the epoch too: for random augmentation that changes per epoch yet does not
  // depend on which worker, or in which order, fetches the sample.
  using EpochFetch = std::function<void(int64_t index, int64_t epoch, float* x, int32_t* y)>;
  DataLoader(int64_t n, int64_t sample_numel, Fetch fetch, LoaderOpts opts = {});
  DataLoader(int64_t n, int64_t sample_numel, EpochFetch fetch, LoaderOpts opts = {});
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  void start_epoch(int64_t epoch);  // the order of epoch `epoch` (called with 0 by the constructor)
  std::optional<Batch> next();      // the next batch of this epoch, none at its end
  int64_t batches_per_epoch() const;

 private:
  void stop_workers();
  void work();
  Batch assemble(int64_t b) const;

  int64_t n_, sample_numel_;
  EpochFetch fetch_;
  LoaderOpts o_;
  std::shared_ptr<BatchPool> pool_;
  int64_t epoch_ = 0;
  std::vector<int64_t> order_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::map<int64_t, Batch> done_;
  std::exception_ptr error_;
  int64_t next_to_build_ = 0, next_to_return_ = 0;
  bool stop_ = false;
};

}  // namespace tc::datasets
