#include "tinycore/uop/pattern_matcher.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "tinycore/error.h"
#include "tinycore/helpers.h"

namespace tc {

UPat UPat::var(std::string name) {
  UPat p;
  p.name_ = std::move(name);
  return p;
}
UPat UPat::cvar(std::string name) { return op(Ops::CONST, {}, std::move(name)); }
UPat UPat::cnst(double value) {
  UPat p = op(Ops::CONST);
  p.value_ = value;
  return p;
}
UPat UPat::op(Ops op, std::vector<UPat> src, std::string name) {
  return ops({op}, std::move(src), std::move(name));
}
UPat UPat::ops(std::vector<Ops> ops, std::vector<UPat> src, std::string name) {
  UPat p;
  p.ops_ = std::move(ops);
  p.src_ = std::move(src);
  p.name_ = std::move(name);
  return p;
}
UPat UPat::any(std::vector<UPat> alternatives) {
  UPat p;
  p.any_of_ = std::move(alternatives);
  return p;
}
UPat UPat::named(std::string name) const {
  UPat p = *this;
  p.name_ = std::move(name);
  return p;
}
UPat UPat::dtype(std::vector<DType> ds) const {
  UPat p = *this;
  p.dtypes_ = std::move(ds);
  return p;
}
UPat UPat::commutative() const {
  UPat p = *this;
  p.commutative_ = true;
  return p;
}
UPat UPat::no_src_check() const {
  UPat p = *this;
  p.src_.reset();
  return p;
}

UPat operator+(const UPat& a, const UPat& b) { return UPat::op(Ops::ADD, {a, b}).commutative(); }
UPat operator*(const UPat& a, const UPat& b) { return UPat::op(Ops::MUL, {a, b}).commutative(); }
UPat operator/(const UPat& a, const UPat& b) { return UPat::op(Ops::IDIV, {a, b}); }
UPat operator%(const UPat& a, const UPat& b) { return UPat::op(Ops::MOD, {a, b}); }

const UOpRef& Captures::operator[](std::string_view name) const {
  for (const auto& [n, u] : items_)
    if (n == name) return u;
  TC_CHECK(false, "pattern captured no node named ", std::string(name));
  __builtin_unreachable();
}
bool Captures::has(std::string_view name) const {
  return std::any_of(items_.begin(), items_.end(),
                     [&](const auto& it) { return it.first == name; });
}
bool Captures::bind(const std::string& name, const UOpRef& u) {
  for (const auto& [n, v] : items_)
    if (n == name) return v == u;
  items_.emplace_back(name, u);
  return true;
}

namespace {
bool match_sources(const std::vector<UPat>& pats, const std::vector<UOpRef>& src, Captures& caps) {
  if (pats.size() != src.size()) return false;
  size_t mark = caps.size();
  for (size_t i = 0; i < pats.size(); i++) {
    if (!match(pats[i], src[i], caps)) {
      caps.truncate(mark);
      return false;
    }
  }
  return true;
}
}  // namespace

bool match(const UPat& pat, const UOpRef& u, Captures& caps) {
  size_t mark = caps.size();
  if (!pat.any_of_.empty()) {
    bool ok = false;
    for (const UPat& alt : pat.any_of_)
      if ((ok = match(alt, u, caps))) break;
    if (!ok) return false;
    if (!pat.name_.empty() && !caps.bind(pat.name_, u)) return caps.truncate(mark), false;
    return true;
  }
  if (!pat.ops_.empty() && std::find(pat.ops_.begin(), pat.ops_.end(), u->op) == pat.ops_.end())
    return false;
  if (!pat.dtypes_.empty() &&
      std::find(pat.dtypes_.begin(), pat.dtypes_.end(), u->dtype) == pat.dtypes_.end())
    return false;
  if (pat.value_ && !(u->op == Ops::CONST && u->const_value() == *pat.value_)) return false;
  if (!pat.name_.empty() && !caps.bind(pat.name_, u)) return false;
  if (!pat.src_) return true;
  if (match_sources(*pat.src_, u->src, caps)) return true;
  if (pat.commutative_ && u->src.size() == 2 &&
      match_sources(*pat.src_, {u->src[1], u->src[0]}, caps))
    return true;
  caps.truncate(mark);
  return false;
}

namespace {
// The ops a pattern can match at its root; empty means all.
std::vector<Ops> root_ops(const UPat& p) {
  if (p.any_of_.empty()) return p.ops_;
  std::vector<Ops> out;
  for (const UPat& alt : p.any_of_) {
    std::vector<Ops> a = root_ops(alt);
    if (a.empty()) return {};
    out.insert(out.end(), a.begin(), a.end());
  }
  return out;
}
}  // namespace

PatternMatcher::PatternMatcher(std::vector<Rule> rules) : rules_(std::move(rules)) {
  for (int i = 0; i < static_cast<int>(rules_.size()); i++) {
    std::vector<Ops> ops = root_ops(rules_[i].pat);
    if (ops.empty())
      for (auto& list : by_op_) list.push_back(i);
    for (Ops op : ops) {
      auto& list = by_op_[static_cast<int>(op)];
      if (list.empty() || list.back() != i) list.push_back(i);
    }
  }
}

PatternMatcher PatternMatcher::operator+(const PatternMatcher& other) const {
  std::vector<Rule> all = rules_;
  all.insert(all.end(), other.rules_.begin(), other.rules_.end());
  return PatternMatcher(std::move(all));
}

UOpRef PatternMatcher::rewrite(const UOpRef& u) const {
  for (int i : by_op_[static_cast<int>(u->op)]) {
    Captures caps;
    if (!match(rules_[i].pat, u, caps)) continue;
    if (UOpRef r = rules_[i].fn(caps); r && r != u) return r;
  }
  return nullptr;
}

namespace {
class Rewriter {
 public:
  explicit Rewriter(const PatternMatcher& pm) : pm_(pm) {}

