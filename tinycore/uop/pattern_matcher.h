// UPat patterns and the PatternMatcher: a table of (pattern, rewrite) rules indexed by op, so a
// node only tries the rules whose pattern can match its op. graph_rewrite applies one to a graph.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tinycore/uop/uop.h"

namespace tc {

class UPat {
 public:
  static UPat var(std::string name = "");   // matches any node
  static UPat cvar(std::string name = "");  // matches any CONST
  static UPat cnst(double value);           // matches a CONST equal to value
  static UPat op(Ops op, std::vector<UPat> src = {}, std::string name = "");
  static UPat ops(std::vector<Ops> ops, std::vector<UPat> src = {}, std::string name = "");
  static UPat any(std::vector<UPat> alternatives);  // matches when one alternative does

  UPat named(std::string name) const;
  UPat dtype(std::vector<DType> ds) const;
  UPat commutative() const;   // a two-source pattern that also matches with sources swapped
  UPat no_src_check() const;  // match the op only, whatever the sources

  // Pattern algebra: `x + c` builds a commutative ADD pattern, as in tinygrad's rule tables.
  friend UPat operator+(const UPat& a, const UPat& b);
  friend UPat operator*(const UPat& a, const UPat& b);
  friend UPat operator/(const UPat& a, const UPat& b);  // IDIV
  friend UPat operator%(const UPat& a, const UPat& b);  // MOD
  friend UPat operator+(const UPat& a, double b) { return a + cnst(b); }
  friend UPat operator*(const UPat& a, double b) { return a * cnst(b); }
  friend UPat operator/(const UPat& a, double b) { return a / cnst(b); }
  friend UPat operator%(const UPat& a, double b) { return a % cnst(b); }

  std::vector<Ops> ops_;                  // empty: any op
  std::vector<DType> dtypes_;             // empty: any dtype
  std::optional<std::vector<UPat>> src_;  // unset: any sources
  std::optional<double> value_;           // CONST value
  std::vector<UPat> any_of_;
  std::string name_;
  bool commutative_ = false;
};

// The named nodes a match bound.
class Captures {
 public:
  const UOpRef& operator[](std::string_view name) const;
  bool has(std::string_view name) const;
  bool bind(const std::string& name, const UOpRef& u);  // false when bound to another node
  size_t size() const { return items_.size(); }
  void truncate(size_t n) { items_.resize(n); }

 private:
  std::vector<std::pair<std::string, UOpRef>> items_;
};

bool match(const UPat& pat, const UOpRef& u, Captures& caps);

class PatternMatcher {
 public:
  // A rule returns the replacement, or nullptr to decline.
  using Fn = std::function<UOpRef(const Captures&)>;
  struct Rule {
    UPat pat;
    Fn fn;
  };

  explicit PatternMatcher(std::vector<Rule> rules);
  PatternMatcher operator+(const PatternMatcher& other) const;

  // The first rule that matches and accepts, or nullptr.
  UOpRef rewrite(const UOpRef& u) const;
  size_t size() const { return rules_.size(); }

 private:
  std::vector<Rule> rules_;
  std::array<std::vector<int>, kNumOps> by_op_;
};

// Rewrites every node of the graph, sources first, until no rule applies anywhere (memoized, so
// a shared node is rewritten once). `name` names the pass: DEBUG=6 prints each named rewrite
// with its node counts before and after and its time.
UOpRef graph_rewrite(const UOpRef& root, const PatternMatcher& pm, std::string_view name);

// `root` with the nodes in `to` replaced by their values (the replaced nodes' own sources are
// not visited); nodes above a replacement are rebuilt, the rest shared.
UOpRef substitute(const UOpRef& root, const absl::flat_hash_map<const UOp*, UOpRef>& to);

}  // namespace tc
