#include "tinycore/runtime/thread_pool.h"

#include "tinycore/error.h"
#include "tinycore/helpers.h"

namespace tc::runtime {

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

void ThreadPool::work(int index) {
  long seen = 0;
  for (;;) {
    const std::function<void(int)>* fn;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= tasks_) continue;  // not needed for this launch
      fn = fn_;
    }
    (*fn)(index);
    std::lock_guard<std::mutex> lock(mu_);
    if (--pending_ == 0) done_.notify_one();
  }
}

void ThreadPool::parallel_for(int n, const std::function<void(int)>& fn) {
  TC_CHECK(n >= 1 && n <= size(), "parallel_for of ", n, " shares on ", size(), " threads");
  if (n == 1) return fn(0);
  std::lock_guard<std::mutex> launch(launch_mu_);  // one launch at a time
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    tasks_ = n;
    pending_ = n - 1;
    generation_++;
  }
  start_.notify_all();
  fn(0);
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });
}

int cpu_threads() {
  int n = getenv_int("CPU_THREADS", 0);
  if (n > 0) return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace tc::runtime
