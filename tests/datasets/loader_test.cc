// The data loader: every sample exactly once per epoch, in a seeded order that changes per epoch
// and does not depend on the number of workers; batch contents are what the fetch function
// wrote; drop_last; a fetch error reaches next(); batches assembled inline (no workers) are the
// same; the fetch can be told the epoch; a batch's arrays are refilled after it is dropped; with
// pin_memory, they are the device's pinned host memory.
#include "datasets/loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

#include "tinycore/error.h"
#include "tinycore/runtime/allocator.h"

namespace {

using tc::datasets::Batch;
using tc::datasets::DataLoader;
using tc::datasets::LoaderOpts;

DataLoader::Fetch fetch = [](int64_t i, float* x, int32_t* y) {
  x[0] = static_cast<float>(i);
  x[1] = static_cast<float>(i) * 0.5f;
  *y = static_cast<int32_t>(i % 7);
};

std::vector<int64_t> epoch_order(DataLoader& d) {
  std::vector<int64_t> out;
  while (std::optional<Batch> b = d.next()) {
    for (int64_t k = 0; k < b->size; k++) {
      int64_t i = b->index[k];
      EXPECT_EQ(b->x[k * 2], static_cast<float>(i));
      EXPECT_EQ(b->x[k * 2 + 1], static_cast<float>(i) * 0.5f);
      EXPECT_EQ(b->y[k], i % 7);
      out.push_back(i);
    }
  }
  return out;
}

TEST(DataLoader, EverySampleOncePerEpochInASeededOrder) {
  DataLoader d(103, 2, fetch, {.batch_size = 10, .shuffle = true, .seed = 5, .workers = 3});
  EXPECT_EQ(d.batches_per_epoch(), 11);
  std::vector<int64_t> e0 = epoch_order(d);
  ASSERT_EQ(e0.size(), 103u);
  EXPECT_EQ(std::set<int64_t>(e0.begin(), e0.end()).size(), 103u);
  std::vector<int64_t> sorted = e0;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(e0, sorted);  // shuffled
  d.start_epoch(1);
  std::vector<int64_t> e1 = epoch_order(d);
  EXPECT_NE(e0, e1);  // another order per epoch
  // the same seed and epoch: the same order, with one worker or many
  DataLoader one(103, 2, fetch, {.batch_size = 10, .shuffle = true, .seed = 5, .workers = 1});
  EXPECT_EQ(epoch_order(one), e0);
  DataLoader other(103, 2, fetch, {.batch_size = 10, .shuffle = true, .seed = 6, .workers = 2});
  EXPECT_NE(epoch_order(other), e0);
}

TEST(DataLoader, InOrderAndDropLast) {
  DataLoader d(25, 2, fetch, {.batch_size = 10, .shuffle = false, .drop_last = true});
  std::vector<int64_t> order = epoch_order(d);
  ASSERT_EQ(order.size(), 20u);
  for (int64_t i = 0; i < 20; i++) EXPECT_EQ(order[i], i);
  EXPECT_FALSE(d.next().has_value());
}

TEST(DataLoader, FetchErrorsReachTheCaller) {
  DataLoader d(50, 2,
               [](int64_t i, float* x, int32_t* y) {
                 if (i == 33) throw tc::Error("sample 33: unreadable image");
                 fetch(i, x, y);
               },
               {.batch_size = 8, .shuffle = false, .workers = 2});
  EXPECT_THAT([&] { epoch_order(d); },
              ::testing::ThrowsMessage<tc::Error>(::testing::HasSubstr("unreadable image")));
  EXPECT_THAT(
      [] { DataLoader(10, 2, fetch, {.batch_size = 0}); },
      ::testing::ThrowsMessage<tc::Error>(::testing::HasSubstr("batch_size must be positive")));
  EXPECT_THAT([] { DataLoader(10, 2, fetch, {.workers = -1}); },
              ::testing::ThrowsMessage<tc::Error>(::testing::HasSubstr("workers must be >= 0")));
  // with no workers the error comes from next() itself, and again on the next call
  DataLoader inline_loader(50, 2,
                           [](int64_t i, float* x, int32_t* y) {
                             if (i == 3) throw tc::Error("sample 3: unreadable image");
                             fetch(i, x, y);
                           },
                           {.batch_size = 8, .shuffle = false, .workers = 0});
  for (int twice = 0; twice < 2; twice++)
    EXPECT_THAT([&] { inline_loader.next(); },
                ::testing::ThrowsMessage<tc::Error>(::testing::HasSubstr("sample 3")));
}

TEST(DataLoader, NoWorkersGivesTheSameBatches) {
  for (int64_t epoch : {0, 4}) {
    DataLoader threaded(57, 2, fetch, {.batch_size = 8, .seed = 2, .workers = 3});
    DataLoader inline_loader(57, 2, fetch, {.batch_size = 8, .seed = 2, .workers = 0});
    threaded.start_epoch(epoch);
    inline_loader.start_epoch(epoch);
    std::vector<int64_t> order = epoch_order(inline_loader);
    EXPECT_EQ(order.size(), 57u);
    EXPECT_EQ(epoch_order(threaded), order);
  }
}

TEST(DataLoader, EpochFetchIsToldTheEpoch) {
  DataLoader d(20, 1,
               [](int64_t i, int64_t epoch, float* x, int32_t* y) {
                 x[0] = static_cast<float>(epoch * 1000 + i);
                 *y = static_cast<int32_t>(i);
               },
               {.batch_size = 6, .workers = 2});
  for (int64_t epoch : {0, 3}) {
    d.start_epoch(epoch);
    int64_t seen = 0;
    while (std::optional<Batch> b = d.next())
      for (int64_t k = 0; k < b->size; k++, seen++)
        EXPECT_EQ(b->x[k], static_cast<float>(epoch * 1000 + b->index[k]));
    EXPECT_EQ(seen, 20);
  }
}

TEST(DataLoader, DroppedBatchesAreRefilledNotReallocated) {
  for (int workers : {0, 2}) {
    DataLoader d(300, 2, fetch, {.batch_size = 10, .shuffle = false, .workers = workers});
    std::optional<Batch> held = d.next();  // the caller may keep some
    std::set<const float*> arrays = {held->x.data()};
    // blocks of a batch's sizes, kept: were a dropped batch's arrays freed, malloc would hand
    // them to these, and the next batches would need new ones
    std::vector<std::vector<float>> hogs;
    while (std::optional<Batch> b = d.next()) {
      arrays.insert(b->x.data());
      EXPECT_EQ(b->x[0], static_cast<float>(b->index[0]));  // refilled with its own samples
      EXPECT_EQ(b->x[19], static_cast<float>(b->index[9]) * 0.5f);
      b.reset();
      hogs.emplace_back(20, 1.0f);
    }
    // arrays alive at once: those prefetched (4) and the caller's two
    EXPECT_LE(arrays.size(), 6u) << workers << " workers";
  }
  // a batch may outlive its loader, and copies are independent
  std::optional<Batch> kept;
  {
    DataLoader d(30, 2, fetch, {.batch_size = 10, .shuffle = false});
    kept = d.next();
    Batch copy = *kept;
    copy.x[0] = -1;
    EXPECT_EQ(kept->x[0], 0.0f);
  }
  EXPECT_EQ(kept->x[2], 1.0f);
  kept.reset();
}

// A device allocator whose pinned memory is tracked: what is live, and how much was ever taken.
class TrackedPinnedMemory : public tc::runtime::Allocator {
 public:
  void* pinned_alloc(size_t bytes) override {
    void* p = Allocator::pinned_alloc(bytes);
    std::lock_guard<std::mutex> lock(mu_);
    live_[p] = bytes;
    allocations_++;
    return p;
  }
  void pinned_free(void* p, size_t bytes) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      EXPECT_EQ(live_.count(p), 1u) << "freed a block it did not allocate";
      EXPECT_EQ(live_[p], bytes) << "freed with another size";
      live_.erase(p);
    }
    Allocator::pinned_free(p, bytes);
  }
  // Whether [p, p + bytes) lies in one live block.
  bool holds(const void* p, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto [block, size] : live_) {
      const char* b = static_cast<const char*>(block);
      if (p >= b && static_cast<const char*>(p) + bytes <= b + size) return true;
    }
    return false;
  }
  size_t live() {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.size();
  }
  int allocations() {
    std::lock_guard<std::mutex> lock(mu_);
    return allocations_;
  }

 private:
  std::mutex mu_;
  std::map<void*, size_t> live_;
  int allocations_ = 0;
};

