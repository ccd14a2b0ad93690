// Indexing of Tensor (getitem/setitem, gather, scatter, masked_select, nonzero, one_hot), composed
// from movement ops, comparisons against arange (one-hot masks), where and reductions, as in the
// seeds' tinygrad: no kernels of their own. Basic indices are views; tensor indices become one-hot
// masks that a sum reduces away.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "tinycore/tensor.h"
#include "tinycore/tensor/internal.h"

namespace tc {

using detail::Dims;
using detail::Pairs;
using detail::resolve_dim;

IndexItem::IndexItem(const Tensor& t) : kind(Kind::Tensor), tensor(std::make_shared<Tensor>(t)) {}

namespace {

Tensor iota(int64_t n) { return Tensor::arange(0, static_cast<double>(n), 1, dtypes::int32); }

// tinygrad's _one_hot_along_dim: idx == arange(n) laid along `axis` (a normalized axis of
// idx, usually of size 1), so the comparison broadcasts into a one-hot mask along it.
Tensor one_hot_along(const Tensor& idx, int64_t n, int axis) {
  Shape s(idx.ndim(), 1);
  s[axis] = n;
  return idx.eq(iota(n).reshape(s));
}

// Whether `from` broadcasts to `to` (numpy's rule, aligned at the right).
bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); i++) {
    int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != 1 && f != t) return false;
  }
  return true;
}

Tensor zero_of(DType d) { return Tensor::full({}, 0, d); }

// Where the bool `mask` (same shape as `vals`) is true somewhere along `axis`, the value of
// `vals` at the last true position along it; elsewhere `target` (mask's shape without `axis`).
Tensor merge_last(const Tensor& target, const Tensor& vals, const Tensor& mask, int axis) {
  int64_t k = mask.shape()[axis];
  Shape s(mask.ndim(), 1);
  s[axis] = k;
  Tensor pos = iota(k).add(ConstValue(1)).reshape(s);  // 1 .. k
  Tensor key = mask.where(pos, zero_of(dtypes::int32));
  Tensor last = key.max(axis, true);
  Tensor sel = key.eq(last).bitwise_and(mask);
  Tensor chosen = sel.where(vals, zero_of(vals.dtype())).sum(axis).cast(vals.dtype());
  return mask.any(axis).where(chosen, target);
}

// The elementwise bound of a reduction: lowest / highest value of a dtype (+-inf for floats).
ConstValue lowest(DType d) {
  if (dtypes::is_bool(d)) return ConstValue(false);
  if (dtypes::is_float(d)) return ConstValue(-std::numeric_limits<double>::infinity());
  return ConstValue(static_cast<long long>(dtypes::min(d)));
}
ConstValue highest(DType d) {
  if (dtypes::is_bool(d)) return ConstValue(true);
  if (dtypes::is_float(d)) return ConstValue(std::numeric_limits<double>::infinity());
  if (d == dtypes::uint64) return ConstValue(-1LL);  // all bits set
  if (d == dtypes::int64) return ConstValue(std::numeric_limits<long long>::max());
  return ConstValue(static_cast<long long>(dtypes::max(d)));
}

// One index position, parsed against the dimension it applies to.
struct Parsed {
  IndexItem::Kind kind;
  int64_t size = 1;              // its size in the result (before tensor indexing)
  int64_t begin = 0, end = 1;    // the elements it reads, tight: [begin, end) of the source dim
  int64_t stride = 1;            // signed step
  int64_t src_size = 1;          // the size of the source dimension
  std::optional<Tensor> tensor;  // a tensor index, negative values wrapped
};

