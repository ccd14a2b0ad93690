// Running an ONNX graph: the top level and every subgraph (If's branches, Loop's and Scan's
// bodies, SequenceMap's body) are run by the one function here, node by node, over a scope of
// named values.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "frontends/onnx/value.h"
#include "onnx/onnx_pb.h"

namespace tc::onnx {

// The values of one graph by name; a subgraph's scope also sees its enclosing graphs' values.
class Scope {
 public:
  explicit Scope(const Scope* outer = nullptr) : outer_(outer) {}
  const Value* find(const std::string& name) const;
  void set(const std::string& name, Value v) { values_.insert_or_assign(name, std::move(v)); }

 private:
  const Scope* outer_;
  absl::flat_hash_map<std::string, Value> values_;
};

// Calls f on every node of g and of the graphs nested in its nodes' attributes, outer first.
void for_each_node(const ::onnx::GraphProto& g,
                   const std::function<void(const ::onnx::NodeProto&)>& f);
// Throws naming the first node, at any depth, whose operator (or domain) the importer does not
// map, before anything runs.
void check_graph(const ::onnx::GraphProto& g, int64_t opset);

// Runs g's nodes in order over `scope`, which holds g's inputs and initializers; g's outputs.
std::vector<Value> run_graph(const ::onnx::GraphProto& g, Scope& scope, int64_t opset);
// A subgraph run in a scope of its own inside `outer`: its initializers, and `inputs` bound to
// its inputs in order.
std::vector<Value> run_subgraph(const ::onnx::GraphProto& g, const Scope& outer,
                                const std::vector<Value>& inputs, int64_t opset);

}  // namespace tc::onnx
