// Movement, indexing and creation helpers of Tensor (squeeze, cat, split, roll, pad modes,
// meshgrid, triu/tril, linspace, *_like ...), each composed from the primitive movement ops,
// elementwise ops and arange, as in the seeds' tinygrad: no kernels of their own.
#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "tinycore/tensor.h"

namespace tc {
namespace {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

// tinygrad's _resolve_dim: dim in [-max(1, n), max(1, n) - 1] with n = ndim (+1 when the
// dimension is a new one, as for unsqueeze / stack).
int resolve_dim(const char* name, const Tensor& t, int dim, bool extra = false) {
  int total = t.ndim() + (extra ? 1 : 0);
  int hi = std::max(1, total);
  if (dim < -hi || dim > hi - 1)
    fail("Tensor.%s: dim %d is out of range [%d, %d] for a tensor of shape %s", name, dim, -hi,
         hi - 1, fmt_shape(t.shape()));
  return dim < 0 ? dim + total : dim;
}

// Full ranges everywhere except (b, e) along `dim`.
Pairs range_on(const Tensor& t, int dim, int64_t b, int64_t e) {
  Pairs r;
  for (int i = 0; i < t.ndim(); i++)
    r.push_back(i == dim ? std::make_pair(b, e) : std::make_pair(int64_t{0}, t.shape()[i]));
  return r;
}

// Zeros everywhere except (b, a) along `dim`.
Pairs pad_on(const Tensor& t, int dim, int64_t b, int64_t a) {
  Pairs p(t.ndim(), {0, 0});
  p[dim] = {b, a};
  return p;
}

std::string fmt_shapes(const std::vector<Tensor>& ts) {
  std::vector<std::string> parts;
  for (const Tensor& t : ts) parts.push_back(fmt_shape(t.shape()));
  return absl::StrJoin(parts, ", ");
}

// The (rows, cols) boolean mask of col - row >= diagonal, from two broadcast aranges.
Tensor upper_mask(int64_t rows, int64_t cols, int64_t diagonal) {
  Tensor r = Tensor::arange(0, static_cast<double>(rows), 1, dtypes::int32).reshape({rows, 1});
  Tensor c = Tensor::arange(0, static_cast<double>(cols), 1, dtypes::int32).reshape({1, cols});
  return c.sub(r).ge(Tensor::full({}, ConstValue(static_cast<long long>(diagonal)), dtypes::int32));
}

}  // namespace

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
  int d = resolve_dim("unsqueeze", *this, dim, true);
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

// ---------------------------------------------------------------- joining and splitting

Tensor Tensor::cat(const std::vector<Tensor>& tensors, int dim) {
  if (tensors.empty()) fail("Tensor.cat: needs at least one tensor");
  const Tensor& first = tensors[0];
  if (first.ndim() == 0) fail("Tensor.cat: zero-dimensional tensors cannot be concatenated");
  int d = resolve_dim("cat", first, dim);
  for (const Tensor& t : tensors) {
    bool ok = t.ndim() == first.ndim();
    for (int i = 0; ok && i < t.ndim(); i++) ok = i == d || t.shape()[i] == first.shape()[i];
    if (!ok)
      fail("Tensor.cat: shapes %s must match except in dimension %d", fmt_shapes(tensors), dim);
  }
  if (tensors.size() == 1) return first;
  std::vector<int64_t> offsets = {0};
  for (const Tensor& t : tensors) offsets.push_back(offsets.back() + t.shape()[d]);
  std::optional<Tensor> out;
  for (size_t i = 0; i < tensors.size(); i++) {
    Tensor p = tensors[i].pad(pad_on(tensors[i], d, offsets[i], offsets.back() - offsets[i + 1]));
    out = out ? out->add(p) : p;
  }
  return *out;
}

Tensor Tensor::cat(std::initializer_list<Tensor> others, int dim) const {
  std::vector<Tensor> all = {*this};
  all.insert(all.end(), others.begin(), others.end());
  return cat(all, dim);
}

Tensor Tensor::stack(const std::vector<Tensor>& tensors, int dim) {
  if (tensors.empty()) fail("Tensor.stack: needs at least one tensor");
  for (const Tensor& t : tensors)
    if (t.shape() != tensors[0].shape())
      fail("Tensor.stack: all shapes must be equal, got %s", fmt_shapes(tensors));
  int d = resolve_dim("stack", tensors[0], dim, true);
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) parts.push_back(t.unsqueeze(d));
  return cat(parts, d);
}

Tensor Tensor::stack(std::initializer_list<Tensor> others, int dim) const {
  std::vector<Tensor> all = {*this};
  all.insert(all.end(), others.begin(), others.end());
  return stack(all, dim);
}

Tensor Tensor::repeat(std::vector<int64_t> repeats) const {
  if (static_cast<int>(repeats.size()) < ndim())
    fail("Tensor.repeat: %d repeats for a tensor of shape %s need at least %d", repeats.size(),
         fmt_shape(shape()), ndim());
  for (int64_t r : repeats)
    if (r < 0) fail("Tensor.repeat: repeats %s must be non-negative", fmt_shape(repeats));
  Shape base(repeats.size() - shape().size(), 1);
  base.insert(base.end(), shape().begin(), shape().end());
  Shape unsq, expanded, final_shape;
  for (size_t i = 0; i < base.size(); i++) {
    unsq.insert(unsq.end(), {1, base[i]});
    expanded.insert(expanded.end(), {repeats[i], base[i]});
    final_shape.push_back(repeats[i] * base[i]);
  }
  return reshape(unsq).expand(expanded).reshape(final_shape);
}

