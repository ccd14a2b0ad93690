#include "frontends/onnx/ops.h"

#include "frontends/onnx/op_table.h"
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
    return ops;
  }();
  return *t;
}

}  // namespace

const Tensor& NodeArgs::in(size_t i) const {
  if (!has(i)) fail("ONNX node '%s' (%s): input %d is missing", node.name(), node.op_type(), i);
  return *inputs[i];
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
  return t.cast(dtypes::int64).data<int64_t>();
}

double NodeArgs::host_scalar(size_t i) const {
  const Tensor& t = in(i);
  if (t.numel() != 1)
    fail("ONNX node '%s' (%s): input %d must hold one value, got %s", node.name(), node.op_type(),
         i, fmt_shape(t.shape()));
  return t.cast(dtypes::float64).data<double>()[0];
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

bool supports(const std::string& op_type) { return table().contains(op_type); }

std::vector<Tensor> run_node(const NodeArgs& args) {
  auto it = table().find(args.node.op_type());
  TC_CHECK(it != table().end(), "ONNX op ", args.node.op_type(), " is not supported");
  try {
    return it->second(args);
  } catch (const Error& e) {  // a Tensor op's error (a shape, an axis) named with its node
    std::string_view what = e.what();
    if (what.starts_with("ONNX node '")) throw;
    fail("ONNX node '%s' (%s): %s", args.node.name(), args.node.op_type(), what);
  }
}

}  // namespace tc::onnx
