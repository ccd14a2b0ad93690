// Movement: the primitive view ops (reshape, permute, expand, pad, shrink, flip), each one node
// that remembers how the view was taken, and the views composed from them (squeeze, unflatten, pad
// modes, triangles, diagonals, unfold ...), as in the seeds' tinygrad: no kernels of their own.
#include <algorithm>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tinycore/tensor.h"
#include "tinycore/tensor/internal.h"

namespace tc {

using detail::Dims;
using detail::pad_on;
using detail::Pairs;
using detail::range_on;
using detail::resolve_dim;

namespace {

std::string fmt_pairs(const std::vector<std::pair<int64_t, int64_t>>& p) {
  std::vector<std::string> parts;
  for (const auto& [a, b] : p) parts.push_back(absl::StrFormat("(%d, %d)", a, b));
  return "(" + absl::StrJoin(parts, ", ") + ")";
}

// The (rows, cols) boolean mask of col - row >= diagonal, from two broadcast aranges.
Tensor upper_mask(int64_t rows, int64_t cols, int64_t diagonal) {
  Tensor r = Tensor::arange(0, static_cast<double>(rows), 1, dtypes::int32).reshape({rows, 1});
  Tensor c = Tensor::arange(0, static_cast<double>(cols), 1, dtypes::int32).reshape({1, cols});
  return c.sub(r).ge(Tensor::full({}, ConstValue(static_cast<long long>(diagonal)), dtypes::int32));
}

}  // namespace

// ---------------------------------------------------------------- primitives

Tensor Tensor::on_scalar(const char* name, int axis,
                         const std::function<Tensor(const Tensor&)>& f) const {
  resolve_dim(name, *this, axis);
  return f(reshape({1})).reshape({});
}

Tensor Tensor::reshape(Shape new_shape) const {
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < new_shape.size(); i++) {
    if (new_shape[i] == -1) {
      if (infer >= 0)
        fail("Tensor.reshape: only one dimension can be -1, got %s", fmt_shape(new_shape));
      infer = static_cast<int>(i);
    } else if (new_shape[i] < 0) {
      fail("Tensor.reshape: invalid dimension %d in %s", new_shape[i], fmt_shape(new_shape));
    } else {
      known *= new_shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel() % known != 0)
      fail("Tensor.reshape: cannot reshape %s to %s", fmt_shape(shape()), fmt_shape(new_shape));
    new_shape[infer] = numel() / known;
  }
  if (shape_numel(new_shape) != numel())
    fail("Tensor.reshape: cannot reshape %s (%d elements) to %s (%d elements)", fmt_shape(shape()),
         numel(), fmt_shape(new_shape), shape_numel(new_shape));
  if (new_shape == shape()) return *this;
  const UOpRef& base =
      uop()->op == Ops::RESHAPE ? uop()->src[0] : uop();  // reshape of reshape is one
  if (base->shape() == new_shape) return view_of(base, Ops::RESHAPE, new_shape);
  return view_of(UOp::make(Ops::RESHAPE, dtype(), {base}, new_shape), Ops::RESHAPE, new_shape);
}

Tensor Tensor::permute(std::vector<int> order) const {
  if (static_cast<int>(order.size()) != ndim())
    fail("Tensor.permute: order has %d axes, the tensor of shape %s has %d", order.size(),
         fmt_shape(shape()), ndim());
  std::vector<int64_t> perm;
  std::vector<bool> seen(ndim(), false);
  for (int a : order) {
    int n = resolve_dim("permute", *this, a, Dims::kExisting);
    if (seen[n])
      fail("Tensor.permute: axis %d appears twice in the order for a tensor of shape %s", a,
           fmt_shape(shape()));
    seen[n] = true;
    perm.push_back(n);
  }
  bool identity = true;
  for (size_t i = 0; i < perm.size(); i++) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity) return *this;
  return view_of(UOp::make(Ops::PERMUTE, dtype(), {uop()}, perm), Ops::PERMUTE, perm);
}

