// tinygrad's OnnxRunner: an ONNX model as a lazy Tensor graph. Built from a file, it checks every
// node's operator before anything runs; called with the graph's inputs by name, it returns its
// outputs by name, unrealized (fused and compiled like any Tensor graph when read).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "tinycore/tensor.h"

namespace tc::onnx {

class OnnxRunner {
 public:
  // Throws tc::Error for a file that is not an ONNX model, or a node whose operator (or domain)
  // the importer does not map, naming the node, its op type and opset.
  explicit OnnxRunner(const std::string& path);
  // The same for a model already parsed (from bytes in memory, or built by a program).
  explicit OnnxRunner(::onnx::ModelProto model);

  // The graph's inputs that are not initializers, and its outputs, in the model's order.
  const std::vector<std::string>& input_names() const { return inputs_; }
  const std::vector<std::string>& output_names() const { return outputs_; }

  // The outputs for `inputs` (every input name, a tensor of the declared dtype and rank).
  std::map<std::string, Tensor> operator()(const std::map<std::string, Tensor>& inputs) const;

 private:
  ::onnx::ModelProto model_;
  int64_t opset_ = 0;
  std::map<std::string, Tensor> initializers_;
  std::vector<std::string> inputs_, outputs_;
};

}  // namespace tc::onnx
