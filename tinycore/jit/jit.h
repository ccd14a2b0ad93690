// TinyJit: a step function's kernels captured once and replayed. Call 1 runs the function
// normally (compiling its kernels); call 2 runs it again while recording every kernel launch with
// its buffers; from call 3 on, the recorded launches run back to back from prebuilt argument
// arrays, with the new inputs' buffers swapped in: no graphs, no scheduling, no compiling.
//
// What replay reads and writes:
//   - inputs: realized (contiguous) before each call; a replay whose inputs differ in count,
//     shape, dtype or device from the capture throws, naming the input and the change. The same
//     buffer passed as two inputs is an error (replay could not tell them apart). A multi-device
//     input (Tensor::shard) is its pieces, each an input, sharded as at the first call.
//   - outputs: fresh buffers each call, so results the caller keeps are never overwritten. An
//     output that is an input or a tensor from outside the function is returned as that tensor.
//   - everything else the function reads (weights, constants) is read from the same buffers each
//     replay; assign() to a realized tensor writes in place, so optimizer updates persist. An
//     assign the step leaves unrealized is realized with the outputs (and so replayed).
//   - buffers internal to the step share memory when their lifetimes do not overlap (the memory
//     planner); DEBUG=2 prints the planned peak. Plain calls (call 1, JIT=0) free each
//     intermediate value once its last reader ran (engine::FreeIntermediates), so the first step
//     touches about the memory the plan will hold, not a buffer per value.
//   - a launch computing only from outside buffers the step does not write (an inference step's
//     weight layout copies) runs again only when one of them was written since (assign, copyin,
//     another TinyJit's replay): its output keeps a buffer of its own.
//   - reading a value on the host (data/item/tolist) inside the function throws: replay would
//     not see it change. Nested TinyJits throw.
// JIT=0 runs the function plainly every call. JIT_POISON=1 fills the planned memory with NaN
// before each replay (a check that no kernel reads what an earlier one left there).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tinycore/tensor.h"

namespace tc {

class TinyJit {
 public:
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  explicit TinyJit(Fn fn);
  ~TinyJit();
  TinyJit(const TinyJit&) = delete;
  TinyJit& operator=(const TinyJit&) = delete;

  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);

  int calls() const { return calls_; }
  bool captured() const { return plan_ != nullptr; }
  size_t kernel_count() const;      // launches per replay (0 before the capture)
  int64_t planned_bytes() const;    // internal memory after planning
  int64_t unplanned_bytes() const;  // what it would take with a buffer each
  void reset();  // forget the capture: the next call runs plainly, the one after captures again

  struct Plan;  // the captured step (jit.cc)

 private:
  std::vector<Tensor> call(const std::vector<Tensor>& inputs);
  std::vector<Tensor> call_with_pieces(const std::vector<Tensor>& inputs);
  std::vector<Tensor> run_plainly(const std::vector<Tensor>& inputs);
  std::vector<Tensor> capture(const std::vector<Tensor>& inputs);
  std::vector<Tensor> replay(const std::vector<Tensor>& inputs);
  Fn fn_;
  // multi-device inputs: each input's sharding (MULTI's arg; "" for one device), fixed by the
  // first call: fn_ then takes their pieces, each an input of its own
  std::optional<std::vector<std::string>> piece_layout_;
  int calls_ = 0;
  std::unique_ptr<Plan> plan_;
};

}  // namespace tc
