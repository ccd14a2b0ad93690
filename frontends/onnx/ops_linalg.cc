// The ONNX linear-algebra operators beyond products: Det.
#include "frontends/onnx/op_table.h"
#include "tinycore/error.h"

namespace tc::onnx {
namespace {

// The determinants of (..., n, n) matrices: Gaussian elimination with partial pivoting, unrolled
// over the (static) n and batched; the row swaps are one-hot blends so every step is Tensor ops.
Tensor det(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  if (x.ndim() < 2 || x.shape()[x.ndim() - 1] != x.shape()[x.ndim() - 2] ||
      !dtypes::is_float(x.dtype()))
    fail("ONNX node '%s' (Det): the input must be float square matrices (..., n, n), got %s %s",
         a.node.name(), x.dtype().name(), fmt_shape(x.shape()));
  int64_t n = x.shape().back();
  Tensor m = x, rows = Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32);
  Tensor d = Tensor::ones(Shape(x.shape().begin(), x.shape().end() - 2), x.dtype());
  for (int64_t k = 0; k < n; k++) {
    Tensor col = m.getitem({Ellipsis, k});                                            // (..., n)
    Tensor p = rows.ge(static_cast<int>(k)).where(col.abs(), -1.0).argmax(-1, true);  // (..., 1)
    Tensor at_p = rows.eq(p).cast(x.dtype()).unsqueeze(-1);                           // (..., n, 1)
    Tensor at_k = rows.eq(static_cast<int>(k)).cast(x.dtype()).unsqueeze(-1);         // (n, 1)
    Tensor row_p = m.mul(at_p).sum(-2, true),
           row_k = m.getitem({Ellipsis, Slice(k, k + 1), Slice()});
    m = m.add(at_k.mul(row_p.sub(row_k))).add(at_p.mul(row_k.sub(row_p)));
    Tensor pivot = m.getitem({Ellipsis, k, Slice(k, k + 1)});  // (..., 1)
    d = d.mul(p.eq(static_cast<int>(k)).where(pivot, pivot.neg()).squeeze(-1));
    // rows below k lose their multiple of row k (a zero pivot leaves them: the det is 0 already)
    Tensor factor = rows.gt(static_cast<int>(k))
                        .where(m.getitem({Ellipsis, k}).div(pivot.eq(0.0).where(1.0, pivot)), 0.0)
                        .unsqueeze(-1);
    m = m.sub(factor.mul(m.getitem({Ellipsis, Slice(k, k + 1), Slice()})));
  }
  return d;
}

}  // namespace

void add_linalg_ops(OpTable& t) {
  t.insert({{"Det", [](const NodeArgs& a) { return std::vector{det(a)}; }}});
}

}  // namespace tc::onnx
