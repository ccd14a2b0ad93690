// bench's PyTorch: apps/bench/torch_anchors.py (beside this program's source) run by Debian's
// /usr/bin/python3, as a worker that bench drives step by step, so that PyTorch's steps run in
// turns with tinycore's (bench::time_in_turns), or once for one JSON answer (the onnx suite's
// exports and models).
#pragma once

#include <sys/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/bench/measure.h"
#include "apps/bench/report.h"

namespace bench {

// The worker (torch_anchors.py --serve, whose docstring has the protocol: a JSON line a command,
// a JSON line an answer, over a socket pair that is its stdin and stdout). Without python3, the
// script or PyTorch, and once the worker has failed (an error answered to a step, its end, or no
// answer within kTimeoutS), ok() is false, a line on stderr has said why, and its steps do
// nothing: bench goes on without the anchor.
class TorchWorker {
 public:
  static constexpr double kTimeoutS = 300;  // far more than any step or setup here takes

  // Starts the worker with `threads` threads (torch.set_num_threads, once) and waits for its
  // hello.
  explicit TorchWorker(int threads);
  ~TorchWorker();  // closes its stdin, which ends it, and kills it if it is still there after 5 s
  TorchWorker(const TorchWorker&) = delete;
  TorchWorker& operator=(const TorchWorker&) = delete;

  bool ok() const { return fd_ >= 0; }
  int threads() const { return threads_; }  // PyTorch's, as its hello said

  // {"setup": NAME, ...params}: builds and warms up NAME; true when the worker answered ok (its
  // answer is then set_up()). An error answer is said on stderr and leaves the worker running.
  bool setup(const nlohmann::json& command);
  const nlohmann::json& set_up() const { return set_up_; }

  // A workload: one step of `name` (the last setup), waited for; its answer is then last().
  Workload step(const std::string& name);
  const nlohmann::json& last() const { return last_; }
  // The steps' times since the last setup as the worker measured them (time.perf_counter around
  // the step): without the round trip's pipes, JSON and Python loop (overhead_ms()), which a
  // PyTorch user does not pay.
  const std::vector<double>& step_ms() const { return step_ms_; }

  // The median over the steps of the round trip less the worker's own time of the step.
  double overhead_ms() const { return median(overhead_ms_); }

 private:
  // The answer to `command`; nullopt when the worker is gone or has just failed (then ended).
  std::optional<nlohmann::json> call(const nlohmann::json& command);
  std::nullopt_t end(const std::string& why);  // says why on stderr, kills the worker

  int fd_ = -1;
  pid_t pid_ = -1;
  int threads_ = 0;
  std::string read_;  // what was read past the last answer's line
  nlohmann::json set_up_, last_;
  std::vector<double> step_ms_, overhead_ms_;
};

// A worker for the training steps' anchors: PyTorch's CPU build anchors the CPU device alone
// (null on an accelerator).
std::unique_ptr<TorchWorker> cpu_torch_worker();

// Turns of `ours` (workload 0), `others` (1, 2, ...: more anchors) and, where `torch` (null: no
// anchor) builds `setup`, of PyTorch's step of it (the last workload, kept only when all its
// steps ran), in `rounds` rounds after a warm-up each (bench::time_in_turns). Ours is the wall
// time of its call; PyTorch's the worker's own time of its step (TorchWorker::step_ms). With
// PyTorch's, sets r's ratio_vs_pytorch (PyTorch's time over ours, round by round), threads (both
// sides use tc::runtime::cpu_threads()) and pytorch_overhead_ms (TorchWorker::overhead_ms: what
// the round trip added, left out).
Turns time_with_pytorch(TorchWorker* torch, const nlohmann::json& setup, const Workload& ours,
                        int rounds, Result& r, const std::vector<Workload>& others = {});

// One run of torch_anchors.py with `args` (2 threads): its JSON answer; nullopt (and why, on
// stderr) where python3, the script or PyTorch is missing or the run fails.
std::optional<nlohmann::json> run_pytorch(const std::string& args);

}  // namespace bench
