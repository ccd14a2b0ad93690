// An ONNX value: a tensor, a sequence of tensors, or an optional that is empty or holds a tensor
// or a sequence (tinygrad's runner passes Python lists and None for the latter two).
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "tinycore/tensor.h"

namespace tc::onnx {

using Sequence = std::vector<Tensor>;

class Value {
 public:
  Value(Tensor t) : v_(std::move(t)) {}    // NOLINT(google-explicit-constructor): ops' outputs
  Value(Sequence s) : v_(std::move(s)) {}  // NOLINT(google-explicit-constructor)
  static Value none();                     // an empty optional
  static Value optional(Value element);    // an optional holding a tensor or a sequence

  bool is_optional() const { return optional_; }
  // Whether it holds a tensor or a sequence (false only for an empty optional).
  bool has_element() const { return !std::holds_alternative<std::monostate>(v_); }
  // The tensor or sequence held, also by an optional; nullptr where it holds the other or none.
  const Tensor* tensor() const { return std::get_if<Tensor>(&v_); }
  const Sequence* sequence() const { return std::get_if<Sequence>(&v_); }
  // What an optional holds, as a plain value (the value itself where it is not an optional);
  // throws for an empty optional.
  Value element() const;
  // "a tensor", "a sequence", "an optional tensor", "an empty optional" ...: what errors name.
  std::string kind() const;
  // Whether it is computed from initializers, constants and shapes only, never from the graph's
  // inputs' values: a TinyJit step may read it on the host (replay sees the same value).
  bool constant() const { return constant_; }
  Value& set_constant(bool c) { return constant_ = c, *this; }

 private:
  Value() = default;
  std::variant<std::monostate, Tensor, Sequence> v_;
  bool optional_ = false;
  bool constant_ = false;
};

}  // namespace tc::onnx
