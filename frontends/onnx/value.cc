#include "frontends/onnx/value.h"

#include "tinycore/error.h"

namespace tc::onnx {

Value Value::none() {
  Value v;
  v.optional_ = true;
  return v;
}

Value Value::optional(Value element) {
  if (element.optional_) fail("ONNX: an optional cannot hold an optional");
  element.optional_ = true;
  return element;
}

Value Value::element() const {
  if (!has_element()) fail("ONNX: an empty optional has no element");
  Value v = *this;
  v.optional_ = false;
  return v;
}

std::string Value::kind() const {
  std::string held = tensor() ? "tensor" : sequence() ? "sequence" : "";
  if (!optional_) return "a " + held;
  return held.empty() ? "an empty optional" : "an optional " + held;
}

}  // namespace tc::onnx