std::string fmt_items(const std::vector<IndexItem>& items) {
  std::vector<std::string> parts;
  auto opt = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : ""; };
  for (const IndexItem& it : items) {
    switch (it.kind) {
      case IndexItem::Kind::Int:
        parts.push_back(std::to_string(it.i));
        break;
      case IndexItem::Kind::Slice: {
        std::string s = opt(it.slice.start) + ":" + opt(it.slice.stop);
        if (it.slice.step) s += ":" + std::to_string(*it.slice.step);
        parts.push_back(s);
        break;
      }
      case IndexItem::Kind::NewAxis:
        parts.push_back("None");
        break;
      case IndexItem::Kind::Ellipsis:
        parts.push_back("...");
        break;
      case IndexItem::Kind::Tensor:
        parts.push_back("Tensor" + fmt_shape(it.tensor->shape()) + " " + it.tensor->dtype().name());
        break;
    }
  }
  return "[" + absl::StrJoin(parts, ", ") + "]";
}

std::vector<Parsed> parse_indices(const char* name, const Tensor& x,
                                  const std::vector<IndexItem>& indices) {
  int n_ell = 0, n_idx = 0;
  for (const IndexItem& it : indices) {
    if (it.kind == IndexItem::Kind::Ellipsis)
      n_ell++;
    else if (it.kind != IndexItem::Kind::NewAxis)
      n_idx++;
  }
  if (n_ell > 1)
    fail("Tensor.%s: an index can only have a single ellipsis (...), got %s", name,
         fmt_items(indices));
  if (n_idx > x.ndim())
    fail("Tensor.%s: too many indices %s (%d) for a tensor of shape %s", name, fmt_items(indices),
         n_idx, fmt_shape(x.shape()));
  std::vector<IndexItem> items;
  bool filled = false;
  for (const IndexItem& it : indices) {
    if (it.kind == IndexItem::Kind::Ellipsis) {
      items.insert(items.end(), x.ndim() - n_idx, IndexItem(Slice()));
      filled = true;
    } else {
      items.push_back(it);
    }
  }
  if (!filled) items.insert(items.end(), x.ndim() - n_idx, IndexItem(Slice()));

  std::vector<Parsed> out;
  int dim = 0;
  for (const IndexItem& it : items) {
    Parsed p;
    p.kind = it.kind;
    if (it.kind == IndexItem::Kind::NewAxis) {
      out.push_back(p);
      continue;
    }
    int64_t size = x.shape()[dim];
    p.src_size = size;
    p.begin = 0;
    p.end = size;
    p.size = size;
    switch (it.kind) {
      case IndexItem::Kind::Int: {
        if (it.i >= size || it.i < -size)
          fail("Tensor.%s: index %d is out of bounds for dimension %d with size %d (shape %s)",
               name, it.i, dim, size, fmt_shape(x.shape()));
        p.begin = it.i < 0 ? it.i + size : it.i;
        p.end = p.begin + 1;
        p.size = 1;
        break;
      }
      case IndexItem::Kind::Slice: {
        int64_t step = it.slice.step.value_or(1);
        if (step == 0) fail("Tensor.%s: slice step cannot be 0 in %s", name, fmt_items(indices));
        // Python's slice.indices(size)
        int64_t lower = step > 0 ? 0 : -1, upper = step > 0 ? size : size - 1;
        auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
          if (!v) return dflt;
          int64_t s = *v < 0 ? *v + size : *v;
          return std::clamp(s, lower, upper);
        };
        int64_t start = clamp(it.slice.start, step > 0 ? lower : upper);
        int64_t stop = clamp(it.slice.stop, step > 0 ? upper : lower);
        int64_t n = step > 0 ? (stop > start ? (stop - start + step - 1) / step : 0)
                             : (start > stop ? (start - stop - step - 1) / -step : 0);
        p.stride = step;
        p.size = n;
        if (n == 0) {
          p.begin = p.end = 0;
        } else if (step > 0) {
          p.begin = start;
          p.end = start + (n - 1) * step + 1;
        } else {
          p.begin = start + (n - 1) * step;
          p.end = start + 1;
        }
        break;
      }
      case IndexItem::Kind::Tensor: {
        Tensor t = *it.tensor;
        if (!dtypes::is_int(t.dtype()))
          fail("Tensor.%s: index tensor dtype %s is not supported (an integer dtype is needed)",
               name, t.dtype().name());
        if (t.dtype().itemsize() < 4) t = t.cast(dtypes::int32);
        if (!dtypes::is_unsigned(t.dtype()))
          t = t.lt(ConstValue(0)).where(t.add(ConstValue(static_cast<long long>(size))), t);
        p.tensor = t;
        break;
      }
      default:
        break;
    }
    out.push_back(p);
    dim++;
  }
  return out;
}

