// UOp interning, freeing, replace, toposort and shape inference.
#include "tinycore/uop/uop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace tc {
namespace {

UOpRef range(int64_t id, int64_t end) {
  return UOp::make(Ops::RANGE, dtypes::index, {index_const(end)}, id);
}

TEST(UOp, EqualNodesAreTheSameObject) {
  UOpRef a = range(0, 10) + 3;
  UOpRef b = range(0, 10) + 3;
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE((range(0, 10) + 4).get(), a.get());
  EXPECT_NE(range(1, 10).get(), range(0, 10).get());
  EXPECT_NE(UOp::const_(dtypes::float32, 1).get(), UOp::const_(dtypes::float64, 1).get());
}

TEST(UOp, FloatConstantsInternByBitPattern) {
  EXPECT_NE(UOp::const_(dtypes::float32, 0.0).get(), UOp::const_(dtypes::float32, -0.0).get());
  EXPECT_EQ(UOp::const_(dtypes::float32, NAN).get(), UOp::const_(dtypes::float32, NAN).get());
}

TEST(UOp, UnreferencedNodesAreFreed) {
  size_t before = UOp::live_count();
  {
    UOpRef x = range(7, 100);
    UOpRef e = (x * 4 + 3) / 2 % 5;
    EXPECT_GT(UOp::live_count(), before);
  }
  EXPECT_EQ(UOp::live_count(), before);
}

TEST(UOp, SharedSubgraphStaysAliveWhileReferenced) {
  size_t before = UOp::live_count();
  UOpRef keep;
  {
    UOpRef x = range(8, 100) * 3;
    keep = x + 1;
  }
  size_t mid = UOp::live_count();
  EXPECT_GT(mid, before);
  // rebuilding finds the live node rather than a new one
  EXPECT_EQ((range(8, 100) * 3 + 1).get(), keep.get());
  keep.reset();
  EXPECT_EQ(UOp::live_count(), before);
}

TEST(UOp, ReplaceReturnsItselfWhenNothingChanged) {
  UOpRef x = range(0, 4), y = range(1, 4);
  UOpRef e = x + y;
  EXPECT_EQ(e->replace({x, y}).get(), e.get());
  EXPECT_EQ(e->replace({y, x}).get(), (y + x).get());
}

TEST(UOp, ToposortPutsSourcesFirst) {
  UOpRef x = range(0, 4);
  UOpRef e = (x + 1) * (x + 1);
  std::vector<const UOp*> order = e->toposort();
  ASSERT_EQ(order.size(), 5u);  // RANGE's end, RANGE, 1, ADD, MUL
  EXPECT_EQ(order.back(), e.get());
  for (size_t i = 0; i < order.size(); i++)
    for (const UOpRef& s : order[i]->src)
      EXPECT_LT(std::find(order.begin(), order.end(), s.get()) - order.begin(),
                static_cast<long>(i));
}

TEST(UOp, MovementShapes) {
  UOpRef buf =
      UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.as_ptr(), {}, std::vector<int64_t>{0, 24});
  EXPECT_EQ(buf->shape(), (Shape{24}));
  UOpRef r = UOp::make(Ops::RESHAPE, dtypes::float32, {buf}, Shape{2, 3, 4});
  EXPECT_EQ(r->shape(), (Shape{2, 3, 4}));
  UOpRef p = UOp::make(Ops::PERMUTE, dtypes::float32, {r}, std::vector<int64_t>{2, 0, 1});
  EXPECT_EQ(p->shape(), (Shape{4, 2, 3}));
  UOpRef pad = UOp::make(Ops::PAD, dtypes::float32, {p}, std::vector<int64_t>{1, 2, 0, 0, 3, 0});
  EXPECT_EQ(pad->shape(), (Shape{7, 2, 6}));
  UOpRef s = UOp::make(Ops::SHRINK, dtypes::float32, {pad}, std::vector<int64_t>{1, 5, 0, 1, 2, 6});
  EXPECT_EQ(s->shape(), (Shape{4, 1, 4}));
  UOpRef red = UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {s},
                         std::vector<int64_t>{int64_t(Ops::ADD), 0, 2});
  EXPECT_EQ(red->shape(), (Shape{1, 1, 1}));
}

TEST(UOp, Bounds) {
  UOpRef x = range(0, 10);  // [0, 9]
  EXPECT_EQ(x->vmin(), 0);
  EXPECT_EQ(x->vmax(), 9);
  UOpRef e = x * 3 + 2;
  EXPECT_EQ(e->vmin(), 2);
  EXPECT_EQ(e->vmax(), 29);
  EXPECT_EQ((x / 4)->vmax(), 2);
  EXPECT_EQ((x % 4)->vmin(), 0);
  EXPECT_EQ((x % 4)->vmax(), 3);
  EXPECT_EQ((x % 20)->vmax(), 9);
  EXPECT_EQ((x * -2)->vmin(), -18);
  EXPECT_EQ((x * -2)->vmax(), 0);
  UOpRef c = lt(x, 10);
  EXPECT_EQ(c->vmin(), 1);
  UOpRef d = lt(x, 5);
  EXPECT_EQ(d->vmin(), 0);
  EXPECT_EQ(d->vmax(), 1);
}

}  // namespace
}  // namespace tc

namespace tc {
namespace {

// Threads making and dropping the same nodes at once (kernels are built on several threads): a
// node found in the table while another thread frees it must neither be returned half-freed nor
// deadlock the table. A watchdog fails the run instead of hanging it.
TEST(UOp, ThreadsMakingAndDroppingTheSameNodes) {
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 600 && !done; i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!done) {
      std::fprintf(stderr, "UOp interning deadlocked under concurrent make/free\n");
      std::abort();
    }
  });
  const size_t before = UOp::live_count();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++)
    threads.emplace_back([t] {
      for (int i = 0; i < 200000; i++) {
        UOpRef n = range(900 + (i + t) % 4, 8) * (i % 3 + 2);  // equal nodes across threads
        ASSERT_EQ(n->vmax(), 7 * (i % 3 + 2));                 // inferred before it is found
      }
    });
  for (std::thread& th : threads) th.join();
  done = true;
  watchdog.join();
  EXPECT_EQ(UOp::live_count(), before);  // every node freed and removed from the table
}

}  // namespace
}  // namespace tc
