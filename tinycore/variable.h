// A named integer bound per call (tinygrad's Variable("start_pos", 1, 1024)), for steps whose
// arithmetic depends on a position or length that changes between calls, like a KV cache's write
// position. Its value lives in a one-element int32 buffer that kernels read at launch, so one
// compiled kernel, and one TinyJit capture, serve every value in [min, max]: bind() writes the
// new value and the next launch sees it.
//
// Unlike tinygrad, shapes cannot be symbolic: a tensor sized by the variable is written as a
// tensor of the maximum size, masked with comparisons against var.tensor(). Loops over it stop at
// the value where the mask says what lies past it (codegen/narrow.h): the work follows the value.
#pragma once

#include <cstdint>
#include <string>

#include "tinycore/tensor.h"

namespace tc {

class Variable {
 public:
  Variable(std::string name, int64_t min, int64_t max);  // starts at min

  // Sets the value; throws naming the variable and its range when outside [min, max].
  Variable& bind(int64_t value);
  int64_t value() const { return value_; }
  const std::string& name() const { return name_; }
  int64_t min() const { return min_; }
  int64_t max() const { return max_; }
  // The value as a 0-d int32 tensor on `device` (default: the default device). Graphs built on
  // it read the value bound when they run.
  Tensor tensor() const { return tensor_; }

 private:
  std::string name_;
  int64_t min_, max_, value_;
  Tensor tensor_;
};

}  // namespace tc
