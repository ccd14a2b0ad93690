// Tensor::einsum: every operand is brought to one shared axis order (diagonals of repeated
// letters taken as views, permuted, reshaped with size-1 axes for the letters it lacks), the
// operands are multiplied with broadcasting and the letters not in the output are summed:
// movement ops, one elementwise chain and one reduce, as in the seeds' tinygrad.
#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "tinycore/tensor.h"
#include "tinycore/tensor/internal.h"

namespace tc {

using detail::fmt_shapes;

namespace {

// A subscript label: a letter's char code, or kEllipsis + j for the j-th axis of the broadcast
// "..." counted from its right end.
constexpr int kEllipsis = 1000;

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The labels of one subscript string; `ell` is the number of axes "..." stands for (0 if absent).
std::vector<int> labels_of(const std::string& formula, const std::string& sub, int ell) {
  std::vector<int> out;
  bool seen_ellipsis = false;
  for (size_t i = 0; i < sub.size(); i++) {
    if (sub.compare(i, 3, "...") == 0) {
      if (seen_ellipsis)
        fail("Tensor.einsum: \"...\" appears twice in \"%s\" of \"%s\"", sub, formula);
      seen_ellipsis = true;
      for (int j = ell - 1; j >= 0; j--) out.push_back(kEllipsis + j);
      i += 2;
    } else if (is_letter(sub[i])) {
      out.push_back(sub[i]);
    } else {
      fail("Tensor.einsum: invalid character '%c' in \"%s\" (subscripts are letters and \"...\")",
           sub[i], formula);
    }
  }
  return out;
}

int letter_count(const std::string& sub) {
  int n = 0;
  for (char c : sub) n += is_letter(c);
  return n;
}

// The diagonal over the last two axes of t (both of size n): (..., n, n) -> (..., n), a view.
Tensor diagonal_last2(const Tensor& t) {
  int64_t n = t.shape().back();
  Shape lead(t.shape().begin(), t.shape().end() - 2);
  std::vector<std::pair<int64_t, int64_t>> pad(lead.size() + 1, {0, 0}), keep;
  pad.back() = {0, n};
  for (int64_t d : lead) keep.push_back({0, d});
  keep.push_back({0, n});
  keep.push_back({0, 1});
  Shape flat = lead, rows = lead;
  flat.push_back(n * n);
  rows.insert(rows.end(), {n, n + 1});
  Shape out = lead;
  out.push_back(n);
  return t.reshape(flat).pad(pad).reshape(rows).shrink(keep).reshape(out);
}

}  // namespace

Tensor Tensor::einsum(const std::string& formula_in, const std::vector<Tensor>& xs,
                      std::optional<DType> dtype) {
  std::string formula;
  for (char c : formula_in)
    if (c != ' ') formula += c;
  size_t arrow = formula.find("->");
  std::string lhs = arrow == std::string::npos ? formula : formula.substr(0, arrow);
  std::vector<std::string> inputs = absl::StrSplit(lhs, ',');
  if (inputs.size() != xs.size())
    fail("Tensor.einsum: \"%s\" has %d inputs, got %d operands of shapes %s", formula_in,
         inputs.size(), xs.size(), fmt_shapes(xs));
  // subscripts of each operand, "..." expanded to the axes it covers
  std::vector<std::vector<int>> subs;
  int ell_longest = 0;
  for (size_t k = 0; k < xs.size(); k++) {
    bool has_ell = inputs[k].find("...") != std::string::npos;
    int letters = letter_count(inputs[k]);
    int ell = has_ell ? xs[k].ndim() - letters : 0;
    std::vector<int> labels = labels_of(formula_in, inputs[k], std::max(ell, 0));
    if ((has_ell && ell < 0) || (!has_ell && letters != xs[k].ndim()))
      fail("Tensor.einsum: subscripts \"%s\" of \"%s\" do not match operand %d of shape %s",
           inputs[k], formula_in, k, fmt_shape(xs[k].shape()));
    ell_longest = std::max(ell_longest, ell);
    subs.push_back(std::move(labels));
  }
  // the size of every label; "..." axes broadcast (size 1 against n)
  std::map<int, int64_t> size;
  for (size_t k = 0; k < xs.size(); k++) {
    for (size_t a = 0; a < subs[k].size(); a++) {
      int l = subs[k][a];
      int64_t d = xs[k].shape()[a];
      auto it = size.find(l);
      if (it == size.end()) {
        size[l] = d;
      } else if (it->second != d) {
        if (l >= kEllipsis && (d == 1 || it->second == 1)) {
          it->second = std::max(d, it->second);
        } else if (l >= kEllipsis) {
          fail("Tensor.einsum: \"...\" of \"%s\" covers axes that do not broadcast in shapes %s",
               formula_in, fmt_shapes(xs));
        } else {
          fail("Tensor.einsum: letter '%c' of \"%s\" has sizes %d and %d in shapes %s", l,
               formula_in, it->second, d, fmt_shapes(xs));
        }
      }
    }
  }
  // the output labels
  std::vector<int> out;
  if (arrow != std::string::npos) {
    std::string rhs = formula.substr(arrow + 2);
    if (rhs.find("->") != std::string::npos)
      fail("Tensor.einsum: \"%s\" has more than one \"->\"", formula_in);
    out = labels_of(formula_in, rhs, ell_longest);
    for (size_t i = 0; i < out.size(); i++) {
      if (std::count(out.begin(), out.end(), out[i]) > 1)
        fail("Tensor.einsum: output letter '%c' appears twice in \"%s\"", out[i], formula_in);
      if (!size.count(out[i]))
        fail("Tensor.einsum: output letter '%c' of \"%s\" is in no input", out[i], formula_in);
    }
  } else {
    // implicit: the "..." axes, then the letters that appear once, in alphabetical order
    for (int j = ell_longest - 1; j >= 0; j--) out.push_back(kEllipsis + j);
    std::map<int, int> count;
    for (const auto& s : subs)
      for (int l : s) count[l]++;
    for (const auto& [l, c] : count)  // std::map: sorted by char code, as Python's sorted()
      if (l < kEllipsis && c == 1) out.push_back(l);
  }
  // the shared axis order: the output labels, then the summed ones
  std::vector<int> order = out;
  for (const auto& [l, d] : size)
    if (std::find(out.begin(), out.end(), l) == out.end()) order.push_back(l);
  std::optional<Tensor> prod;
  for (size_t k = 0; k < xs.size(); k++) {
    Tensor x = xs[k];
    std::vector<int> labels = subs[k];
    // a repeated letter: the diagonal of its two axes
    for (size_t a = 0; a < labels.size(); a++) {
      for (size_t b = a + 1; b < labels.size(); b++) {
        if (labels[a] != labels[b]) continue;
        std::vector<int> perm;
        for (size_t i = 0; i < labels.size(); i++)
          if (i != a && i != b) perm.push_back(static_cast<int>(i));
        perm.push_back(static_cast<int>(a));
        perm.push_back(static_cast<int>(b));
        x = diagonal_last2(x.permute(perm));
        std::vector<int> rest;
        for (int p : perm) rest.push_back(labels[p]);
        rest.pop_back();
        labels = rest;
        a = static_cast<size_t>(-1);  // start over
        break;
      }
    }
    // permute to the shared order, then size-1 axes for the letters this operand lacks
    std::vector<int> perm;
    Shape shape;
    for (int l : order) {
      auto it = std::find(labels.begin(), labels.end(), l);
      if (it != labels.end()) {
        perm.push_back(static_cast<int>(it - labels.begin()));
        shape.push_back(x.shape()[it - labels.begin()]);
      } else {
        shape.push_back(1);
      }
    }
    x = x.permute(perm).reshape(shape);
    prod = prod ? prod->mul(x) : x;
  }
  Shape full;
  for (int l : order) full.push_back(size[l]);
  Tensor p = prod->expand(full);
  if (dtype) p = p.cast(*dtype);
  std::vector<int> summed;
  for (size_t i = out.size(); i < order.size(); i++) summed.push_back(static_cast<int>(i));
  return p.sum(summed);  // no axes: just the accumulation dtype's cast, as tinygrad
}

}  // namespace tc
