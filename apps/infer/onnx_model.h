// An ONNX model as infer runs it (frontends/onnx's OnnxRunner): its declared inputs and outputs,
// inputs checked against them before anything runs (a wrong name, a missing input, a dtype or
// shape that differs from the model's is a tc::Error naming it), outputs realized to the host.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "apps/infer/host_array.h"
#include "frontends/onnx/runner.h"

namespace tc::infer {

class OnnxModel {
 public:
  explicit OnnxModel(const std::string& path);

  const std::vector<onnx::TensorSpec>& inputs() const { return runner_.inputs(); }
  const std::vector<onnx::TensorSpec>& outputs() const { return runner_.outputs(); }
  // Whether requests can be stacked along axis 0: every input and output is declared with a
  // dynamic first dimension.
  bool batchable() const;

  // The declared input `name`; throws naming the name and the model's inputs when there is none.
  const onnx::TensorSpec& input(const std::string& name) const;
  // Throws unless `dtype` and `shape` fit input `name` (same dtype, rank, and every declared
  // dimension; a dynamic one takes any positive size).
  void check_input(const std::string& name, DType dtype, const std::vector<int64_t>& shape) const;

  // The outputs for every input by name (each checked), in the model's order. float16 and
  // bfloat16 outputs come back as float32 (the host has no half type to read them as).
  std::vector<std::pair<std::string, HostArray>> run(const std::map<std::string, Tensor>& in);

 private:
  onnx::OnnxRunner runner_;
};

// "float32 [-1, 3, 224, 224]" (-1 where dynamic; "float32 [?]" for an unranked one).
std::string describe(const onnx::TensorSpec& s);

}  // namespace tc::infer
