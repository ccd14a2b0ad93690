// tinygrad's OnnxRunner: an ONNX model as a lazy Tensor graph. Built from a file or a parsed
// ModelProto, it checks every node's operator (in subgraphs too) before anything runs; called
// with the graph's inputs by name, it returns its outputs by name, unrealized (fused and compiled
// like any Tensor graph when read).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "frontends/onnx/value.h"
#include "onnx/onnx_pb.h"
#include "tinycore/tensor.h"

namespace tc::onnx {

// A graph input's or output's declared type (its ValueInfo): what a caller must give or gets.
struct TensorSpec {
  std::string name;
  DType dtype;                 // void where the model declares no element type
  std::vector<int64_t> shape;  // -1 where a dimension is symbolic or not given
  bool ranked = true;          // false: the model declares no shape at all
};

class OnnxRunner {
 public:
  // Throws tc::Error for a file that is not an ONNX model, or a node whose operator (or domain)
  // the importer does not map, naming the node, its op type and opset. Initializers kept in
  // external files are read from the model's folder.
  explicit OnnxRunner(const std::string& path);
  // A model parsed elsewhere (the Python binding's bytes); external data is read from `folder`,
  // and is an error where it is empty.
  explicit OnnxRunner(const ::onnx::ModelProto& model, const std::string& folder = "");

  // The graph's inputs that are not initializers, and its outputs, in the model's order.
  const std::vector<std::string>& input_names() const { return inputs_; }
  const std::vector<std::string>& output_names() const { return outputs_; }
  const ::onnx::ModelProto& model() const { return model_; }
  // The same inputs and outputs with their declared dtypes and shapes.
  const std::vector<TensorSpec>& inputs() const { return input_specs_; }
  const std::vector<TensorSpec>& outputs() const { return output_specs_; }

  // The outputs for `inputs` (every input name, a tensor of the declared dtype and rank); an
  // output that is not a tensor is an error naming it.
  std::map<std::string, Tensor> operator()(const std::map<std::string, Tensor>& inputs) const;
  // The same for inputs and outputs of any kind: tensors, sequences, optionals.
  std::map<std::string, Value> run(const std::map<std::string, Value>& inputs) const;

 private:
  ::onnx::ModelProto model_;
  int64_t opset_ = 0;
  std::map<std::string, Tensor> initializers_;
  std::vector<std::string> inputs_, outputs_;
  std::vector<TensorSpec> input_specs_, output_specs_;
};

}  // namespace tc::onnx
