// Tensor::rearrange in einops notation ("b c (h w) -> b (c h) w"): the formula becomes unflatten,
// permute and flatten, so the result is a view.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tinycore/tensor.h"

namespace tc {
namespace {

// Tokens of one side of a rearrange formula: names, with the (start, end) name positions of each
// parenthesized group ("1" is an empty group).
std::pair<std::vector<std::string>, std::vector<std::pair<int, int>>> parse_side(
    const std::string& formula, const std::string& side) {
  std::vector<std::string> names;
  std::vector<std::pair<int, int>> groups;
  int open = -1;
  std::string word;
  auto flush = [&]() {
    if (word.empty()) return;
    if (word == "1") {
      if (open >= 0) fail("Tensor.rearrange: \"1\" inside a group in %s", formula);
      groups.push_back({static_cast<int>(names.size()), static_cast<int>(names.size())});
    } else {
      names.push_back(word == "\xe2\x80\xa6" ? "..." : word);
    }
    word.clear();
  };
  for (char c : side) {
    if (c == '(' || c == ')' || c == ' ' || c == '\t') {
      flush();
      if (c == '(') {
        if (open >= 0) fail("Tensor.rearrange: bracket mismatch (nested) in %s", formula);
        open = static_cast<int>(names.size());
      } else if (c == ')') {
        if (open < 0) fail("Tensor.rearrange: bracket mismatch in %s", formula);
        groups.push_back({open, static_cast<int>(names.size())});
        open = -1;
      }
    } else {
      word += c;
    }
  }
  flush();
  if (open >= 0) fail("Tensor.rearrange: bracket mismatch (unclosed) in %s", formula);
  return {names, groups};
}

bool valid_axis_name(const std::string& n) {
  if (n == "...") return true;
  if (n.empty() || n.front() == '_' || n.back() == '_') return false;
  if (std::isdigit(static_cast<unsigned char>(n[0]))) return false;
  for (char c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

}  // namespace

Tensor Tensor::rearrange(const std::string& formula,
                         const std::vector<std::pair<std::string, int64_t>>& sizes) const {
  size_t arrow = formula.find("->");
  if (arrow == std::string::npos || formula.find("->", arrow + 2) != std::string::npos)
    fail("Tensor.rearrange: need exactly one \"->\" in formula \"%s\"", formula);
  auto [lhs, unflatten_dims] = parse_side(formula, formula.substr(0, arrow));
  auto [rhs, flatten_dims] = parse_side(formula, formula.substr(arrow + 2));
  for (const auto& [name, size] : sizes)
    if (std::find(lhs.begin(), lhs.end(), name) == lhs.end())
      fail("Tensor.rearrange: axis %s is not used in transform \"%s\"", name, formula);
  std::vector<std::string> sl = lhs, sr = rhs;
  std::sort(sl.begin(), sl.end());
  std::sort(sr.begin(), sr.end());
  if (sl != sr || std::adjacent_find(sl.begin(), sl.end()) != sl.end())
    fail("Tensor.rearrange: name mismatch in \"%s\"", formula);
  for (const std::vector<std::string>* side : {&lhs, &rhs})
    for (const std::string& n : *side)
      if (!valid_axis_name(n)) fail("Tensor.rearrange: invalid axis name %s in \"%s\"", n, formula);
  for (auto [s, e] : unflatten_dims)
    for (int i = s; i < e; i++)
      if (lhs[i] == "...")
        fail("Tensor.rearrange: cannot have collapsed ellipsis (...) in lhs of \"%s\"", formula);
  int grouped = 0;  // names that share a dimension with the one before them
  for (auto [s, e] : unflatten_dims) grouped += e - s - 1;
  int lhs_dims = static_cast<int>(lhs.size()) - grouped;
  auto ell = std::find(lhs.begin(), lhs.end(), "...");
  int ell_len = 0;
  if (ell != lhs.end()) {
    ell_len = ndim() - (lhs_dims - 1);
    if (ell_len < 0)
      fail("Tensor.rearrange: \"%s\" needs at least %d dimensions, the tensor has shape %s",
           formula, lhs_dims - 1, fmt_shape(shape()));
  } else if (lhs_dims != ndim()) {
    fail("Tensor.rearrange: \"%s\" has %d dimensions on the left, the tensor has shape %s", formula,
         lhs_dims, fmt_shape(shape()));
  }
  // the ellipsis becomes ell_len names ...0, ...1; group positions after it move
  auto expand_ell = [&](std::vector<std::string>& names, std::vector<std::pair<int, int>>& groups) {
    auto it = std::find(names.begin(), names.end(), "...");
    if (it == names.end()) return;
    int at = static_cast<int>(it - names.begin());
    std::vector<std::string> repl;
    for (int j = 0; j < ell_len; j++) repl.push_back("..." + std::to_string(j));
    names.erase(it);
    names.insert(names.begin() + at, repl.begin(), repl.end());
    for (auto& [s, e] : groups) {
      if (s > at) s += ell_len - 1;
      if (e > at) e += ell_len - 1;
    }
  };
  expand_ell(lhs, unflatten_dims);
  expand_ell(rhs, flatten_dims);
  auto size_of = [&](const std::string& n) -> std::optional<int64_t> {
    for (const auto& [name, size] : sizes)
      if (name == n) return size;
    return std::nullopt;
  };
  Tensor t = *this;
  try {
    for (auto [s, e] : unflatten_dims) {
      Shape parts;
      for (int i = s; i < e; i++) parts.push_back(size_of(lhs[i]).value_or(-1));
      t = t.unflatten(s, parts);
    }
  } catch (const Error& err) {
    fail("Tensor.rearrange: \"%s\" does not fit shape %s: %s", formula, fmt_shape(shape()),
         err.what());
  }
  for (size_t i = 0; i < lhs.size(); i++)
    if (auto sz = size_of(lhs[i]); sz && *sz != t.shape()[i])
      fail("Tensor.rearrange: size %d provided for dimension %s is incorrect (it is %d) in \"%s\"",
           *sz, lhs[i], t.shape()[i], formula);
  std::vector<int> order;
  for (const std::string& n : rhs)
    order.push_back(static_cast<int>(std::find(lhs.begin(), lhs.end(), n) - lhs.begin()));
  t = t.permute(order);
  for (auto it = flatten_dims.rbegin(); it != flatten_dims.rend(); ++it)
    t = it->first < it->second ? t.flatten(it->first, it->second - 1) : t.unsqueeze(it->first);
  return t;
}

}  // namespace tc
