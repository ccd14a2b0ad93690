// ONNX operators as Tensor ops: a table from op type to the function that builds a node's outputs
// from its inputs and attributes (tinygrad's onnx_ops). No operator has a kernel of its own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "frontends/onnx/value.h"
#include "onnx/onnx_pb.h"
#include "tinycore/tensor.h"

namespace tc::onnx {

class Scope;

// A node's inputs (nullopt for an omitted optional one) and what it reads of its attributes.
struct NodeArgs {
  const ::onnx::NodeProto& node;
  std::vector<std::optional<Value>> inputs;
  int64_t opset = 0;             // of the default domain
  const Scope* scope = nullptr;  // the values the node's subgraphs see

  // Input i as a tensor; throws naming the node where it is missing or not a tensor.
  const Tensor& in(size_t i) const;
  bool has(size_t i) const { return i < inputs.size() && inputs[i].has_value(); }
  // Input i of any kind (a tensor, a sequence, an optional); throws where it is missing.
  const Value& value(size_t i) const;
  // Input i as a sequence; throws naming the node where it is missing or not a sequence.
  const Sequence& sequence(size_t i) const;
  // The graph attribute `name` (a branch, a loop body) run on `inputs`, bound to its inputs in
  // order; it sees the values of the graph this node is in. Throws where it is absent or takes
  // another count of inputs.
  std::vector<Value> run_graph(const std::string& name, const std::vector<Value>& inputs) const;
  const ::onnx::AttributeProto* attr(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t fallback) const;
  float attr_float(const std::string& name, float fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name) const;  // empty where absent
  std::string attr_string(const std::string& name) const;         // throws where absent
  // An int64 input read on the host (a shape, axes): ONNX passes those as tensors.
  std::vector<int64_t> host_ints(size_t i) const;
  // The axes of a reduce or (un)squeeze: input `input` from opset 13 (18 for most reduces), else
  // the attribute; empty where neither is given.
  std::vector<int64_t> axes(size_t input) const;
  // A one-element input read on the host (a count, a ratio, a flag).
  double host_scalar(size_t i) const;
  // A one-element integer input read exactly (a position, a trip count).
  int64_t host_int(size_t i) const;
  // Input i's values as T on the host (outside a TinyJit capture where the input is constant).
  template <typename T>
  std::vector<T> host_read(size_t i) const;
  // Throws naming the node where `what` would take more than TC_ONNX_MAX_BYTES (default: the
  // machine's memory): a hostile or broken model (a shape of 2^40) fails before it allocates.
  void check_bytes(double bytes, const std::string& what) const;
  // `v` (an attribute or input named `what`), checked to hold `n` values.
  const std::vector<int64_t>& sized(const std::vector<int64_t>& v, size_t n,
                                    const char* what) const;
};

// Whether the importer maps `op_type` (of the default domain).
bool supports(const std::string& op_type);
// The node's outputs.
std::vector<Value> run_node(const NodeArgs& args);

}  // namespace tc::onnx
