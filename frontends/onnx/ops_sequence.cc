// The ONNX operators on sequences and optionals (tinygrad's runner keeps them as Python lists and
// None): they move tensors between values on the host; splitting and joining are Tensor ops.
#include "frontends/onnx/op_table.h"

namespace tc::onnx {
namespace {

// Input i, a position in a sequence of n tensors (negative from the end), checked to lie in
// [0, n - 1], or [0, n] where `past_end` (an insert at the back).
size_t position(const NodeArgs& a, size_t i, size_t n, bool past_end) {
  int64_t p = a.host_int(i), size = static_cast<int64_t>(n);
  int64_t at = p < 0 ? p + size : p;
  if (at < 0 || at > size - (past_end ? 0 : 1))
    fail("ONNX node '%s' (%s): position %d is out of range for a sequence of %d tensors",
         a.node.name(), a.node.op_type(), p, n);
  return static_cast<size_t>(at);
}

// SplitToSequence's pieces: sizes from the split input (one size for equal pieces, the last
// smaller; or each piece's), else pieces of 1 (squeezed away unless keepdims).
Sequence split_to_sequence(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  int axis = axis_of(a.attr_int("axis", 0), x.ndim());
  if (axis < 0 || axis >= x.ndim())
    fail("ONNX node '%s' (SplitToSequence): axis %d is out of range for %s", a.node.name(),
         a.attr_int("axis", 0), fmt_shape(x.shape()));
  int64_t n = x.shape()[axis];
  if (!a.has(1)) {
    Sequence out = x.split(1, axis);
    if (a.attr_int("keepdims", 1) == 0)
      for (Tensor& t : out) t = t.squeeze(axis);
    return out;
  }
  std::vector<int64_t> sizes = a.host_ints(1);  // a 0-d split: pieces of that size
  if (a.in(1).ndim() == 0) {
    if (sizes[0] <= 0)
      fail("ONNX node '%s' (SplitToSequence): split %d is not positive", a.node.name(), sizes[0]);
    return x.split(sizes[0], axis);
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0 || s > n)
      fail("ONNX node '%s' (SplitToSequence): split size %d for %d", a.node.name(), s, n);
    total += s;
  }
  if (total != n)
    fail("ONNX node '%s' (SplitToSequence): split sizes add up to %d, not %d", a.node.name(), total,
         n);
  return x.split(sizes, axis);
}

Tensor concat_from_sequence(const NodeArgs& a) {
  const Sequence& s = a.sequence(0);
  if (s.empty()) fail("ONNX node '%s' (ConcatFromSequence): the sequence is empty", a.node.name());
  bool new_axis = a.attr_int("new_axis", 0) != 0;
  int rank = s[0].ndim() + (new_axis ? 1 : 0);
  int64_t axis = a.attr_int("axis", 0);
  if (axis < -rank || axis >= rank)
    fail("ONNX node '%s' (ConcatFromSequence): axis %d is out of range for rank %d", a.node.name(),
         axis, rank);
  return new_axis ? Tensor::stack(s, axis_of(axis, rank)) : Tensor::cat(s, axis_of(axis, rank));
}

}  // namespace

void add_sequence_ops(ValueOpTable& t) {
  t.insert({
      {"Identity", [](const NodeArgs& a) { return std::vector{a.value(0)}; }},
      {"SequenceEmpty", [](const NodeArgs&) { return std::vector<Value>{Sequence{}}; }},
      {"SequenceConstruct",
       [](const NodeArgs& a) {
         Sequence s;
         for (size_t i = 0; i < a.inputs.size(); i++) s.push_back(a.in(i));
         return std::vector<Value>{s};
       }},
      {"SequenceInsert",
       [](const NodeArgs& a) {
         Sequence s = a.sequence(0);
         size_t at = a.has(2) ? position(a, 2, s.size(), true) : s.size();
         s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), a.in(1));
         return std::vector<Value>{s};
       }},
      {"SequenceAt",
       [](const NodeArgs& a) {
         const Sequence& s = a.sequence(0);
         return std::vector<Value>{s[position(a, 1, s.size(), false)]};
       }},
      {"SequenceErase",
       [](const NodeArgs& a) {
         Sequence s = a.sequence(0);
         if (s.empty())
           fail("ONNX node '%s' (SequenceErase): the sequence is empty", a.node.name());
         size_t at = a.has(1) ? position(a, 1, s.size(), false) : s.size() - 1;
         s.erase(s.begin() + static_cast<std::ptrdiff_t>(at));
         return std::vector<Value>{s};
       }},
      {"SequenceLength",
       [](const NodeArgs& a) {
         auto n = static_cast<long>(a.sequence(0).size());
         return std::vector<Value>{Tensor::full({}, n, dtypes::int64)};
       }},
      {"SplitToSequence",
       [](const NodeArgs& a) { return std::vector<Value>{split_to_sequence(a)}; }},
      {"ConcatFromSequence",
       [](const NodeArgs& a) { return std::vector<Value>{concat_from_sequence(a)}; }},
      {"Optional",  // of its input, else empty (its type attribute says of what)
       [](const NodeArgs& a) {
         if (!a.has(0)) return std::vector{Value::none()};
         if (a.value(0).is_optional())
           fail("ONNX node '%s' (Optional): its input is already an optional", a.node.name());
         return std::vector{Value::optional(a.value(0))};
       }},
      {"OptionalHasElement",  // from opset 18 also of a plain value (true) or none (false)
       [](const NodeArgs& a) {
         bool has = a.has(0) && a.value(0).has_element();
         return std::vector<Value>{Tensor::full({}, has, dtypes::bool_)};
       }},
      {"OptionalGetElement",
       [](const NodeArgs& a) {
         if (!a.value(0).has_element())
           fail("ONNX node '%s' (OptionalGetElement): the optional is empty", a.node.name());
         return std::vector{a.value(0).element()};
       }},
  });
}

}  // namespace tc::onnx