// x[indices], or (with v) the whole of x with x[indices] replaced by v (tinygrad's _getitem).
Tensor index_impl(const char* name, const Tensor& self, const std::vector<IndexItem>& indices,
                  const std::optional<Tensor>& v) {
  std::vector<Parsed> parsed = parse_indices(name, self, indices);
  std::vector<const Parsed*> mops;  // one per source dimension
  for (const Parsed& p : parsed)
    if (p.kind != IndexItem::Kind::NewAxis) mops.push_back(&p);

  // basic indexing: views
  Tensor x = self;
  if (!mops.empty()) {
    Pairs ranges;
    std::vector<int> flips;
    bool strided = false;
    for (size_t d = 0; d < mops.size(); d++) {
      ranges.push_back({mops[d]->begin, mops[d]->end});
      if (mops[d]->stride < 0) flips.push_back(static_cast<int>(d));
      strided |= std::abs(mops[d]->stride) != 1;
    }
    x = x.shrink(ranges).flip(flips);
    if (strided) {  // every st-th element: pad to a multiple of st, split, keep the first column
      Pairs pad, keep;
      Shape split, out;
      for (size_t d = 0; d < mops.size(); d++) {
        int64_t s = x.shape()[d], st = std::abs(mops[d]->stride);
        int64_t n = (s + st - 1) / st;
        pad.push_back({0, n * st - s});
        split.insert(split.end(), {n, st});
        keep.insert(keep.end(), {{0, n}, {0, 1}});
        out.push_back(n);
      }
      x = x.pad(pad).reshape(split).shrink(keep).reshape(out);
    }
  }
  Shape kept;  // NewAxis adds a 1, an int removes its dimension
  std::vector<const Parsed*> x_dims;
  for (const Parsed& p : parsed) {
    if (p.kind == IndexItem::Kind::Int) continue;
    kept.push_back(p.size);
    x_dims.push_back(&p);
  }
  x = x.reshape(kept);

  std::optional<Tensor> vb;
  std::vector<int> dims;
  for (size_t d = 0; d < x_dims.size(); d++)
    if (x_dims[d]->kind == IndexItem::Kind::Tensor) dims.push_back(static_cast<int>(d));
  if (!dims.empty()) {  // advanced indexing: one-hot masks, summed away
    std::vector<Shape> shapes;
    for (int d : dims) shapes.push_back(x_dims[d]->tensor->shape());
    Shape big = broadcast_shape(name, shapes);
    int nb = static_cast<int>(big.size()), nd = x.ndim(), d0 = dims[0];
    const Shape& xs = x.shape();
    Shape full(xs.begin(), xs.begin() + d0);  // x.shape[:d0] + big + x.shape[d0:]
    full.insert(full.end(), big.begin(), big.end());
    full.insert(full.end(), xs.begin() + d0, xs.end());
    std::optional<Tensor> mask;
    for (int d : dims) {
      const Tensor& t = *x_dims[d]->tensor;
      Shape s(d0 + nb - t.ndim(), 1);
      s.insert(s.end(), t.shape().begin(), t.shape().end());
      s.insert(s.end(), nd - d0, 1);
      Tensor m = one_hot_along(t.reshape(s), xs[d], d + nb);
      mask = mask ? mask->bitwise_and(m) : m;
    }
    *mask = mask->expand(full);
    Shape rs(xs.begin(), xs.begin() + d0);
    rs.insert(rs.end(), nb, 1);
    rs.insert(rs.end(), xs.begin() + d0, xs.end());
    std::vector<int> sum_axes;
    for (int d : dims) sum_axes.push_back(d + nb);
    Tensor out = mask->where(x.reshape(rs), zero_of(x.dtype())).sum(Axes(sum_axes)).cast(x.dtype());
    bool consecutive = dims.back() - dims.front() + 1 == static_cast<int>(dims.size());
    bool permuted = d0 != 0 && dims.size() > 1 && !consecutive;
    if (permuted) {  // numpy: non-adjacent tensor indices put their dimensions first
      auto order = [&](int n) {
        std::vector<int> o;
        for (int i = d0; i < d0 + nb; i++) o.push_back(i);
        for (int i = 0; i < d0; i++) o.push_back(i);
        for (int i = d0 + nb; i < n; i++) o.push_back(i);
        return o;
      };
      mask = mask->permute(order(mask->ndim()));
      out = out.permute(order(out.ndim()));
    }
    if (!v) return out;
    if (!broadcasts_to(v->shape(), out.shape()))
      fail("Tensor.%s: value of shape %s cannot be broadcast to the indexed shape %s", name,
           fmt_shape(v->shape()), fmt_shape(out.shape()));
    Tensor vals = v->cast(self.dtype()).expand(out.shape());
    for (int a : sum_axes) vals = vals.unsqueeze(a);  // back to the mask's layout
    vals = vals.expand(mask->shape());
    // the index dimensions as one axis, so the last of repeated indices wins in row-major order
    int start = permuted ? 0 : d0;
    Shape flat(mask->shape().begin(), mask->shape().begin() + start);
    flat.push_back(shape_numel(big));
    flat.insert(flat.end(), mask->shape().begin() + start + nb, mask->shape().end());
    vb = merge_last(x, vals.reshape(flat), mask->reshape(flat), start);
  } else {
    if (!v) return x;
    if (!broadcasts_to(v->shape(), x.shape()))
      fail("Tensor.%s: value of shape %s cannot be broadcast to the indexed shape %s", name,
           fmt_shape(v->shape()), fmt_shape(x.shape()));
    vb = v->cast(self.dtype()).expand(x.shape());
  }

  // setitem: undo the views on the value and on a mask of ones, then select
  Shape per_dim;
  for (const Parsed* m : mops) per_dim.push_back(m->kind == IndexItem::Kind::Int ? 1 : m->size);
  auto unview = [&](Tensor t) {
    t = t.reshape(per_dim);
    for (size_t d = 0; d < mops.size(); d++) {
      int64_t st = std::abs(mops[d]->stride), n = t.shape()[d];
      if (st == 1 || n <= 1) continue;
      Shape merged = t.shape();
      merged[d] = n * st;
      Pairs pad(t.ndim() + 1, {0, 0});
      pad[d + 1] = {0, st - 1};
      Pairs keep;
      for (int i = 0; i < t.ndim(); i++)
        keep.push_back({0, i == static_cast<int>(d) ? (n - 1) * st + 1 : t.shape()[i]});
      t = t.unsqueeze(static_cast<int>(d) + 1).pad(pad).reshape(merged).shrink(keep);
    }
    std::vector<int> flips;
    Pairs pad;
    for (size_t d = 0; d < mops.size(); d++) {
      if (mops[d]->stride < 0) flips.push_back(static_cast<int>(d));
      pad.push_back({mops[d]->begin, mops[d]->src_size - mops[d]->end});
    }
    return t.flip(flips).pad(pad);
  };
  Tensor valid = unview(Tensor::full(vb->shape(), true));
  return valid.where(unview(*vb), self);
}