std::vector<Tensor> Tensor::split(int64_t size, int dim) const {
  int d = resolve_dim("split", *this, dim);
  if (ndim() == 0) fail("Tensor.split: a zero-dimensional tensor cannot be split");
  if (size <= 0) fail("Tensor.split: size must be positive, got %d", size);
  int64_t n = shape()[d];
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < std::max<int64_t>(1, n); i += size)
    sizes.push_back(std::min(size, n - i));
  return split(sizes, d);
}

std::vector<Tensor> Tensor::split(std::vector<int64_t> sizes, int dim) const {
  int d = resolve_dim("split", *this, dim);
  if (ndim() == 0) fail("Tensor.split: a zero-dimensional tensor cannot be split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) fail("Tensor.split: sizes %s must be non-negative", fmt_shape(sizes));
    total += s;
  }
  if (total != shape()[d])
    fail("Tensor.split: sizes %s sum to %d, not to dimension %d (size %d) of shape %s",
         fmt_shape(sizes), total, dim, shape()[d], fmt_shape(shape()));
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(shrink(range_on(*this, d, at, at + s)));
    at += s;
  }
  return out;
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int dim) const {
  if (chunks <= 0) fail("Tensor.chunk: chunks must be positive, got %d", chunks);
  int d = resolve_dim("chunk", *this, dim);
  if (ndim() == 0) fail("Tensor.chunk: a zero-dimensional tensor cannot be chunked");
  int64_t n = shape()[d];
  if (n == 0) return split(std::vector<int64_t>(chunks, 0), d);
  return split((n + chunks - 1) / chunks, d);
}

Tensor Tensor::roll(std::vector<int64_t> shifts, std::vector<int> dims) const {
  if (shifts.size() != dims.size())
    fail("Tensor.roll: %d shifts for %d dims", shifts.size(), dims.size());
  Tensor rolled = *this;
  for (size_t i = 0; i < dims.size(); i++) {
    int d = resolve_dim("roll", *this, dims[i]);
    if (ndim() == 0) return *this;
    int64_t n = shape()[d];
    if (n == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;  // Python's %
    if (s == 0) continue;
    std::vector<Tensor> parts = {rolled.shrink(range_on(rolled, d, n - s, n)),
                                 rolled.shrink(range_on(rolled, d, 0, n - s))};
    rolled = cat(parts, d);
  }
  return rolled;
}

Tensor Tensor::roll(int64_t shift, int dim) const {
  return roll(std::vector<int64_t>{shift}, std::vector<int>{dim});
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

// ---------------------------------------------------------------- grids and triangles

std::vector<Tensor> Tensor::meshgrid(const std::vector<Tensor>& tensors,
                                     const std::string& indexing) {
  if (indexing != "ij" && indexing != "xy")
    fail("Tensor.meshgrid: indexing must be \"ij\" or \"xy\", got \"%s\"", indexing);
  for (const Tensor& t : tensors)
    if (t.ndim() > 1)
      fail("Tensor.meshgrid: inputs must be 0-d or 1-d, got shapes %s", fmt_shapes(tensors));
  if (tensors.size() <= 1) return tensors;
  size_t n = tensors.size();
  // tensor i varies along axis i ("xy" swaps the first two axes) and broadcasts along the rest
  auto axis = [&](size_t i) { return indexing == "ij" || i > 1 ? i : 1 - i; };
  Shape out(n, 1);
  for (size_t i = 0; i < n; i++) out[axis(i)] = tensors[i].numel();
  std::vector<Tensor> grids;
  for (size_t i = 0; i < n; i++) {
    Shape s(n, 1);
    s[axis(i)] = tensors[i].numel();
    grids.push_back(tensors[i].reshape(s).expand(out));
  }
  return grids;
}

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

// ---------------------------------------------------------------- creation

Tensor Tensor::linspace(double start, double stop, int64_t steps, DType dtype) {
  if (steps < 0) fail("Tensor.linspace: steps must be non-negative, got %d", steps);
  if (dtypes::is_bool(dtype)) fail("Tensor.linspace: bool dtype is not supported");
  if (steps == 1) return full({1}, start, dtype);
  double step = (stop - start) / static_cast<double>(steps - 1);
  Tensor idx = arange(0, static_cast<double>(steps), 1, dtypes::int32);
  return idx.mul(ConstValue(step)).add(ConstValue(start)).cast(dtype);
}

Tensor Tensor::zeros_like(const Tensor& t, std::optional<DType> dtype) {
  return full(t.shape(), 0, dtype ? *dtype : t.dtype());
}
Tensor Tensor::ones_like(const Tensor& t, std::optional<DType> dtype) {
  return full(t.shape(), 1, dtype ? *dtype : t.dtype());
}
Tensor Tensor::full_like(const Tensor& t, ConstValue value, std::optional<DType> dtype) {
  return full(t.shape(), value, dtype ? *dtype : t.dtype());
}
Tensor Tensor::empty_like(const Tensor& t, std::optional<DType> dtype) {
  return empty(t.shape(), dtype ? *dtype : t.dtype());
}

}  // namespace tc