TEST(DataLoader, BatchesAreInTheDevicesPinnedMemory) {
  for (int workers : {0, 2}) {
    TrackedPinnedMemory device;
    {
      DataLoader d(95, 2, fetch,
                   {.batch_size = 10,
                    .shuffle = true,
                    .seed = 3,
                    .workers = workers,
                    .pin_memory = &device});
      for (int epoch = 0; epoch < 2; epoch++) {
        d.start_epoch(epoch);
        int64_t seen = 0;
        while (std::optional<Batch> b = d.next()) {
          ASSERT_TRUE(device.holds(b->x.data(), b->x.size() * sizeof(float)));
          ASSERT_TRUE(device.holds(b->y.data(), b->y.size() * sizeof(int32_t)));
          for (int64_t k = 0; k < b->size; k++, seen++) {
            EXPECT_EQ(b->x[k * 2], static_cast<float>(b->index[k]));
            EXPECT_EQ(b->y[k], b->index[k] % 7);
          }
          Batch copy = *b;  // a copy is pinned too, in arrays of its own
          EXPECT_TRUE(device.holds(copy.x.data(), copy.x.size() * sizeof(float)));
          EXPECT_NE(copy.x.data(), b->x.data());
        }
        EXPECT_EQ(seen, 95);
      }
      // 20 batches and their copies (40 arrays): the batches' arrays are reused, not allocated
      // per batch (which would take 40 more)
      EXPECT_LT(device.allocations(), 40 + 20) << workers << " workers";
    }
    EXPECT_EQ(device.live(), 0u) << "the loader's pinned arrays outlive it";
  }
}

}  // namespace