// tinygrad's _pre_scatter: src and a one-hot mask, both of shape self.shape + (index.shape[dim],)
// with self's dim as the one-hot axis (padded with no-ops to self's shape).
std::pair<Tensor, Tensor> pre_scatter(const char* name, const Tensor& self, int& dim,
                                      const Tensor& index, Tensor src) {
  dim = resolve_dim(name, self, dim, Dims::kExisting);
  if (!dtypes::is_int(index.dtype()))
    fail("Tensor.%s: index dtype %s is not supported (an integer dtype is needed)", name,
         index.dtype().name());
  if (index.ndim() != self.ndim() || src.ndim() != self.ndim())
    fail("Tensor.%s: self %s, index %s and src %s must have the same number of dimensions", name,
         fmt_shape(self.shape()), fmt_shape(index.shape()), fmt_shape(src.shape()));
  for (int d = 0; d < self.ndim(); d++)
    if ((d != dim && index.shape()[d] > self.shape()[d]) || index.shape()[d] > src.shape()[d])
      fail(
          "Tensor.%s: index shape %s must be <= src shape %s in every dimension and <= self "
          "shape %s in every dimension but %d",
          name, fmt_shape(index.shape()), fmt_shape(src.shape()), fmt_shape(self.shape()), dim);
  if (src.dtype() != self.dtype())
    fail("Tensor.%s: src dtype %s must equal self dtype %s", name, src.dtype().name(),
         self.dtype().name());
  int nd = self.ndim();
  int64_t n = self.shape()[dim];
  Pairs shr;
  for (int d = 0; d < nd; d++) shr.push_back({0, index.shape()[d]});
  src = src.shrink(shr);
  Shape ex = src.shape();
  ex.push_back(n);
  src = src.unsqueeze(-1).expand(ex).transpose(-1, dim);
  Tensor idx = index.dtype().itemsize() < 4 ? index.cast(dtypes::int32) : index;
  Tensor mask = one_hot_along(idx.unsqueeze(-1), n, nd).transpose(-1, dim);
  Pairs pad;
  for (int d = 0; d < nd; d++)
    pad.push_back({0, d == dim ? 0 : self.shape()[d] - index.shape()[d]});
  pad.push_back({0, 0});
  return {src.pad(pad), mask.pad(pad)};
}

}  // namespace