Tensor Tensor::expand(Shape new_shape) const {
  if (new_shape.size() < shape().size())
    fail("Tensor.expand: cannot expand %s to fewer dimensions %s", fmt_shape(shape()),
         fmt_shape(new_shape));
  size_t lead = new_shape.size() - shape().size();
  Shape padded(lead, 1);
  padded.insert(padded.end(), shape().begin(), shape().end());
  for (size_t i = 0; i < new_shape.size(); i++) {
    if (new_shape[i] == -1) {
      if (i < lead) fail("Tensor.expand: -1 is not allowed for the new leading dimension %d", i);
      new_shape[i] = padded[i];
    }
    if (padded[i] != new_shape[i] && padded[i] != 1)
      fail("Tensor.expand: cannot expand %s to %s (dimension %d is %d, not 1)", fmt_shape(shape()),
           fmt_shape(new_shape), i, padded[i]);
  }
  Tensor t = padded == shape() ? *this : reshape(padded);
  if (new_shape == padded) return t;
  return t.view_of(UOp::make(Ops::EXPAND, dtype(), {t.uop()}, new_shape), Ops::EXPAND, new_shape);
}

Tensor Tensor::pad(std::vector<std::pair<int64_t, int64_t>> padding, ConstValue value) const {
  if (static_cast<int>(padding.size()) != ndim())
    fail("Tensor.pad: padding %s has %d entries for a tensor of shape %s", fmt_pairs(padding),
         padding.size(), fmt_shape(shape()));
  // negative padding removes elements: shrink first, then pad with the rest
  std::vector<std::pair<int64_t, int64_t>> keep, grow;
  std::vector<int64_t> arg;
  bool any_shrink = false, any_pad = false;
  for (int i = 0; i < ndim(); i++) {
    auto [b, e] = padding[i];
    int64_t kb = std::max<int64_t>(0, -b), ke = shape()[i] - std::max<int64_t>(0, -e);
    if (kb > ke)
      fail("Tensor.pad: padding %s removes more than dimension %d (size %d) of shape %s",
           fmt_pairs(padding), i, shape()[i], fmt_shape(shape()));
    keep.push_back({kb, ke});
    any_shrink |= b < 0 || e < 0;
    arg.push_back(std::max<int64_t>(0, b));
    arg.push_back(std::max<int64_t>(0, e));
    any_pad |= b > 0 || e > 0;
  }
  Tensor t = any_shrink ? shrink(keep) : *this;
  if (!any_pad) return t;
  if (t.numel() == 0) {  // only fill: no kernel reads an empty buffer (its loads have no address)
    Shape out = t.shape();
    for (size_t i = 0; i < out.size(); i++) out[i] += arg[2 * i] + arg[2 * i + 1];
    return full(out, value, dtype());
  }
  Tensor padded = t.view_of(UOp::make(Ops::PAD, dtype(), {t.uop()}, arg), Ops::PAD, arg);
  if (value.value == 0) return padded;
  // a non-zero fill: where(inside, x, value), with "inside" as a padded ones mask
  Tensor mask(UOp::make(Ops::PAD, dtypes::bool_, {full(t.shape(), true).uop()}, arg));
  return mask.where(padded, padded.scalar_like(value));
}

Tensor Tensor::shrink(std::vector<std::pair<int64_t, int64_t>> ranges) const {
  if (static_cast<int>(ranges.size()) != ndim())
    fail("Tensor.shrink: %d ranges %s for a tensor of shape %s", ranges.size(), fmt_pairs(ranges),
         fmt_shape(shape()));
  std::vector<int64_t> arg;
  bool identity = true;
  for (int i = 0; i < ndim(); i++) {
    auto [b, e] = ranges[i];
    if (b < 0 || b > e || e > shape()[i])
      fail("Tensor.shrink: range (%d, %d) is out of bounds for dimension %d of shape %s", b, e, i,
           fmt_shape(shape()));
    identity &= b == 0 && e == shape()[i];
    arg.push_back(b);
    arg.push_back(e);
  }
  if (identity) return *this;
  return view_of(UOp::make(Ops::SHRINK, dtype(), {uop()}, arg), Ops::SHRINK, arg);
}

Tensor Tensor::flip(std::vector<int> axes) const {
  std::vector<int64_t> arg;
  for (int a : axes) {
    int n = resolve_dim("flip", *this, a, Dims::kExisting);
    if (std::find(arg.begin(), arg.end(), n) != arg.end())
      fail("Tensor.flip: axis %d appears twice", a);
    if (shape()[n] > 1) arg.push_back(n);
  }
  if (arg.empty()) return *this;
  std::sort(arg.begin(), arg.end());
  return view_of(UOp::make(Ops::FLIP, dtype(), {uop()}, arg), Ops::FLIP, arg);
}

