#include "apps/infer/onnx_model.h"

#include "absl/strings/str_join.h"
#include "tinycore/error.h"

namespace tc::infer {
namespace {

std::string fmt_dims(const std::vector<int64_t>& shape) {
  return "[" + absl::StrJoin(shape, ", ") + "]";
}

std::string names(const std::vector<onnx::TensorSpec>& specs) {
  std::vector<std::string> n;
  for (const onnx::TensorSpec& s : specs) n.push_back("'" + s.name + "'");
  return absl::StrJoin(n, ", ");
}

}  // namespace

std::string describe(const onnx::TensorSpec& s) {
  return numpy_name(s.dtype) + " " + (s.ranked ? fmt_dims(s.shape) : "[?]");
}

OnnxModel::OnnxModel(const std::string& path) : runner_(path) {
  if (inputs().empty()) fail("ONNX: %s takes no inputs: nothing to feed it", path);
}

bool OnnxModel::batchable() const {
  auto dynamic_first = [](const onnx::TensorSpec& s) {
    return s.ranked && !s.shape.empty() && s.shape[0] == -1;
  };
  return std::all_of(inputs().begin(), inputs().end(), dynamic_first) &&
         std::all_of(outputs().begin(), outputs().end(), dynamic_first);
}

const onnx::TensorSpec& OnnxModel::input(const std::string& name) const {
  for (const onnx::TensorSpec& s : inputs())
    if (s.name == name) return s;
  fail("input '%s': the model has no such input (its inputs: %s)", name, names(inputs()));
}

void OnnxModel::check_input(const std::string& name, DType dtype,
                            const std::vector<int64_t>& shape) const {
  const onnx::TensorSpec& s = input(name);
  if (s.dtype != dtypes::void_ && dtype != s.dtype)
    fail("input '%s': expected %s, got dtype %s", name, describe(s), numpy_name(dtype));
  bool fits = !s.ranked || s.shape.size() == shape.size();
  for (size_t i = 0; fits && s.ranked && i < shape.size(); i++)
    fits = shape[i] > 0 && (s.shape[i] == -1 || s.shape[i] == shape[i]);
  if (!fits) fail("input '%s': expected %s, got shape %s", name, describe(s), fmt_dims(shape));
}

std::vector<std::pair<std::string, HostArray>> OnnxModel::run(
    const std::map<std::string, Tensor>& in) {
  for (const auto& [name, t] : in) check_input(name, t.dtype(), t.shape());
  for (const onnx::TensorSpec& s : inputs())
    if (!in.contains(s.name))
      fail("input '%s' (%s) is not given (the model's inputs: %s)", s.name, describe(s),
           names(inputs()));
  std::map<std::string, Tensor> out = runner_(in);
  std::vector<std::pair<std::string, HostArray>> result;
  for (const std::string& name : runner_.output_names()) {
    Tensor t = out.at(name);
    if (t.dtype() == dtypes::float16 || t.dtype() == dtypes::bfloat16) t = t.cast(dtypes::float32);
    result.emplace_back(name, HostArray::of(t));
  }
  return result;
}

}  // namespace tc::infer
