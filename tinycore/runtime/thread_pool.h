// Parallel loops: a persistent pool of worker threads (a kernel launch hands out its shares without
// creating threads), and parallel_for on a pool made for one call (kernel builds).
#pragma once

#include <atomic>
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
  // Runs fn(i) for every i in [0, n) on up to size() threads, the caller's among them: thread t
  // runs i = t, then each takes the next i until none is left; returns when all have finished. The
  // first exception fn throws stops the taking and is rethrown here once every thread has stopped.
  //
  // It cannot deadlock: a call made from inside fn of a call on this pool (on a worker, or on the
  // caller while it runs its share) runs all its indices on its own thread, since waiting for the
  // pool's threads, busy with the outer call, would never end. A call from any other thread waits
  // for the running call to finish, and a running call waits on nothing but its own indices:
  // fn may wait on a pool only if no thread running that pool's fn waits on this one (the CPU
  // device's kernel shares wait on nothing; kernel builds use a pool of their own per call,
  // parallel_for below, which no other thread can reach).
  void parallel_for(int n, const std::function<void(int)>& fn);

 private:
  void work(int index);
  // Waits until done() holds: spinning first, for as long as consecutive kernels of a step come
  // (a wake-up through the kernel costs tens of microseconds, more than a small kernel runs),
  // then asleep on `cv` so that an idle pool costs no CPU.
  template <class Done>
  void await(std::condition_variable& cv, int& sleepers, Done done);

  std::vector<std::thread> workers_;
  std::mutex mu_, launch_mu_;
  std::condition_variable start_, done_;
  const std::function<void(int)>* run_ = nullptr;  // the running call's loop, per thread
  int tasks_ = 0;
  int asleep_ = 0, caller_asleep_ = 0;  // threads waiting on start_, on done_ (under mu_)
  std::atomic<int> pending_ = 0;
  std::atomic<long> generation_ = 0;
  std::atomic<bool> stop_ = false;
};

// fn(i) for each i in [0, n) on up to `threads` threads, the caller's among them, of a pool made
// for the call (ThreadPool::parallel_for): for work that may itself run inside another pool's
// call, such as kernel builds. Its pool is busy with no other call, so it never waits for one.
void parallel_for(int n, int threads, const std::function<void(int)>& fn);

// CPU_THREADS from the environment, else the number of cores.
int cpu_threads();

}  // namespace tc::runtime