Tensor Tensor::transpose(int dim0, int dim1) const {
  std::vector<int> order(ndim());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[resolve_dim("transpose", *this, dim0, Dims::kExisting)],
            order[resolve_dim("transpose", *this, dim1, Dims::kExisting)]);
  return permute(order);
}

Tensor Tensor::flatten(int start_dim, int end_dim) const {
  if (ndim() == 0) return reshape({1});
  int s = resolve_dim("flatten", *this, start_dim), e = resolve_dim("flatten", *this, end_dim);
  if (s > e) fail("Tensor.flatten: start_dim %d is after end_dim %d", start_dim, end_dim);
  Shape out(shape().begin(), shape().begin() + s);
  out.push_back(shape_numel(Shape(shape().begin() + s, shape().begin() + e + 1)));
  out.insert(out.end(), shape().begin() + e + 1, shape().end());
  return reshape(out);
}

Tensor Tensor::contiguous() const { return apply(Ops::CONTIGUOUS, dtype()); }

// ---------------------------------------------------------------- shape helpers

Tensor Tensor::squeeze(std::optional<int> dim) const {
  if (!dim) {
    Shape out;
    for (int64_t d : shape())
      if (d != 1) out.push_back(d);
    return reshape(out);
  }
  int d = resolve_dim("squeeze", *this, *dim);
  if (ndim() == 0 || shape()[d] != 1) return *this;
  Shape out = shape();
  out.erase(out.begin() + d);
  return reshape(out);
}

Tensor Tensor::unsqueeze(int dim) const {
  int d = resolve_dim("unsqueeze", *this, dim, Dims::kNew);
  Shape out = shape();
  out.insert(out.begin() + d, 1);
  return reshape(out);
}

Tensor Tensor::t() const { return ndim() < 2 ? *this : transpose(); }

Tensor Tensor::view(Shape shape) const {
  try {
    return reshape(std::move(shape));
  } catch (const Error& e) {
    fail("Tensor.view: %s", e.what());
  }
}

Tensor Tensor::unflatten(int dim, Shape sizes) const {
  int d = resolve_dim("unflatten", *this, dim);
  int64_t known = 1;
  int infer = 0;
  for (int64_t s : sizes) {
    if (s == -1)
      infer++;
    else if (s < 0)
      infer = 2;
    else
      known *= s;
  }
  int64_t n = ndim() ? shape()[d] : 1;
  bool ok = infer == 0 ? known == n : infer == 1 && known != 0 && n % known == 0;
  if (!ok)
    fail("Tensor.unflatten: sizes %s do not unflatten dimension %d (size %d) of shape %s",
         fmt_shape(sizes), dim, n, fmt_shape(shape()));
  Shape out(shape().begin(), shape().begin() + std::min(d, ndim()));
  out.insert(out.end(), sizes.begin(), sizes.end());
  if (ndim()) out.insert(out.end(), shape().begin() + d + 1, shape().end());
  return reshape(out);
}

Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int> dim) const {
  if (repeats < 0) fail("Tensor.repeat_interleave: repeats must be non-negative, got %d", repeats);
  Tensor x = dim ? *this : flatten();
  int d = dim ? resolve_dim("repeat_interleave", *this, *dim) : 0;
  if (x.ndim() == 0) x = x.reshape({1});
  Shape s = x.shape(), un = s, ex = s, out = s;
  un.insert(un.begin() + d + 1, 1);
  ex.insert(ex.begin() + d + 1, repeats);
  out[d] = s[d] * repeats;
  return x.reshape(un).expand(ex).reshape(out);
}

// ---------------------------------------------------------------- padding