  UOpRef rewrite(const UOpRef& n, int depth = 0) {
    if (auto it = memo_.find(n.get()); it != memo_.end()) return it->second;
    TC_CHECK(depth < 10000, "graph_rewrite did not reach a fixed point (rules loop?) at ",
             op_name(n->op));
    std::vector<UOpRef> src;
    src.reserve(n->src.size());
    for (const UOpRef& s : n->src) src.push_back(rewrite(s, depth + 1));
    UOpRef x = n->replace(std::move(src));
    UOpRef out = x;
    if (UOpRef r = pm_.rewrite(x)) out = rewrite(r, depth + 1);
    memo_[n.get()] = out;
    memo_[x.get()] = out;
    keep_.push_back(n);  // keys must stay alive while the memo holds their addresses
    keep_.push_back(x);
    return out;
  }

 private:
  const PatternMatcher& pm_;
  absl::flat_hash_map<const UOp*, UOpRef> memo_;
  std::vector<UOpRef> keep_;
};
}  // namespace

UOpRef graph_rewrite(const UOpRef& root, const PatternMatcher& pm, std::string_view name) {
  if (debug_level() < 6) return Rewriter(pm).rewrite(root);
  auto start = std::chrono::steady_clock::now();
  UOpRef out = Rewriter(pm).rewrite(root);
  std::printf(
      "rewrite %-14.*s %6zu -> %6zu nodes  %8.3f ms\n", static_cast<int>(name.size()), name.data(),
      root->toposort().size(), out->toposort().size(),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return out;
}

namespace {
UOpRef substitute_memoized(const UOpRef& root, const absl::flat_hash_map<const UOp*, UOpRef>& to,
                           absl::flat_hash_map<const UOp*, UOpRef>& memo) {
  if (auto it = to.find(root.get()); it != to.end()) return it->second;
  if (auto it = memo.find(root.get()); it != memo.end()) return it->second;
  std::vector<UOpRef> src;
  bool changed = false;
  for (const UOpRef& s : root->src) {
    src.push_back(substitute_memoized(s, to, memo));
    changed = changed || src.back() != s;
  }
  UOpRef out = changed ? root->replace(std::move(src)) : root;
  memo[root.get()] = out;
  return out;
}

}  // namespace

UOpRef substitute(const UOpRef& root, const absl::flat_hash_map<const UOp*, UOpRef>& to) {
  absl::flat_hash_map<const UOp*, UOpRef> memo;
  return substitute_memoized(root, to, memo);
}

}  // namespace tc
