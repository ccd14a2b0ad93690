// The ONNX operators that read or write at indices given as tensors, and those whose output's
// shape depends on the data (Compress, NonZero, Unique: realized, their indices found on the host,
// then gathered with Tensor ops).
#include <algorithm>
#include <map>
#include <numeric>

#include "frontends/onnx/op_table.h"
#include "tinycore/error.h"

namespace tc::onnx {
namespace {

// Index values of an axis of length n as int64, a negative one counting from the end.
Tensor wrapped(const Tensor& idx, int64_t n) {
  Tensor i = idx.cast(dtypes::int64);
  return i.lt(0).where(i.add(static_cast<long>(n)), i);
}

// Input 1 of a node indexing input 0, checked to be an integer tensor.
const Tensor& index_input(const NodeArgs& a) {
  const Tensor& idx = a.in(1);
  if (!dtypes::is_int(idx.dtype()))
    fail("ONNX node '%s' (%s): the indices must be an integer tensor, got %s", a.node.name(),
         a.node.op_type(), idx.dtype().name());
  return idx;
}

// ScatterElements (and the older Scatter): updates written at the indices along the axis.
Tensor scatter_elements(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  int axis = axis_of(a.attr_int("axis", 0), x.ndim());
  Tensor idx = wrapped(index_input(a), x.shape()[axis]);
  std::string r = a.attr("reduction") ? a.attr("reduction")->s() : "none";
  if (r == "none") return x.scatter(axis, idx, a.in(2));
  if (r != "add" && r != "mul")
    fail("ONNX node '%s' (%s): reduction '%s' is not supported", a.node.name(), a.node.op_type(),
         r);
  return x.scatter_reduce(axis, idx, a.in(2), r == "add" ? "sum" : "prod");
}

// The k index tensors of GatherND's and ScatterND's indices (..., k) over x's first k axes (after
// the batch axes), each wrapped to its axis.
std::vector<Tensor> nd_indices(const NodeArgs& a, const Tensor& x, int64_t batch_dims) {
  const Tensor& idx = index_input(a);
  if (idx.ndim() < 1 || idx.shape().back() > x.ndim() - batch_dims || batch_dims < 0 ||
      batch_dims >= idx.ndim())
    fail(
        "ONNX node '%s' (%s): indices of shape %s do not index data of shape %s with %d batch "
        "axes",
        a.node.name(), a.node.op_type(), fmt_shape(idx.shape()), fmt_shape(x.shape()), batch_dims);
  std::vector<Tensor> out;
  int64_t k = idx.shape().back();
  for (int64_t i = 0; i < k; i++)
    out.push_back(wrapped(idx.getitem({Ellipsis, i}), x.shape()[batch_dims + i]));
  return out;
}

// ScatterND: the updates (indices' leading shape, then x's axes past k) written at the rows the
// indices name; x's first k axes flattened into one so that it is one scatter along axis 0.
Tensor scatter_nd(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  std::vector<Tensor> idx = nd_indices(a, x, 0);
  int64_t k = static_cast<int64_t>(idx.size()), rows = 1;
  Tensor flat = Tensor::zeros(idx.empty() ? Shape{} : idx[0].shape(), dtypes::int64);
  for (int64_t i = 0; i < k; i++) {
    flat = flat.mul(x.shape()[i]).add(idx[i]);
    rows *= x.shape()[i];
  }
  Shape rest(x.shape().begin() + k, x.shape().end()), xs{rows}, us{flat.numel()};
  xs.insert(xs.end(), rest.begin(), rest.end());
  us.insert(us.end(), rest.begin(), rest.end());
  const Tensor& updates = a.in(2);
  if (updates.numel() !=
      static_cast<int64_t>(std::accumulate(us.begin(), us.end(), int64_t{1}, std::multiplies<>())))
    fail("ONNX node '%s' (ScatterND): updates of shape %s do not fit indices %s into data %s",
         a.node.name(), fmt_shape(updates.shape()), fmt_shape(a.in(1).shape()),
         fmt_shape(x.shape()));
  Shape one(us.size(), 1);
  one[0] = us[0];
  Tensor index = flat.reshape(one).expand(us);
  std::string r = a.attr("reduction") ? a.attr("reduction")->s() : "none";
  Tensor u = updates.reshape(us), base = x.reshape(xs), y = base;
  if (r == "none")
    y = base.scatter(0, index, u);
  else if (r == "add" || r == "mul")
    y = base.scatter_reduce(0, index, u, r == "add" ? "sum" : "prod");
  else
    fail("ONNX node '%s' (ScatterND): reduction '%s' is not supported", a.node.name(), r);
  return y.reshape(x.shape());
}

// GatherND: x at the indices' rows, the first batch_dims axes of x and indices walked together.
Tensor gather_nd(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  int64_t b = a.attr_int("batch_dims", 0);
  std::vector<Tensor> idx = nd_indices(a, x, b);
  std::vector<IndexItem> items;
  int lead = a.in(1).ndim() - 1;  // the indices' axes but the last
  for (int64_t i = 0; i < b; i++) {
    Shape s(lead, 1);
    s[i] = x.shape()[i];
    items.emplace_back(Tensor::arange(static_cast<double>(x.shape()[i])).reshape(s));
  }
  for (const Tensor& i : idx) items.emplace_back(i);
  if (items.empty()) return x;
  return x.getitem(items);
}

// x at the positions `idx` along `axis` (numpy's take).
Tensor take(const Tensor& x, int axis, const Tensor& idx) {
  std::vector<IndexItem> items(axis, IndexItem(Slice()));
  items.emplace_back(idx);
  return x.getitem(items);
}

// Input 0 and the node's axis attribute; without one the flattened input and axis 0.
std::pair<Tensor, int> input_along_axis(const NodeArgs& a) {
  if (!a.attr("axis")) return {a.in(0).flatten(), 0};
  const Tensor& x = a.in(0);
  return {x, axis_of(a.attr_int("axis", 0), x.ndim())};
}

// The positions along `axis` of a realized bool condition that are true (Compress).
std::vector<int64_t> true_positions(const Tensor& condition) {
  std::vector<uint8_t> c = condition.cast(dtypes::uint8).data<uint8_t>();
  std::vector<int64_t> out;
  for (size_t i = 0; i < c.size(); i++)
    if (c[i]) out.push_back(static_cast<int64_t>(i));
  return out;
}

// Unique: the distinct slices of x along `axis` (the flattened x without one) and, as int64, the
// index of each one's first occurrence, each slice's position in the output, and their counts.
std::vector<Tensor> unique(const NodeArgs& a) {
  auto [x, axis] = input_along_axis(a);
  int64_t n = x.shape()[axis];
  // one row a slice: the axis moved to the front
  std::vector<int> order{axis};
  for (int i = 0; i < x.ndim(); i++)
    if (i != axis) order.push_back(i);
  std::vector<double> v = x.permute(order).cast(dtypes::float64).data<double>();
  size_t width = n ? v.size() / n : 0;
  auto row = [&](int64_t i) {
    return std::vector<double>(v.begin() + i * width, v.begin() + (i + 1) * width);
  };
  std::map<std::vector<double>, int64_t> first;  // a slice's values -> its first occurrence
  std::vector<int64_t> firsts;
  for (int64_t i = 0; i < n; i++)
    if (first.emplace(row(i), i).second) firsts.push_back(i);
  if (a.attr_int("sorted", 1)) {
    firsts.clear();
    for (const auto& [values, i] : first) firsts.push_back(i);
  }
  std::map<std::vector<double>, int64_t> position;
  for (size_t j = 0; j < firsts.size(); j++) position[row(firsts[j])] = static_cast<int64_t>(j);
  std::vector<int64_t> inverse, counts(firsts.size(), 0);
  for (int64_t i = 0; i < n; i++) {
    inverse.push_back(position[row(i)]);
    counts[inverse.back()]++;
  }
  return {take(x, axis, Tensor::from_vector(firsts)), Tensor::from_vector(firsts),
          Tensor::from_vector(inverse), Tensor::from_vector(counts)};
}

// ReverseSequence: along the time axis, each batch entry's first sequence_lens[b] steps reversed,
// as a gather at t < len ? len - 1 - t : t.
Tensor reverse_sequence(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  int time = axis_of(a.attr_int("time_axis", 0), x.ndim());
  int batch = axis_of(a.attr_int("batch_axis", 1), x.ndim());
  const Tensor& lens = a.in(1);
  if (x.ndim() < 2 || time == batch || time < 0 || batch < 0 || time > 1 || batch > 1 ||
      lens.ndim() != 1 || lens.shape()[0] != x.shape()[batch])
    fail(
        "ONNX node '%s' (ReverseSequence): sequence_lens %s does not fit axes %d (time) and %d "
        "(batch) of %s",
        a.node.name(), fmt_shape(lens.shape()), time, batch, fmt_shape(x.shape()));
  Shape ts(x.ndim(), 1), bs(x.ndim(), 1);
  ts[time] = x.shape()[time], bs[batch] = x.shape()[batch];
  Tensor t = Tensor::arange(0, static_cast<double>(x.shape()[time]), 1, dtypes::int64).reshape(ts);
  Tensor len = lens.cast(dtypes::int64).reshape(bs);
  Tensor idx = t.lt(len).where(len.sub(1).sub(t), t).expand(x.shape());
  return x.gather(time, idx);
}

}  // namespace

void add_index_ops(OpTable& t) {
  t.insert({
      {"GatherElements",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(a.attr_int("axis", 0), x.ndim());
         return std::vector{x.gather(axis, wrapped(index_input(a), x.shape()[axis]))};
       }},
      {"Gather",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(a.attr_int("axis", 0), x.ndim());
         return std::vector{take(x, axis, wrapped(index_input(a), x.shape()[axis]))};
       }},
      {"ScatterElements", [](const NodeArgs& a) { return std::vector{scatter_elements(a)}; }},
      {"Scatter", [](const NodeArgs& a) { return std::vector{scatter_elements(a)}; }},
      {"GatherND", [](const NodeArgs& a) { return std::vector{gather_nd(a)}; }},
      {"ScatterND", [](const NodeArgs& a) { return std::vector{scatter_nd(a)}; }},
      {"Compress",
       [](const NodeArgs& a) {
         auto [x, axis] = input_along_axis(a);
         const Tensor& c = a.in(1);
         if (c.ndim() != 1 || c.shape()[0] > x.shape()[axis])
           fail("ONNX node '%s' (Compress): a condition of shape %s does not fit axis %d of %s",
                a.node.name(), fmt_shape(c.shape()), a.attr_int("axis", 0), fmt_shape(x.shape()));
         return std::vector{take(x, axis, Tensor::from_vector(true_positions(c)))};
       }},
      {"NonZero",  // (rank, count) int64 coordinates in row-major order
       [](const NodeArgs& a) { return std::vector{a.in(0).nonzero().cast(dtypes::int64).t()}; }},
      {"Unique", unique},
      {"ReverseSequence", [](const NodeArgs& a) { return std::vector{reverse_sequence(a)}; }},
  });
}

}  // namespace tc::onnx