Tensor Tensor::pad(std::vector<std::pair<int64_t, int64_t>> padding, const std::string& mode,
                   ConstValue value) const {
  if (mode == "constant") return pad(std::move(padding), value);
  if (mode != "reflect" && mode != "replicate" && mode != "circular")
    fail(
        "Tensor.pad: mode '%s' is not supported (use constant, reflect, replicate or "
        "circular)",
        mode);
  if (static_cast<int>(padding.size()) != ndim())
    fail("Tensor.pad: padding has %d entries for a tensor of shape %s", padding.size(),
         fmt_shape(shape()));
  if (mode == "circular") {
    // negative entries remove elements first (as torch); what is left wraps around
    Pairs cut, grow;
    for (int i = 0; i < ndim(); i++) {
      auto [b, a] = padding[i];
      cut.push_back({std::min<int64_t>(b, 0), std::min<int64_t>(a, 0)});
      grow.push_back({std::max<int64_t>(b, 0), std::max<int64_t>(a, 0)});
    }
    Tensor kept = pad(cut);
    Shape reps;
    for (int i = 0; i < ndim(); i++) {
      auto [b, a] = grow[i];
      if (b > kept.shape()[i] || a > kept.shape()[i])
        fail(
            "Tensor.pad: circular padding (%d, %d) wraps around more than once for dimension %d "
            "of shape %s",
            padding[i].first, padding[i].second, i, fmt_shape(shape()));
      reps.push_back(1 + (b > 0) + (a > 0));
    }
    Tensor x = kept.repeat(reps);
    Pairs r;
    for (int i = 0; i < ndim(); i++) {
      auto [b, a] = grow[i];
      int64_t o = kept.shape()[i], xs = x.shape()[i];
      r.push_back({b == 0 ? 0 : o - b, a == 0 ? xs : xs - o + a});
    }
    return x.shrink(r);
  }
  Tensor x = *this;
  for (int d = 0; d < ndim(); d++) {
    int64_t b = std::max<int64_t>(padding[d].first, 0), a = std::max<int64_t>(padding[d].second, 0);
    if (b == 0 && a == 0) continue;
    int64_t s = x.shape()[d];
    std::vector<Tensor> parts;
    if (mode == "reflect") {
      if (b >= s || a >= s)
        fail(
            "Tensor.pad: reflect padding (%d, %d) must be less than dimension %d (size %d) of "
            "shape %s",
            b, a, d, s, fmt_shape(shape()));
      if (b > 0) parts.push_back(x.shrink(range_on(x, d, 1, b + 1)).flip({d}));
      parts.push_back(x);
      if (a > 0) parts.push_back(x.shrink(range_on(x, d, s - 1 - a, s - 1)).flip({d}));
    } else {  // replicate
      if (s == 0)
        fail("Tensor.pad: cannot replicate-pad dimension %d of size 0 in shape %s", d,
             fmt_shape(shape()));
      auto edge = [&](int64_t at, int64_t n) {
        Shape e = x.shape();
        e[d] = n;
        return x.shrink(range_on(x, d, at, at + 1)).expand(e);
      };
      if (b > 0) parts.push_back(edge(0, b));
      parts.push_back(x);
      if (a > 0) parts.push_back(edge(s - 1, a));
    }
    x = cat(parts, d);
  }
  // negative entries remove elements at the end
  Pairs r;
  for (int d = 0; d < ndim(); d++) {
    auto [b, a] = padding[d];
    int64_t s = x.shape()[d];
    int64_t lo = -std::min<int64_t>(b, 0), hi = std::min(a + s, s);
    if (lo > hi)
      fail("Tensor.pad: padding (%d, %d) removes more than dimension %d (size %d) of shape %s", b,
           a, d, shape()[d], fmt_shape(shape()));
    r.push_back({lo, hi});
  }
  return x.shrink(r);
}

Tensor Tensor::pad_to(Shape new_shape) const {
  if (static_cast<int>(new_shape.size()) != ndim())
    fail("Tensor.pad_to: cannot pad shape %s to %s (dimension counts differ)", fmt_shape(shape()),
         fmt_shape(new_shape));
  Pairs p;
  for (int i = 0; i < ndim(); i++) {
    int64_t n = new_shape[i] == -1 ? shape()[i] : new_shape[i];
    if (n < shape()[i])
      fail("Tensor.pad_to: cannot pad shape %s to the smaller %s", fmt_shape(shape()),
           fmt_shape(new_shape));
    p.push_back({0, n - shape()[i]});
  }
  return pad(p);
}

// ---------------------------------------------------------------- triangles, diagonals and windows

Tensor Tensor::triu(int64_t diagonal) const {
  if (ndim() < 2)
    fail("Tensor.triu: needs at least 2 dimensions, got shape %s", fmt_shape(shape()));
  int64_t r = shape()[ndim() - 2], c = shape()[ndim() - 1];
  return upper_mask(r, c, diagonal).where(*this, ConstValue(0)).cast(dtype());
}

