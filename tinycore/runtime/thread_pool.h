// A persistent pool of worker threads: a kernel launch hands out its shares without creating
// threads. The calling thread runs share 0 itself.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tc::runtime {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // threads counts the caller: threads - 1 workers
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // Runs fn(i) for every i in [0, n), n <= size(), and returns when all have finished.
  void parallel_for(int n, const std::function<void(int)>& fn);

 private:
  void work(int index);

  std::vector<std::thread> workers_;
  std::mutex mu_, launch_mu_;
  std::condition_variable start_, done_;
  const std::function<void(int)>* fn_ = nullptr;
  int tasks_ = 0, pending_ = 0;
  long generation_ = 0;
  bool stop_ = false;
};

// CPU_THREADS from the environment, else the number of cores.
int cpu_threads();

}  // namespace tc::runtime
