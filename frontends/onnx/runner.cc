#include "frontends/onnx/runner.h"

#include "frontends/onnx/ops.h"
#include "frontends/onnx/proto.h"
#include "tinycore/error.h"

namespace tc::onnx {
namespace {

TensorSpec spec_of(const ::onnx::ValueInfoProto& v) {
  TensorSpec s{v.name(), dtypes::void_, {}, false};
  if (!v.type().has_tensor_type()) return s;
  const auto& t = v.type().tensor_type();
  if (t.elem_type() != ::onnx::TensorProto::UNDEFINED) s.dtype = dtype_of_onnx(t.elem_type());
  s.ranked = t.has_shape();
  for (const auto& d : t.shape().dim()) s.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return s;
}

}  // namespace

OnnxRunner::OnnxRunner(const std::string& path) : model_(read_model(path)) {
  for (const auto& o : model_.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
  const ::onnx::GraphProto& g = model_.graph();
  for (const ::onnx::NodeProto& n : g.node()) {
    bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    if (!default_domain || !supports(n.op_type()))
      fail("ONNX node '%s' (%s%s, opset %d) is not supported", n.name(),
           default_domain ? "" : n.domain() + ".", n.op_type(), opset_);
  }
  for (const ::onnx::TensorProto& t : g.initializer())
    initializers_.emplace(t.name(), to_tensor(t));
  for (const auto& in : g.input()) {
    if (initializers_.contains(in.name())) continue;
    if (!in.type().has_tensor_type())
      fail(
          "ONNX: the model's input '%s' is not a tensor (sequences, maps and optionals are not "
          "supported)",
          in.name());
    inputs_.push_back(in.name());
    input_specs_.push_back(spec_of(in));
  }
  for (const auto& out : g.output()) {
    outputs_.push_back(out.name());
    output_specs_.push_back(spec_of(out));
  }
}

std::map<std::string, Tensor> OnnxRunner::operator()(
    const std::map<std::string, Tensor>& inputs) const {
  std::map<std::string, Tensor> values = initializers_;
  for (const std::string& name : inputs_) {
    auto it = inputs.find(name);
    if (it == inputs.end()) fail("ONNX: the model's input '%s' is not given", name);
    values.insert_or_assign(name, it->second);
  }
  for (const auto& [name, t] : inputs)
    if (!values.contains(name)) fail("ONNX: the model has no input '%s'", name);
  for (const ::onnx::NodeProto& n : model_.graph().node()) {
    NodeArgs args{n, {}, opset_};
    for (const std::string& in : n.input()) {
      if (in.empty()) {
        args.inputs.emplace_back();
        continue;
      }
      auto it = values.find(in);
      if (it == values.end())
        fail("ONNX node '%s' (%s): input '%s' is made by no earlier node", n.name(), n.op_type(),
             in);
      args.inputs.emplace_back(it->second);
    }
    std::vector<Tensor> outs = run_node(args);
    for (int i = 0; i < n.output_size() && i < static_cast<int>(outs.size()); i++)
      if (!n.output(i).empty()) values.insert_or_assign(n.output(i), outs[i]);
  }
  std::map<std::string, Tensor> out;
  for (const std::string& name : outputs_) {
    auto it = values.find(name);
    if (it == values.end()) fail("ONNX: the graph's output '%s' is made by no node", name);
    out.emplace(name, it->second);
  }
  return out;
}

}  // namespace tc::onnx
