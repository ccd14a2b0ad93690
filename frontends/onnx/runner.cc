#include "frontends/onnx/runner.h"

#include <filesystem>

#include "frontends/onnx/graph.h"
#include "frontends/onnx/proto.h"
#include "tinycore/error.h"

namespace tc::onnx {
namespace {

// The declared dtype and shape of a graph input or output.
TensorSpec spec_of(const ::onnx::ValueInfoProto& v) {
  TensorSpec s{v.name(), dtypes::void_, {}, false};
  if (!v.type().has_tensor_type()) return s;
  const auto& t = v.type().tensor_type();
  if (t.elem_type() != ::onnx::TensorProto::UNDEFINED) s.dtype = dtype_of_onnx(t.elem_type());
  s.ranked = t.has_shape();
  for (const auto& d : t.shape().dim()) s.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return s;
}

// The folder external data is read from: the model file's (the working folder for a bare name).
std::string folder_of(const std::string& path) {
  std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

}  // namespace

OnnxRunner::OnnxRunner(const std::string& path) : OnnxRunner(read_model(path), folder_of(path)) {}

OnnxRunner::OnnxRunner(const ::onnx::ModelProto& model, const std::string& folder) : model_(model) {
  for (const auto& o : model_.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
  check_graph(model_.graph(), opset_);
  read_external_data(*model_.mutable_graph(), folder);
  const ::onnx::GraphProto& g = model_.graph();
  for (const ::onnx::TensorProto& t : g.initializer())
    initializers_.emplace(t.name(), to_tensor(t));
  for (const auto& in : g.input()) {
    if (initializers_.contains(in.name())) continue;
    inputs_.push_back(in.name());
    input_specs_.push_back(spec_of(in));
  }
  for (const auto& out : g.output()) {
    outputs_.push_back(out.name());
    output_specs_.push_back(spec_of(out));
  }
}

std::map<std::string, Value> OnnxRunner::run(const std::map<std::string, Value>& inputs) const {
  Scope scope;
  for (const auto& [name, t] : initializers_) scope.set(name, Value(t).set_constant(true));
  for (const std::string& name : inputs_) {
    auto it = inputs.find(name);
    if (it == inputs.end()) fail("ONNX: the model's input '%s' is not given", name);
    scope.set(name, it->second);
  }
  for (const auto& [name, v] : inputs)
    if (!scope.find(name)) fail("ONNX: the model has no input '%s'", name);
  std::vector<Value> outs = run_graph(model_.graph(), scope, opset_);
  std::map<std::string, Value> out;
  for (size_t i = 0; i < outputs_.size(); i++) out.emplace(outputs_[i], outs[i]);
  return out;
}

std::map<std::string, Tensor> OnnxRunner::operator()(
    const std::map<std::string, Tensor>& inputs) const {
  std::map<std::string, Value> outs =
      run(std::map<std::string, Value>(inputs.begin(), inputs.end()));
  std::map<std::string, Tensor> out;
  for (const auto& [name, v] : outs) {
    if (!v.tensor() || v.is_optional())
      fail("ONNX: the graph's output '%s' is %s, not a tensor (read it with run)", name, v.kind());
    out.emplace(name, *v.tensor());
  }
  return out;
}

}  // namespace tc::onnx