// ---------------------------------------------------------------- getitem / setitem

Tensor Tensor::getitem(const std::vector<IndexItem>& indices) const {
  return index_impl("getitem", *this, indices, std::nullopt);
}

Tensor& Tensor::setitem(const std::vector<IndexItem>& indices, const Tensor& value) {
  if (value.dtype() != dtype())
    fail("Tensor.setitem: value dtype %s differs from the tensor's dtype %s", value.dtype().name(),
         dtype().name());
  check_no_other_readers(value);
  return assign(index_impl("setitem", *this, indices, value));
}

Tensor& Tensor::setitem_view(const Tensor& view, const Tensor& value) {
  std::shared_ptr<Impl> root = impl_->view_base.lock();
  if (!root) root = impl_;
  if (view.impl_->view_base.lock() != root)
    fail("Tensor.setitem: the view of shape %s was not taken from this tensor of shape %s",
         fmt_shape(view.shape()), fmt_shape(shape()));
  if (value.dtype() != dtype())
    fail("Tensor.setitem: value dtype %s differs from the tensor's dtype %s", value.dtype().name(),
         dtype().name());
  Tensor full = value.shape() == view.shape() ? value : value.expand(view.shape());
  check_no_other_readers(full, view.impl_.get());
  Tensor(view.impl_).assign_through_view(Tensor(root), full);
  return *this;
}

Tensor& Tensor::setitem(const std::vector<IndexItem>& indices, ConstValue value) {
  return setitem(indices, full({}, value, dtype()));
}

// ---------------------------------------------------------------- shrink_from

Tensor Tensor::shrink_from(int dim, const Tensor& start, int64_t length) const {
  int d = resolve_dim("shrink_from", *this, dim, Dims::kExisting);
  if (start.ndim() != 0 || !dtypes::is_int(start.dtype()))
    fail("Tensor.shrink_from: the start must be a 0-d integer tensor, got %s of shape %s",
         start.dtype().name(), fmt_shape(start.shape()));
  if (length < 0 || length > shape()[d])
    fail("Tensor.shrink_from: length %d is out of bounds for dimension %d of shape %s", length, d,
         fmt_shape(shape()));
  Shape along(ndim(), 1), out = shape();
  along[d] = out[d] = length;
  Tensor i = iota(length).reshape(along);
  Tensor window = gather(d, i.add(start.cast(dtypes::int32)).expand(out));
  return view_of(window.uop(), Ops::SHRINK, std::vector<int64_t>{d, length}, start.uop());
}

