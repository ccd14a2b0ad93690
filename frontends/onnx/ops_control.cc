// The ONNX operators that run subgraphs: If (the branch chosen on the host), Loop (its trip count
// and condition read on the host each iteration), Scan and SequenceMap (one run of the body per
// element). Each run of a body builds more of the same lazy Tensor graph.
#include <algorithm>

#include "frontends/onnx/op_table.h"

namespace tc::onnx {
namespace {

// The most iterations a Loop runs: a model whose trip count and condition never end it is an
// error rather than a hang.
constexpr int64_t kMaxLoopIterations = 10000;

// A body's output that must be a tensor (a condition, a scan output).
const Tensor& tensor_out(const NodeArgs& a, const Value& v, const char* what) {
  if (!v.tensor() || v.is_optional())
    fail("ONNX node '%s' (%s): the body's %s is %s, want a tensor", a.node.name(), a.node.op_type(),
         what, v.kind());
  return *v.tensor();
}

// Realizes the tensors of `values` every kStepsPerRealize steps of an unrolled loop.
void realize_every(int64_t step, const std::vector<Value>& values) {
  if ((step + 1) % kStepsPerRealize != 0) return;
  std::vector<Tensor> ts;
  for (const Value& v : values) {
    if (v.tensor()) ts.push_back(*v.tensor());
    if (v.sequence()) ts.insert(ts.end(), v.sequence()->begin(), v.sequence()->end());
  }
  realize_all(ts);
}

// The per-iteration tensors of a scan output stacked along `axis` (a new one), in `reverse`
// order where asked; zero iterations leave no shape to stack.
Tensor stack_scan(const NodeArgs& a, Sequence parts, int64_t axis, bool reverse) {
  if (parts.empty())
    fail("ONNX node '%s' (%s): ran no iterations, so its scan outputs have no shape", a.node.name(),
         a.node.op_type());
  if (reverse) std::reverse(parts.begin(), parts.end());
  int rank = parts[0].ndim() + 1;
  if (axis < -rank || axis >= rank)
    fail("ONNX node '%s' (%s): scan output axis %d is out of range for rank %d", a.node.name(),
         a.node.op_type(), axis, rank);
  return Tensor::stack(parts, axis_of(axis, rank));
}

std::vector<Value> loop(const NodeArgs& a) {
  std::optional<int64_t> trips;
  if (a.has(0)) trips = a.host_int(0);
  bool cond = !a.has(1) || a.host_scalar(1) != 0;
  std::vector<Value> carried;
  for (size_t i = 2; i < a.inputs.size(); i++) carried.push_back(a.value(i));
  const auto* body = a.attr("body");
  int scan_count = body ? body->g().output_size() - 1 - static_cast<int>(carried.size()) : 0;
  if (scan_count < 0)
    fail("ONNX node '%s' (Loop): the body has %d outputs for %d loop-carried values", a.node.name(),
         body->g().output_size(), carried.size());
  std::vector<Sequence> scans(scan_count);
  for (int64_t i = 0; (!trips || i < *trips) && cond; i++) {
    if (i == kMaxLoopIterations)
      fail(
          "ONNX node '%s' (Loop): ran past %d iterations, the importer's bound on a Loop "
          "(kMaxLoopIterations)",
          a.node.name(), kMaxLoopIterations);
    std::vector<Value> in = {Tensor::full({}, static_cast<long>(i), dtypes::int64),
                             Tensor::full({}, cond, dtypes::bool_)};
    in.insert(in.end(), carried.begin(), carried.end());
    std::vector<Value> out = a.run_graph("body", in);
    const Tensor& c = tensor_out(a, out[0], "condition");
    if (c.numel() != 1)
      fail("ONNX node '%s' (Loop): the body's condition has shape %s, want one value",
           a.node.name(), fmt_shape(c.shape()));
    if (a.has(1)) cond = c.cast(dtypes::float64).data<double>()[0] != 0;  // else ignored
    carried.assign(out.begin() + 1, out.begin() + 1 + static_cast<std::ptrdiff_t>(carried.size()));
    for (int k = 0; k < scan_count; k++)
      scans[k].push_back(tensor_out(a, out[1 + carried.size() + k], "scan output"));
    realize_every(i, carried);
  }
  for (const Sequence& s : scans) carried.emplace_back(stack_scan(a, s, 0, false));
  return carried;
}

// An attribute of one value per scan input or output (axes, directions): zeros where absent.
std::vector<int64_t> per_scan(const NodeArgs& a, const char* name, size_t n) {
  std::vector<int64_t> v = a.attr_ints(name);
  return v.empty() ? std::vector<int64_t>(n, 0) : a.sized(v, n, name);
}

// Scan (opset 9 on) over `states` and the scan inputs `xs`: the body runs once per slice along
// each input's scan axis, in its direction; the final states, then the stacked scan outputs.
std::vector<Value> scan(const NodeArgs& a, std::vector<Value> states, const Sequence& xs,
                        const std::vector<int64_t>& in_dirs) {
  std::vector<int64_t> in_axes = per_scan(a, "scan_input_axes", xs.size());
  const auto* body = a.attr("body");
  int outs = body ? body->g().output_size() - static_cast<int>(states.size()) : 0;
  if (outs < 0)
    fail("ONNX node '%s' (Scan): the body has fewer outputs than states", a.node.name());
  std::vector<int64_t> out_axes = per_scan(a, "scan_output_axes", outs);
  std::vector<int64_t> out_dirs = per_scan(a, "scan_output_directions", outs);
  std::vector<int> axes;
  int64_t length = -1;
  for (size_t j = 0; j < xs.size(); j++) {
    int rank = xs[j].ndim();
    if (in_axes[j] < -rank || in_axes[j] >= rank)
      fail("ONNX node '%s' (Scan): scan input axis %d is out of range for %s", a.node.name(),
           in_axes[j], fmt_shape(xs[j].shape()));
    axes.push_back(axis_of(in_axes[j], rank));
    if (length >= 0 && xs[j].shape()[axes[j]] != length)
      fail("ONNX node '%s' (Scan): scan inputs of %d and %d steps", a.node.name(), length,
           xs[j].shape()[axes[j]]);
    length = xs[j].shape()[axes[j]];
  }
  std::vector<Sequence> scans(outs);
  for (int64_t t = 0; t < length; t++) {
    std::vector<Value> in = states;
    for (size_t j = 0; j < xs.size(); j++) {
      std::vector<IndexItem> at(axes[j], IndexItem(Slice()));
      at.emplace_back(static_cast<long>(in_dirs[j] ? length - 1 - t : t));
      in.emplace_back(xs[j].getitem(at));
    }
    std::vector<Value> out = a.run_graph("body", in);
    std::copy_n(out.begin(), states.size(), states.begin());
    for (int k = 0; k < outs; k++)
      scans[k].push_back(tensor_out(a, out[states.size() + k], "scan output"));
    realize_every(t, states);
  }
  for (int k = 0; k < outs; k++)
    states.emplace_back(stack_scan(a, scans[k], out_axes[k], out_dirs[k] != 0));
  return states;
}

std::vector<Value> scan_op(const NodeArgs& a) {
  int64_t m = a.attr_int("num_scan_inputs", 0);
  int first = a.opset < 9 ? 1 : 0;  // opset 8: sequence_lens first, and a batch axis
  auto n = static_cast<int64_t>(a.inputs.size()) - first;
  if (m < 1 || m > n)
    fail("ONNX node '%s' (Scan): num_scan_inputs %d for %d inputs", a.node.name(), m, n);
  std::vector<Value> states;
  Sequence xs;
  for (int64_t i = 0; i < n; i++)
    (i < n - m ? states.emplace_back(a.in(first + i)) : xs.emplace_back(a.in(first + i)));
  if (a.opset >= 9) return scan(a, states, xs, per_scan(a, "scan_input_directions", m));
  if (a.has(0))
    fail("ONNX node '%s' (Scan): opset 8's sequence_lens is not supported", a.node.name());
  // opset 8: one scan per batch entry (axis 0 of every input), its results stacked back
  std::vector<int64_t> dirs = per_scan(a, "directions", m);
  int64_t batch = xs[0].ndim() > 0 ? xs[0].shape()[0] : 0;
  auto batched = [&](const Tensor& t) {
    if (t.ndim() < 1 || t.shape()[0] != batch)
      fail("ONNX node '%s' (Scan): opset 8's inputs share a batch axis of %d, got %s",
           a.node.name(), batch, fmt_shape(t.shape()));
  };
  for (const Value& v : states) batched(*v.tensor());
  for (const Tensor& x : xs) batched(x);
  std::vector<Sequence> per_output;
  for (int64_t b = 0; b < batch; b++) {
    std::vector<Value> bs;
    Sequence bx;
    for (const Value& s : states) bs.emplace_back(s.tensor()->getitem({static_cast<long>(b)}));
    for (const Tensor& x : xs) bx.push_back(x.getitem({static_cast<long>(b)}));
    std::vector<Value> out = scan(a, bs, bx, dirs);
    per_output.resize(out.size());
    for (size_t k = 0; k < out.size(); k++) per_output[k].push_back(*out[k].tensor());
  }
  std::vector<Value> out;
  for (const Sequence& s : per_output) out.emplace_back(Tensor::stack(s, 0));
  return out;
}

// SequenceMap: the body once per element of the input sequences (tensor inputs passed whole
// each time), each output collected into a sequence.
std::vector<Value> sequence_map(const NodeArgs& a) {
  size_t n = a.sequence(0).size();
  for (size_t j = 1; j < a.inputs.size(); j++)
    if (a.value(j).sequence() && a.value(j).sequence()->size() != n)
      fail("ONNX node '%s' (SequenceMap): sequences of %d and %d tensors", a.node.name(), n,
           a.value(j).sequence()->size());
  std::vector<Sequence> outs(a.node.output_size());
  for (size_t i = 0; i < n; i++) {
    std::vector<Value> in;
    for (size_t j = 0; j < a.inputs.size(); j++) {
      const Sequence* s = a.value(j).sequence();
      in.emplace_back(s ? (*s)[i] : a.in(j));
    }
    std::vector<Value> out = a.run_graph("body", in);
    for (size_t k = 0; k < outs.size() && k < out.size(); k++)
      outs[k].push_back(tensor_out(a, out[k], "output"));
  }
  return std::vector<Value>(outs.begin(), outs.end());
}

}  // namespace

void add_control_ops(ValueOpTable& t) {
  t.insert({
      {"If",
       [](const NodeArgs& a) {
         return a.run_graph(a.host_scalar(0) != 0 ? "then_branch" : "else_branch", {});
       }},
      {"Loop", loop},
      {"Scan", scan_op},
      {"SequenceMap", sequence_map},
  });
}

}  // namespace tc::onnx
