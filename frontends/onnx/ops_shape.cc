// The ONNX operators that make, reshape, cut and join tensors (shapes read on the host).
#include <algorithm>

#include "frontends/onnx/op_table.h"
#include "frontends/onnx/proto.h"

namespace tc::onnx {

void add_shape_ops(OpTable& t) {
  t.insert({
      {"Shape",
       [](const NodeArgs& a) {
         const Shape& s = a.in(0).shape();
         int rank = static_cast<int>(s.size());
         auto clamped = [&](int64_t i) {  // start and end outside the rank are clamped
           return static_cast<int>(std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank));
         };
         int start = clamped(a.attr_int("start", 0));
         int end = std::max(start, clamped(a.attr_int("end", rank)));
         std::vector<int64_t> v(s.begin() + start, s.begin() + end);
         return std::vector{
             Tensor::from_blob(v.data(), {static_cast<int64_t>(v.size())}, dtypes::int64)};
       }},
      {"Size",
       [](const NodeArgs& a) {
         return std::vector{Tensor::full({}, static_cast<long>(a.in(0).numel()), dtypes::int64)};
       }},
      {"Constant",
       [](const NodeArgs& a) {
         if (const auto* t = a.attr("value")) return std::vector{to_tensor(t->t())};
         if (const auto* f = a.attr("value_float")) return std::vector{Tensor::full({}, f->f())};
         if (const auto* i = a.attr("value_int"))
           return std::vector{Tensor::full({}, static_cast<long>(i->i()), dtypes::int64)};
         if (const auto* fs = a.attr("value_floats"))
           return std::vector{Tensor(std::vector<float>(fs->floats().begin(), fs->floats().end()))};
         if (const auto* is = a.attr("value_ints")) {
           std::vector<int64_t> v(is->ints().begin(), is->ints().end());
           return std::vector{
               Tensor::from_blob(v.data(), {static_cast<int64_t>(v.size())}, dtypes::int64)};
         }
         fail("ONNX node '%s' (Constant): no value attribute tinycore reads", a.node.name());
       }},
      {"Reshape",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         std::vector<int64_t> s = a.host_ints(1);
         bool allowzero = a.attr_int("allowzero", 0) != 0;
         for (size_t i = 0; i < s.size(); i++)  // 0 copies the input's dimension
           if (s[i] == 0 && !allowzero && static_cast<int>(i) < x.ndim()) s[i] = x.shape()[i];
         return std::vector{x.reshape(Shape(s.begin(), s.end()))};
       }},
      {"Transpose",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         std::vector<int64_t> perm = a.attr_ints("perm");
         if (!perm.empty()) a.sized(perm, x.ndim(), "perm");
         std::vector<int> order;
         for (int i = 0; i < x.ndim(); i++)
           order.push_back(perm.empty() ? x.ndim() - 1 - i : static_cast<int>(perm[i]));
         return std::vector{x.permute(order)};
       }},
      {"Flatten",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = a.attr_int("axis", 1) == x.ndim() ? x.ndim()  // the axis may be the rank
                                                      : axis_of(a.attr_int("axis", 1), x.ndim());
         int64_t outer = 1;
         for (int i = 0; i < axis; i++) outer *= x.shape()[i];
         return std::vector{x.reshape({outer, -1})};
       }},
      {"Unsqueeze",
       [](const NodeArgs& a) {
         Tensor x = a.in(0);
         std::vector<int64_t> axes = a.axes(1);
         int rank = x.ndim() + static_cast<int>(axes.size());
         std::vector<int> dims;
         for (int64_t ax : axes) dims.push_back(axis_of(ax, rank));
         std::sort(dims.begin(), dims.end());
         for (int d : dims) x = x.unsqueeze(d);
         return std::vector{x};
       }},
      {"Squeeze",
       [](const NodeArgs& a) {
         Tensor x = a.in(0);
         std::vector<int64_t> axes = a.axes(1);
         if (axes.empty()) return std::vector{x.squeeze()};
         std::vector<int> dims;
         for (int64_t ax : axes) dims.push_back(axis_of(ax, x.ndim()));
         std::sort(dims.rbegin(), dims.rend());
         for (int d : dims) x = x.squeeze(d);
         return std::vector{x};
       }},
      {"Concat",
       [](const NodeArgs& a) {
         std::vector<Tensor> xs = {a.in(0)};  // (a Concat of none: an error naming the node)
         for (size_t i = 1; i < a.inputs.size(); i++) xs.push_back(a.in(i));
         return std::vector{Tensor::cat(xs, axis_of(a.attr_int("axis", 0), xs[0].ndim()))};
       }},
      {"ConstantOfShape",
       [](const NodeArgs& a) {
         std::vector<int64_t> s = a.host_ints(0);
         Tensor value = Tensor::full({}, 0.0f);
         if (const auto* v = a.attr("value")) value = to_tensor(v->t()).reshape({});
         return std::vector{
             value.reshape(Shape(s.size(), 1)).expand(Shape(s.begin(), s.end())).contiguous()};
       }},
      {"Expand",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         std::vector<int64_t> want = a.host_ints(1);
         Shape out(std::max(want.size(), x.shape().size()), 1);  // numpy's broadcast of the two
         for (size_t i = 0; i < out.size(); i++) {
           int64_t wi = i < out.size() - want.size() ? 1 : want[i - (out.size() - want.size())];
           int64_t xi = i < out.size() - x.shape().size()
                            ? 1
                            : x.shape()[i - (out.size() - x.shape().size())];
           out[i] = xi == 1 ? wi : xi;
         }
         return std::vector{x.expand(out)};
       }},
      {"Range",
       [](const NodeArgs& a) {
         auto scalar = [&](size_t i) { return a.host_scalar(i); };
         return std::vector{Tensor::arange(scalar(0), scalar(1), scalar(2), a.in(0).dtype())};
       }},
      {"Slice",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         bool inputs = a.opset >= 10;
         std::vector<int64_t> starts = inputs ? a.host_ints(1) : a.attr_ints("starts");
         std::vector<int64_t> ends = inputs ? a.host_ints(2) : a.attr_ints("ends");
         std::vector<int64_t> axes =
             inputs ? (a.has(3) ? a.host_ints(3) : std::vector<int64_t>{}) : a.attr_ints("axes");
         std::vector<int64_t> steps = inputs && a.has(4) ? a.host_ints(4) : std::vector<int64_t>{};
         a.sized(ends, starts.size(), "ends");
         if (!axes.empty()) a.sized(axes, starts.size(), "axes");
         if (!steps.empty()) a.sized(steps, starts.size(), "steps");
         std::vector<IndexItem> items(x.ndim(), IndexItem(Slice()));
         for (size_t i = 0; i < starts.size(); i++) {
           int axis = axis_of(axes.empty() ? static_cast<int64_t>(i) : axes[i], x.ndim());
           items[axis] = Slice(starts[i], ends[i], steps.empty() ? 1 : steps[i]);
         }
         return std::vector{x.getitem(items)};
       }},
      {"Tile", [](const NodeArgs& a) { return std::vector{a.in(0).repeat(a.host_ints(1))}; }},
      {"Trilu",
       [](const NodeArgs& a) {
         int64_t k = a.has(1) ? static_cast<int64_t>(a.host_scalar(1)) : 0;
         return std::vector{a.attr_int("upper", 1) ? a.in(0).triu(k) : a.in(0).tril(k)};
       }},
      {"Split",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(a.attr_int("axis", 0), x.ndim());
         std::vector<int64_t> sizes = a.opset >= 13
                                          ? (a.has(1) ? a.host_ints(1) : std::vector<int64_t>{})
                                          : a.attr_ints("split");
         int64_t parts = a.node.output_size(), n = x.shape()[axis];
         if (sizes.empty())  // equal parts, the last smaller where they do not divide
           for (int64_t i = 0, each = (n + parts - 1) / parts; i < parts; i++)
             sizes.push_back(std::min(each, n - i * each));
         std::vector<Tensor> out;
         int64_t at = 0;
         for (int64_t size : sizes) {
           std::vector<IndexItem> items(axis, IndexItem(Slice()));
           items.emplace_back(Slice(at, at + size));
           out.push_back(x.getitem(items)), at += size;
         }
         return out;
       }},
      {"Pad",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         std::string mode = a.attr("mode") ? a.attr("mode")->s() : "constant";
         std::vector<int64_t> pads = a.opset >= 11 ? a.host_ints(1) : a.attr_ints("pads");
         a.sized(pads, 2 * x.ndim(), "pads");
         std::vector<std::pair<int64_t, int64_t>> pairs(x.ndim(), {0, 0});
         for (int i = 0; i < x.ndim(); i++) pairs[i] = {pads[i], pads[x.ndim() + i]};
         if (mode != "constant")
           return std::vector{x.pad(pairs, mode == "edge" ? "replicate" : mode)};
         double value =
             a.opset >= 11 ? (a.has(2) ? a.host_scalar(2) : 0.0) : a.attr_float("value", 0.0f);
         ConstValue v =
             dtypes::is_float(x.dtype()) ? ConstValue(value) : ConstValue(static_cast<long>(value));
         return std::vector{x.pad(pairs, v)};
       }},
      {"DepthToSpace",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int64_t b = a.attr_int("blocksize", 1), n = x.shape()[0], c = x.shape()[1],
                 h = x.shape()[2], w = x.shape()[3];
         bool crd = a.attr("mode") && a.attr("mode")->s() == "CRD";
         Tensor t = crd ? x.reshape({n, c / (b * b), b, b, h, w}).permute({0, 1, 4, 2, 5, 3})
                        : x.reshape({n, b, b, c / (b * b), h, w}).permute({0, 3, 4, 1, 5, 2});
         return std::vector{t.reshape({n, c / (b * b), h * b, w * b})};
       }},
      {"SpaceToDepth",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int64_t b = a.attr_int("blocksize", 1), n = x.shape()[0], c = x.shape()[1],
                 h = x.shape()[2], w = x.shape()[3];
         return std::vector{x.reshape({n, c, h / b, b, w / b, b})
                                .permute({0, 3, 5, 1, 2, 4})
                                .reshape({n, c * b * b, h / b, w / b})};
       }},
      {"EyeLike",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         DType dt =
             a.attr("dtype") ? dtype_of_onnx(static_cast<int>(a.attr_int("dtype", 1))) : x.dtype();
         int64_t k = a.attr_int("k", 0), rows = x.shape()[0], cols = x.shape()[1];
         Tensor r =
             Tensor::arange(0, static_cast<double>(rows), 1, dtypes::int64).reshape({rows, 1});
         Tensor c =
             Tensor::arange(0, static_cast<double>(cols), 1, dtypes::int64).reshape({1, cols});
         return std::vector{c.sub(r).eq(static_cast<long>(k)).cast(dt)};
       }},
      {"OneHot",  // indices (negative from the end), depth, (off, on) values; the new axis
       [](const NodeArgs& a) {
         Tensor idx = a.in(0).cast(dtypes::int64);
         int64_t depth = static_cast<int64_t>(a.host_scalar(1));
         idx = idx.lt(0).where(idx.add(static_cast<long>(depth)), idx);
         int rank = idx.ndim() + 1, axis = axis_of(a.attr_int("axis", -1), rank);
         Shape classes(rank, 1);
         classes[axis] = depth;
         Tensor hot = Tensor::arange(0, static_cast<double>(depth), 1, dtypes::int64)
                          .reshape(classes)
                          .eq(idx.unsqueeze(axis));
         const Tensor& v = a.in(2);
         return std::vector{hot.where(v.getitem({1L}), v.getitem({0L}))};
       }},
  });
}

}  // namespace tc::onnx