Tensor Tensor::tril(int64_t diagonal) const {
  if (ndim() < 2)
    fail("Tensor.tril: needs at least 2 dimensions, got shape %s", fmt_shape(shape()));
  int64_t r = shape()[ndim() - 2], c = shape()[ndim() - 1];
  return upper_mask(r, c, diagonal + 1).where(ConstValue(0), *this).cast(dtype());
}

Tensor Tensor::diag() const {
  if (ndim() != 1) fail("Tensor.diag: needs a 1-D tensor, got shape %s", fmt_shape(shape()));
  int64_t n = shape()[0];
  // each element followed by n zeros, the first n * n of those read as n rows of n
  return unsqueeze(-1).pad({{0, 0}, {0, n}}).flatten().shrink({{0, n * n}}).reshape({n, n});
}

Tensor Tensor::diagonal(int64_t offset, int dim1, int dim2) const {
  int d1 = resolve_dim("diagonal", *this, dim1), d2 = resolve_dim("diagonal", *this, dim2);
  if (d1 == d2)
    fail("Tensor.diagonal: dim1 %d and dim2 %d are the same dimension of shape %s", dim1, dim2,
         fmt_shape(shape()));
  std::vector<int> order;
  for (int i = 0; i < ndim(); i++)
    if (i != d1 && i != d2) order.push_back(i);
  order.push_back(d1);
  order.push_back(d2);
  Tensor x = permute(order);
  int r = x.ndim() - 2, c = x.ndim() - 1;
  int64_t rows = x.shape()[r], cols = x.shape()[c];
  // the diagonal starts at (0, offset) or (-offset, 0): the rows or columns before it go
  if (offset >= 0)
    x = x.shrink(range_on(x, c, std::min(offset, cols), cols));
  else
    x = x.shrink(range_on(x, r, std::min(-offset, rows), rows));
  int64_t d = std::min(x.shape()[r], x.shape()[c]);
  Shape lead(x.shape().begin(), x.shape().end() - 2);
  Shape out = lead;
  out.push_back(d);
  if (d == 0) return x.shrink(range_on(x, r, 0, 0)).reshape(out);
  // the leading d x d square, flattened and padded by d: rows of d + 1 start with x[i][i]
  Pairs square = range_on(x, r, 0, d);
  square[c] = {0, d};
  Tensor flat = x.shrink(square).flatten(r, c);
  Shape rows_of = lead;
  rows_of.push_back(d);
  rows_of.push_back(d + 1);
  Tensor padded = flat.pad(pad_on(flat, r, 0, d)).reshape(rows_of);
  return padded.shrink(range_on(padded, c, 0, 1)).reshape(out);
}

Tensor Tensor::unfold(int dim, int64_t size, int64_t step) const {
  if (ndim() == 0) {  // as a 1-element vector (torch)
    resolve_dim("unfold", *this, dim);
    return reshape({1}).unfold(0, size, step).reshape({size});
  }
  int d = resolve_dim("unfold", *this, dim);
  if (size < 0) fail("Tensor.unfold: size must be >= 0, got %d", size);
  if (step <= 0) fail("Tensor.unfold: step must be > 0, got %d", step);
  if (size > shape()[d])
    fail("Tensor.unfold: size %d is larger than dimension %d of shape %s", size, dim,
         fmt_shape(shape()));
  // dim moved last, windows taken there by pool (a view), then dim's windows put back
  std::vector<int> to_last;
  for (int i = 0; i < ndim(); i++)
    if (i != d) to_last.push_back(i);
  to_last.push_back(d);
  Tensor x = permute(to_last);
  int last = ndim() - 1;
  int64_t windows = (shape()[d] - size) / step + 1;
  if (size == 0) {  // pool needs a window; empty windows are an empty view
    Shape s = x.shape();
    s.back() = windows;
    s.push_back(0);
    x = x.shrink(range_on(x, last, 0, 0)).unsqueeze(-2).expand(s);
  } else {
    x = x.pool(IntTuple(std::vector<int64_t>{size}), IntTuple(step));
  }
  std::vector<int> back(ndim());
  for (int i = 0; i < ndim(); i++) back[to_last[i]] = i;
  back.push_back(ndim());
  return x.permute(back);
}

}  // namespace tc
