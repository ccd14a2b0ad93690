// Joining and splitting: cat (pad + add), stack, split, chunk, roll, repeat and meshgrid, composed
// from the primitive movement ops as in the seeds' tinygrad: no kernels of their own.
#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "tinycore/tensor.h"
#include "tinycore/tensor/internal.h"

namespace tc {

using detail::Dims;
using detail::fmt_shapes;
using detail::pad_on;
using detail::range_on;
using detail::resolve_dim;

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
  int d = resolve_dim("stack", tensors[0], dim, Dims::kNew);
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

}  // namespace tc
