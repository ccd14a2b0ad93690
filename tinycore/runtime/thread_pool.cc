#include "tinycore/runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <utility>

#include "tinycore/helpers.h"

namespace tc::runtime {
namespace {
thread_local const ThreadPool* running_on = nullptr;  // the pool whose fn this thread runs

void cpu_relax() {  // a spin-wait's pause: frees the core's shared resources for its sibling
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; i++) workers_.emplace_back([this, i] { work(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& t : workers_) t.join();
}

template <class Done>
void ThreadPool::await(std::condition_variable& cv, int& sleepers, Done done) {
  constexpr auto kSpin = std::chrono::microseconds(100);
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0; !done(); i++) {
    if (i % 64 == 63) {  // now and then: the clock, and a chance for another thread to run
      if (std::chrono::steady_clock::now() > until) break;
      std::this_thread::yield();
    }
    cpu_relax();
  }
  if (done()) return;
  std::unique_lock<std::mutex> lock(mu_);
  sleepers++;
  cv.wait(lock, done);
  sleepers--;
}

void ThreadPool::work(int index) {
  running_on = this;
  long seen = 0;
  for (;;) {
    await(start_, asleep_, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    const std::function<void(int)>* run;
    {
      std::lock_guard<std::mutex> lock(mu_);
      seen = generation_;
      if (index >= tasks_) continue;  // not needed for this call
      run = run_;
    }
    (*run)(index);
    if (--pending_ == 0) {
      std::lock_guard<std::mutex> lock(mu_);
      if (caller_asleep_) done_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int n, const std::function<void(int)>& fn) {
  if (n == 1) return fn(0);  // a small kernel's one share: no bookkeeping
  const int tasks = std::min(n, size());
  std::atomic<int> next{tasks};
  std::exception_ptr error;
  std::mutex error_mu;
  // Thread t runs i = t first (a kernel's share t is always core t's: what it wrote in the last
  // kernel is still in that core's cache), then each takes the next i until none is left.
  const std::function<void(int)> run = [&](int t) {
    for (int i = t; i < n; i = next++) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
        next = n;  // the others stop taking
      }
    }
  };
  if (tasks <= 1 || running_on == this) {  // nested: the pool's threads are busy with the caller
    for (int t = 0; t < tasks; t++) run(t);
  } else {
    std::lock_guard<std::mutex> launch(launch_mu_);  // one call at a time
    {
      std::lock_guard<std::mutex> lock(mu_);
      run_ = &run;
      tasks_ = tasks;
      pending_ = tasks - 1;
      generation_++;
      if (asleep_) start_.notify_all();
    }
    const ThreadPool* outer = std::exchange(running_on, this);
    run(0);
    running_on = outer;
    await(done_, caller_asleep_, [&] { return pending_ == 0; });
  }
  if (error) std::rethrow_exception(error);
}

void parallel_for(int n, int threads, const std::function<void(int)>& fn) {
  ThreadPool(std::clamp(threads, 1, std::max(n, 1))).parallel_for(n, fn);
}

int cpu_threads() {
  int n = getenv_int("CPU_THREADS", 0);
  if (n > 0) return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace tc::runtime
