// runtime::ThreadPool, which runs kernels' shares: every share once, through spinning and
// sleeping workers, nested and concurrent calls, and exceptions.
#include "tinycore/runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tinycore/error.h"

namespace tc::runtime {
namespace {

TEST(ThreadPool, RunsEveryShareOnce) {
  ThreadPool pool(3);
  ASSERT_EQ(pool.size(), 3);
  for (int launch = 0; launch < 200; launch++) {
    std::vector<std::atomic<int>> hits(3);
    int n = 1 + launch % 3;
    pool.parallel_for(n, [&](int i) { hits[i]++; });
    for (int i = 0; i < 3; i++) ASSERT_EQ(hits[i].load(), i < n ? 1 : 0);
  }
}

// Launches back to back (the workers still spinning) and after pauses longer than the spin (the
// workers asleep) each run every share once: no launch is lost between the two ways of waiting.
TEST(ThreadPool, LaunchesReachSpinningAndSleepingWorkers) {
  ThreadPool pool(3);
  for (int launch = 0; launch < 60; launch++) {
    if (launch % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(400));
    std::vector<std::atomic<int>> hits(3);
    pool.parallel_for(3, [&](int i) {
      if (i == launch % 3) std::this_thread::sleep_for(std::chrono::microseconds(launch % 5 * 60));
      hits[i]++;
    });
    for (int i = 0; i < 3; i++) ASSERT_EQ(hits[i].load(), 1) << "launch " << launch;
  }
}

// More indices than threads: each runs exactly once, on the pool and on a pool made for the call
// (parallel_for, what kernel builds use), for any number of threads.
TEST(ThreadPool, MoreIndicesThanThreadsRunOnceEach) {
  ThreadPool pool(4);
  for (int n : {0, 1, 5, 97}) {
    std::vector<std::atomic<int>> hits(n), made(n);
    pool.parallel_for(n, [&](int i) { hits[i]++; });
    for (int threads : {0, 1, 3, 200}) parallel_for(n, threads, [&](int i) { made[i]++; });
    for (int i = 0; i < n; i++) {
      ASSERT_EQ(hits[i].load(), 1) << "n " << n << " i " << i;
      ASSERT_EQ(made[i].load(), 4) << "n " << n << " i " << i;  // once per call
    }
  }
}

// The first exception comes back to the caller, after every thread has stopped; the others stop
// taking indices, and the pool serves the next call.
TEST(ThreadPool, RethrowsTheFirstExceptionAndStaysUsable) {
  ThreadPool pool(4);
  for (int bad : {0, 3, 999}) {
    std::atomic<int> ran{0};
    auto fn = [&](int i) {
      if (i == bad) throw Error("index " + std::to_string(i) + " failed");
      ran++;
    };
    try {
      pool.parallel_for(1000, fn);
      ADD_FAILURE() << "no exception for bad index " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "index " + std::to_string(bad) + " failed");
    }
    EXPECT_LT(ran.load(), 1000);
    EXPECT_THROW(parallel_for(1000, 3, fn), Error);
  }
  std::vector<std::atomic<int>> hits(8);
  pool.parallel_for(8, [&](int i) { hits[i]++; });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

// A call from inside a call on the same pool (on a worker or on the caller's own share) runs on
// its thread instead of waiting for the busy pool, so it returns; so does a pool made for the call
// (a kernel build inside a kernel share), and calls from several threads at once each finish.
TEST(ThreadPool, NestedAndConcurrentCallsFinish) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> inner(6 * 5), made(6 * 5);
  pool.parallel_for(6, [&](int i) {
    pool.parallel_for(5, [&](int j) { inner[i * 5 + j]++; });
    parallel_for(5, 2, [&](int j) { made[i * 5 + j]++; });
  });
  for (int k = 0; k < 30; k++) {
    EXPECT_EQ(inner[k].load(), 1) << k;
    EXPECT_EQ(made[k].load(), 1) << k;
  }
  std::vector<std::atomic<int>> sums(4);
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; t++)
    callers.emplace_back([&, t] {
      for (int launch = 0; launch < 50; launch++)
        pool.parallel_for(7, [&](int i) { sums[t] += i; });
    });
  for (std::thread& c : callers) c.join();
  for (auto& s : sums) EXPECT_EQ(s.load(), 50 * 21);
}

}  // namespace
}  // namespace tc::runtime
