// The ONNX operators that read or write at indices given as tensors.
#include "frontends/onnx/op_table.h"

namespace tc::onnx {

void add_index_ops(OpTable& t) {
  t.insert({
      {"GatherElements",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(a.attr_int("axis", 0), x.ndim());
         Tensor idx = a.in(1).cast(dtypes::int64);
         idx = idx.lt(0).where(idx.add(static_cast<long>(x.shape()[axis])), idx);
         return std::vector{x.gather(axis, idx)};
       }},
      {"Gather",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(a.attr_int("axis", 0), x.ndim());
         Tensor idx = a.in(1).cast(dtypes::int64);
         idx = idx.lt(0).where(idx.add(static_cast<long>(x.shape()[axis])), idx);
         std::vector<IndexItem> items(axis, IndexItem(Slice()));
         items.emplace_back(idx);
         return std::vector{x.getitem(items)};
       }},
      {"ScatterElements",
       [](const NodeArgs& a) {
         const Tensor& x = a.in(0);
         int axis = axis_of(a.attr_int("axis", 0), x.ndim());
         Tensor idx = a.in(1).cast(dtypes::int64);
         idx = idx.lt(0).where(idx.add(static_cast<long>(x.shape()[axis])), idx);
         std::string r = a.attr("reduction") ? a.attr("reduction")->s() : "none";
         if (r == "none") return std::vector{x.scatter(axis, idx, a.in(2))};
         return std::vector{x.scatter_reduce(axis, idx, a.in(2), r == "add" ? "sum" : "prod")};
       }},
  });
}

}  // namespace tc::onnx
