#include "frontends/onnx/ops.h"

#include <unistd.h>

#include <cstdlib>

#include "frontends/onnx/graph.h"
#include "frontends/onnx/op_table.h"
#include "tinycore/engine/realize.h"
#include "tinycore/error.h"

namespace tc::onnx {
namespace {

// Every operator the importer maps, from the topic files.
const OpTable& table() {
  static const OpTable* t = [] {
    auto* ops = new OpTable;
    add_elementwise_ops(*ops);
    add_shape_ops(*ops);
    add_index_ops(*ops);
    add_reduce_ops(*ops);
    add_nn_ops(*ops);
    add_image_ops(*ops);
    add_quantize_ops(*ops);
    add_signal_ops(*ops);
    add_linalg_ops(*ops);
    add_text_ops(*ops);
    add_recurrent_ops(*ops);
    return ops;
  }();
  return *t;
}
const ValueOpTable& value_table() {
  static const ValueOpTable* t = [] {
    auto* ops = new ValueOpTable;
    add_sequence_ops(*ops);
    add_control_ops(*ops);
    return ops;
  }();
  return *t;
}

// Input i as the plain (not optional) tensor or sequence `get` reads, else an error naming what
// it is.
template <typename T>
const T& plain(const NodeArgs& a, size_t i, const T* (Value::*get)() const, const char* want) {
  const Value& v = a.value(i);
  if (!(v.*get)() || v.is_optional())
    fail("ONNX node '%s' (%s): input %d is %s, want %s", a.node.name(), a.node.op_type(), i,
         v.kind(), want);
  return *(v.*get)();
}

}  // namespace

const Value& NodeArgs::value(size_t i) const {
  if (!has(i)) fail("ONNX node '%s' (%s): input %d is missing", node.name(), node.op_type(), i);
  return *inputs[i];
}
const Tensor& NodeArgs::in(size_t i) const { return plain(*this, i, &Value::tensor, "a tensor"); }
const Sequence& NodeArgs::sequence(size_t i) const {
  return plain(*this, i, &Value::sequence, "a sequence");
}
std::vector<Value> NodeArgs::run_graph(const std::string& name,
                                       const std::vector<Value>& values) const {
  const auto* g = attr(name);
  if (!g || !g->has_g())
    fail("ONNX node '%s' (%s): graph attribute '%s' is missing", node.name(), node.op_type(), name);
  if (g->g().input_size() != static_cast<int>(values.size()))
    fail("ONNX node '%s' (%s): its graph '%s' takes %d inputs, want %d", node.name(),
         node.op_type(), name, g->g().input_size(), values.size());
  TC_CHECK(scope, "ONNX: a node with a subgraph runs in a scope");
  return run_subgraph(g->g(), *scope, values, opset);
}

const ::onnx::AttributeProto* NodeArgs::attr(const std::string& name) const {
  for (const auto& at : node.attribute())
    if (at.name() == name) return &at;
  return nullptr;
}
int64_t NodeArgs::attr_int(const std::string& name, int64_t fallback) const {
  const auto* at = attr(name);
  return at ? at->i() : fallback;
}
float NodeArgs::attr_float(const std::string& name, float fallback) const {
  const auto* at = attr(name);
  return at ? at->f() : fallback;
}
std::vector<int64_t> NodeArgs::attr_ints(const std::string& name) const {
  const auto* at = attr(name);
  return at ? std::vector<int64_t>(at->ints().begin(), at->ints().end()) : std::vector<int64_t>{};
}
std::vector<int64_t> NodeArgs::axes(size_t input) const {
  return has(input) ? host_ints(input) : attr_ints("axes");
}
std::vector<int64_t> NodeArgs::host_ints(size_t i) const {
  const Tensor& t = in(i);
  if (dtypes::is_float(t.dtype()) || t.ndim() > 1)
    fail("ONNX node '%s' (%s): input %d must be a 1-d integer tensor, got %s %s", node.name(),
         node.op_type(), i, t.dtype().name(), fmt_shape(t.shape()));
  return host_read<int64_t>(i);
}
template <typename T>
std::vector<T> NodeArgs::host_read(size_t i) const {
  // a constant input is read outside a TinyJit capture: its value is the same on every replay
  std::optional<engine::LaunchCapture::Pause> pause;
  if (value(i).constant()) pause.emplace();
  return in(i).cast(dtype_of<T>()).template data<T>();
}

template std::vector<int64_t> NodeArgs::host_read<int64_t>(size_t) const;
template std::vector<double> NodeArgs::host_read<double>(size_t) const;
template std::vector<float> NodeArgs::host_read<float>(size_t) const;

double NodeArgs::host_scalar(size_t i) const {
  const Tensor& t = in(i);
  if (t.numel() != 1)
    fail("ONNX node '%s' (%s): input %d must hold one value, got %s", node.name(), node.op_type(),
         i, fmt_shape(t.shape()));
  return host_read<double>(i)[0];
}
int64_t NodeArgs::host_int(size_t i) const {
  std::vector<int64_t> v = host_ints(i);
  if (v.size() != 1)
    fail("ONNX node '%s' (%s): input %d must hold one value, got %d", node.name(), node.op_type(),
         i, v.size());
  return v[0];
}
void NodeArgs::check_bytes(double bytes, const std::string& what) const {
  static const double limit = [] {
    if (const char* env = std::getenv("TC_ONNX_MAX_BYTES")) return std::atof(env);
    return static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
           static_cast<double>(sysconf(_SC_PAGESIZE));
  }();
  if (bytes > limit)
    fail(
        "ONNX node '%s' (%s): %s would take %.0f bytes, over the limit of %.0f "
        "(TC_ONNX_MAX_BYTES)",
        node.name(), node.op_type(), what, bytes, limit);
}
const std::vector<int64_t>& NodeArgs::sized(const std::vector<int64_t>& v, size_t n,
                                            const char* what) const {
  if (v.size() != n)
    fail("ONNX node '%s' (%s): %s holds %d values, want %d", node.name(), node.op_type(), what,
         v.size(), n);
  return v;
}
std::string NodeArgs::attr_string(const std::string& name) const {
  const auto* at = attr(name);
  if (!at)
    fail("ONNX node '%s' (%s): attribute '%s' is missing", node.name(), node.op_type(), name);
  return at->s();
}

bool supports(const std::string& op_type) {
  return table().contains(op_type) || value_table().contains(op_type);
}

std::vector<Value> run_node(const NodeArgs& args) {
  try {
    if (auto v = value_table().find(args.node.op_type()); v != value_table().end())
      return v->second(args);
    auto it = table().find(args.node.op_type());
    TC_CHECK(it != table().end(), "ONNX op ", args.node.op_type(), " is not supported");
    std::vector<Tensor> outs = it->second(args);
    return std::vector<Value>(outs.begin(), outs.end());
  } catch (const Error& e) {  // a Tensor op's error (a shape, an axis) named with its node
    std::string_view what = e.what();
    if (what.starts_with("ONNX node '")) throw;
    fail("ONNX node '%s' (%s): %s", args.node.name(), args.node.op_type(), what);
  }
}

}  // namespace tc::onnx
