#include "frontends/onnx/graph.h"

#include <algorithm>

#include "frontends/onnx/ops.h"
#include "frontends/onnx/proto.h"
#include "tinycore/error.h"

namespace tc::onnx {

const Value* Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->outer_)
    if (auto it = s->values_.find(name); it != s->values_.end()) return &it->second;
  return nullptr;
}

void for_each_node(const ::onnx::GraphProto& g,
                   const std::function<void(const ::onnx::NodeProto&)>& f) {
  for (const ::onnx::NodeProto& n : g.node()) {
    f(n);
    for (const ::onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) for_each_node(a.g(), f);
      for (const ::onnx::GraphProto& sub : a.graphs()) for_each_node(sub, f);
    }
  }
}

void check_graph(const ::onnx::GraphProto& g, int64_t opset) {
  for_each_node(g, [&](const ::onnx::NodeProto& n) {
    bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    if (!default_domain || !supports(n.op_type()))
      fail("ONNX node '%s' (%s%s, opset %d) is not supported", n.name(),
           default_domain ? "" : n.domain() + ".", n.op_type(), opset);
  });
}

namespace {

// Whether node n's outputs are constants (Value::constant): a shape, or computed from constants
// only. A node with a subgraph is not: its body may read any value of the graph.
bool makes_constants(const ::onnx::NodeProto& n, const NodeArgs& args) {
  if (n.op_type() == "Shape" || n.op_type() == "Size") return true;
  for (const ::onnx::AttributeProto& a : n.attribute())
    if (a.has_g() || a.graphs_size() > 0) return false;
  return std::all_of(args.inputs.begin(), args.inputs.end(),
                     [](const std::optional<Value>& v) { return !v || v->constant(); });
}

void check_size(const NodeArgs& args, size_t i, const Tensor& t) {
  double bytes = static_cast<double>(t.dtype().itemsize());  // in double: no overflow
  for (int64_t d : t.shape()) bytes *= static_cast<double>(d);
  args.check_bytes(bytes, absl::StrFormat("output %d of shape %s", i, fmt_shape(t.shape())));
}

}  // namespace

std::vector<Value> run_graph(const ::onnx::GraphProto& g, Scope& scope, int64_t opset) {
  for (const ::onnx::NodeProto& n : g.node()) {
    NodeArgs args{n, {}, opset, &scope};
    for (const std::string& in : n.input()) {
      if (in.empty()) {
        args.inputs.emplace_back();
        continue;
      }
      const Value* v = scope.find(in);
      if (!v)
        fail("ONNX node '%s' (%s): input '%s' is made by no earlier node", n.name(), n.op_type(),
             in);
      args.inputs.emplace_back(*v);
    }
    std::vector<Value> outs = run_node(args);
    for (size_t i = 0; i < outs.size(); i++) {
      if (const Tensor* t = outs[i].tensor()) check_size(args, i, *t);
      if (const Sequence* seq = outs[i].sequence())
        for (const Tensor& t : *seq) check_size(args, i, t);
    }
    bool constant = makes_constants(n, args);
    for (int i = 0; i < n.output_size() && i < static_cast<int>(outs.size()); i++)
      if (!n.output(i).empty()) scope.set(n.output(i), outs[i].set_constant(constant));
  }
  std::vector<Value> out;
  for (const ::onnx::ValueInfoProto& o : g.output()) {
    const Value* v = scope.find(o.name());
    if (!v) fail("ONNX graph '%s': output '%s' is made by no node", g.name(), o.name());
    out.push_back(*v);
  }
  return out;
}

std::vector<Value> run_subgraph(const ::onnx::GraphProto& g, const Scope& outer,
                                const std::vector<Value>& inputs, int64_t opset) {
  TC_CHECK(static_cast<int>(inputs.size()) == g.input_size(), "ONNX: a subgraph's inputs");
  Scope scope(&outer);
  for (const ::onnx::TensorProto& t : g.initializer())
    scope.set(t.name(), Value(to_tensor(t)).set_constant(true));
  for (int i = 0; i < g.input_size(); i++) scope.set(g.input(i).name(), inputs[i]);
  return run_graph(g, scope, opset);
}

}  // namespace tc::onnx