// ---------------------------------------------------------------- gather / scatter

Tensor Tensor::gather(int dim, const Tensor& index) const {
  if (index.ndim() != ndim())
    fail("Tensor.gather: index of shape %s must have as many dimensions as the tensor %s",
         fmt_shape(index.shape()), fmt_shape(shape()));
  int d = resolve_dim("gather", *this, dim, Dims::kExisting);
  if (!dtypes::is_int(index.dtype()))
    fail("Tensor.gather: index dtype %s is not supported (an integer dtype is needed)",
         index.dtype().name());
  Pairs r;
  for (int i = 0; i < ndim(); i++) {
    if (i != d && index.shape()[i] > shape()[i])
      fail("Tensor.gather: index shape %s exceeds the tensor shape %s in dimension %d",
           fmt_shape(index.shape()), fmt_shape(shape()), i);
    r.push_back({0, i == d ? shape()[i] : index.shape()[i]});
  }
  Tensor x = shrink(r).unsqueeze(-1).transpose(-1, d);
  Tensor idx = index.dtype().itemsize() < 4 ? index.cast(dtypes::int32) : index;
  Tensor mask = one_hot_along(idx.unsqueeze(-1), shape()[d], ndim());
  return mask.where(x, zero_of(dtype())).sum(-1).cast(dtype());
}

Tensor Tensor::scatter(int dim, const Tensor& index, const Tensor& src,
                       const std::string& reduce) const {
  if (!reduce.empty())
    fail(
        "Tensor.scatter: reduce='%s' needs a scalar src; for a Tensor src use scatter_reduce "
        "(src shape %s)",
        reduce, fmt_shape(src.shape()));
  auto [s, mask] = pre_scatter("scatter", *this, dim, index, src);
  return merge_last(*this, s, mask, ndim());
}

Tensor Tensor::scatter(int dim, const Tensor& index, ConstValue src,
                       const std::string& reduce) const {
  if (!reduce.empty() && reduce != "add" && reduce != "multiply")
    fail("Tensor.scatter: reduce='%s' must be one of '', 'add' or 'multiply'", reduce);
  Tensor s = full(index.shape(), src, dtype());
  if (reduce == "add") return scatter_reduce(dim, index, s, "sum", true);
  if (reduce == "multiply") return scatter_reduce(dim, index, s, "prod", true);
  return scatter(dim, index, s);
}

Tensor Tensor::scatter_reduce(int dim, const Tensor& index, const Tensor& src,
                              const std::string& reduce, bool include_self) const {
  if (reduce != "sum" && reduce != "prod" && reduce != "mean" && reduce != "amax" &&
      reduce != "amin")
    fail("Tensor.scatter_reduce: reduce='%s' must be one of 'sum', 'prod', 'mean', 'amax', 'amin'",
         reduce);
  auto [s, mask] = pre_scatter("scatter_reduce", *this, dim, index, src);
  int last = ndim();
  Tensor untouched = mask.any(last).logical_not();
  auto inv = [&](const Tensor& a, const Tensor& b) { return untouched.where(a, b); };
  DType d = dtype();
  auto c = [&](ConstValue v) { return full({}, v, d); };
  if (reduce == "sum")
    return mask.where(s, c(0)).sum(last).cast(d).add(include_self ? *this : inv(*this, c(0)));
  if (reduce == "prod")
    return mask.where(s, c(1)).prod(last).cast(d).mul(include_self ? *this : inv(*this, c(1)));
  if (reduce == "amax") {
    Tensor m = c(lowest(d));
    return mask.where(s, m).max(last).maximum(include_self ? *this : inv(*this, m));
  }
  if (reduce == "amin") {
    Tensor m = c(highest(d));
    return mask.where(s, m).min(last).minimum(include_self ? *this : inv(*this, m));
  }
  // mean
  Tensor count =
      mask.where(c(1), c(0)).sum(last).cast(d).add(include_self ? c(1) : inv(c(1), c(0)));
  Tensor total = mask.where(s, c(0)).sum(last).cast(d).add(include_self ? *this : inv(*this, c(0)));
  return total.div(count);
}

// ---------------------------------------------------------------- masks

Tensor Tensor::masked_select(const Tensor& mask, std::optional<int64_t> size,
                             ConstValue fill_value) const {
  if (!dtypes::is_bool(mask.dtype()))
    fail("Tensor.masked_select: expects a bool mask, got %s", mask.dtype().name());
  if (!broadcasts_to(mask.shape(), shape()))
    fail("Tensor.masked_select: mask of shape %s does not broadcast to the tensor's shape %s",
         fmt_shape(mask.shape()), fmt_shape(shape()));
  if (size && *size < 0) fail("Tensor.masked_select: size must be non-negative, got %d", *size);
  Tensor x = flatten(), m = mask.expand(shape()).flatten();
  if (numel() == 0 || (size && *size == 0)) return full({size ? *size : 0}, fill_value, dtype());
  Tensor cs = m.cumsum(0).cast(dtypes::int32);
  // counts[j] = #{i : cs[i] == j}; its running sum is the position of the (j+1)-th true element
  if (!size) {
    int64_t n = cs[-1].item<int32_t>();  // data-dependent length: realize (as tinygrad)
    if (n == 0) return full({0}, 0, dtype());
    Tensor counts = zeros({n}, dtypes::int32).scatter(0, cs, 1, "add");
    return x[counts.cumsum(0)];
  }
  Tensor counts = zeros({*size}, dtypes::int32).scatter(0, cs, 1, "add");
  Tensor in_range = iota(*size).lt(m.sum().cast(dtypes::int32));
  return in_range.where(x[counts.cumsum(0)], full({}, fill_value, dtype())).cast(dtype());
}

Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const {
  broadcast_shape("masked_fill", {shape(), mask.shape(), value.shape()});
  return mask.where(value, *this);
}

Tensor Tensor::masked_fill(const Tensor& mask, ConstValue value) const {
  broadcast_shape("masked_fill", {shape(), mask.shape()});
  return mask.where(value, *this);
}

Tensor Tensor::nonzero(std::optional<int64_t> size, ConstValue fill_value) const {
  if (size && *size < 0) fail("Tensor.nonzero: size must be non-negative, got %d", *size);
  if (ndim() == 0) {
    int64_t n = size ? *size : (ne(ConstValue(0)).item<bool>() ? 1 : 0);
    return zeros({n, 0}, dtypes::int32);
  }
  Tensor mask = ne(ConstValue(0)).flatten();
  std::vector<Tensor> coords;
  for (int i = 0; i < ndim(); i++) {
    Shape s(ndim(), 1);
    s[i] = shape()[i];
    coords.push_back(iota(shape()[i]).reshape(s).expand(shape()).flatten());
  }
  Tensor idx = stack(coords, -1);
  int64_t nd = ndim();
  Tensor sel =
      idx.masked_select(mask.unsqueeze(-1).expand({numel(), nd}),
                        size ? std::optional<int64_t>(*size * nd) : std::nullopt, fill_value);
  return sel.reshape({-1, nd});
}

Tensor Tensor::one_hot(int64_t num_classes) const {
  if (!dtypes::is_int(dtype()))
    fail("Tensor.one_hot: expects an integer dtype, got %s", dtype().name());
  if (num_classes < -1)
    fail("Tensor.one_hot: num_classes must be -1 or non-negative, got %d", num_classes);
  if (num_classes == -1) {
    if (numel() == 0)
      fail("Tensor.one_hot: cannot infer num_classes from an empty tensor of shape %s",
           fmt_shape(shape()));
    num_classes = max().cast(dtypes::int64).item<int64_t>() + 1;  // realizes (as tinygrad)
  }
  Tensor x = unsqueeze(-1);
  return one_hot_along(x, num_classes, x.ndim() - 1).where(ConstValue(1), ConstValue(0));
}

}  // namespace tc
