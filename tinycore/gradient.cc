#include "tinycore/gradient.h"

#include <array>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "tinycore/error.h"
#include "tinycore/runtime/host_function.h"
#include "tinycore/schedule/multi.h"
#include "tinycore/schedule/schedule.h"

namespace tc {
namespace {

// ---------------------------------------------------------------- UOp builders
// Gradients are plain tensor-level UOp graphs: elementwise operands have equal shapes (constants
// are broadcast with RESHAPE + EXPAND, as Tensor does), movement and reduce args as in uop.h.

UOpRef const_like(const UOpRef& like, double v) {
  UOpRef c = UOp::const_(like->dtype, v);
  const Shape& s = like->shape();
  if (s.empty()) return c;
  Shape ones(s.size(), 1);
  UOpRef r = UOp::make(Ops::RESHAPE, like->dtype, {c}, ones);
  return s == ones ? r : UOp::make(Ops::EXPAND, like->dtype, {r}, s);
}

UOpRef unary(Ops op, const UOpRef& x) { return UOp::make(op, x->dtype, {x}); }

UOpRef binary(Ops op, const UOpRef& a, const UOpRef& b) {
  TC_CHECK(a->shape() == b->shape() && a->dtype == b->dtype, "gradient: ", op_name(op),
           " operands differ in shape or dtype");
  DType out = group::is_comparison(op) ? dtypes::bool_ : a->dtype;
  return UOp::make(op, out, {a, b});
}
UOpRef add(const UOpRef& a, const UOpRef& b) { return binary(Ops::ADD, a, b); }
UOpRef mul(const UOpRef& a, const UOpRef& b) { return binary(Ops::MUL, a, b); }
UOpRef mul(const UOpRef& a, double b) { return mul(a, const_like(a, b)); }
UOpRef neg(const UOpRef& a) { return unary(Ops::NEG, a); }
UOpRef recip(const UOpRef& a) { return unary(Ops::RECIP, a); }
UOpRef select(const UOpRef& c, const UOpRef& a, const UOpRef& b) {
  return UOp::make(Ops::WHERE, a->dtype, {c, a, b});
}
UOpRef cast(const UOpRef& x, DType d) { return x->dtype == d ? x : UOp::make(Ops::CAST, d, {x}); }

UOpRef reshape(const UOpRef& x, const Shape& s) {
  if (x->shape() == s) return x;
  const UOpRef& base = x->op == Ops::RESHAPE ? x->src[0] : x;  // reshape of reshape is one
  if (base->shape() == s) return base;
  return UOp::make(Ops::RESHAPE, x->dtype, {base}, s);
}
UOpRef expand(const UOpRef& x, const Shape& s) {
  return x->shape() == s ? x : UOp::make(Ops::EXPAND, x->dtype, {x}, s);
}
// Sum over `axes` (sorted, keepdim).
UOpRef sum(const UOpRef& x, const std::vector<int64_t>& axes) {
  if (axes.empty()) return x;
  std::vector<int64_t> arg = {static_cast<int64_t>(Ops::ADD)};
  arg.insert(arg.end(), axes.begin(), axes.end());
  return UOp::make(Ops::REDUCE_AXIS, x->dtype, {x}, arg);
}

// ---------------------------------------------------------------- registered rules

struct RuleRegistry {
  std::mutex mu;
  std::deque<GradientRule> rules;  // a deque: references stay valid while others are added
  std::map<std::string, int64_t> keyed;
};
RuleRegistry& registry() {
  static RuleRegistry r;
  return r;
}
const GradientRule& registered_rule(int64_t id) {
  RuleRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  TC_CHECK(id >= 0 && id < static_cast<int64_t>(r.rules.size()), "no gradient rule ", id);
  return r.rules[id];
}

// ---------------------------------------------------------------- the rule table
// A rule gets the node and the gradient flowing into it, and returns one gradient per source
// (nullptr: none flows to that source).

using Rule = std::function<std::vector<UOpRef>(const UOpRef& ret, const UOpRef& g)>;

std::array<Rule, kNumOps> make_rules() {
  std::array<Rule, kNumOps> t;
  auto def = [&t](std::initializer_list<Ops> ops, Rule r) {
    for (Ops op : ops) t[static_cast<int>(op)] = r;
  };
  // leaves
  def({Ops::BUFFER, Ops::CONST, Ops::IOTA},
      [](const UOpRef&, const UOpRef&) { return std::vector<UOpRef>{}; });
  // no gradient: piecewise constant or not differentiable
  def({Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ, Ops::AND, Ops::OR, Ops::XOR, Ops::SHL, Ops::SHR,
       Ops::IDIV, Ops::MOD, Ops::TRUNC, Ops::BITCAST},
      [](const UOpRef& ret, const UOpRef&) { return std::vector<UOpRef>(ret->src.size()); });

  // elementwise
  def({Ops::ADD}, [](const UOpRef&, const UOpRef& g) { return std::vector<UOpRef>{g, g}; });
  def({Ops::SUB}, [](const UOpRef&, const UOpRef& g) { return std::vector<UOpRef>{g, neg(g)}; });
  def({Ops::MUL}, [](const UOpRef& ret, const UOpRef& g) {
    return std::vector<UOpRef>{mul(ret->src[1], g), mul(ret->src[0], g)};
  });
  def({Ops::FDIV}, [](const UOpRef& ret, const UOpRef& g) {  // d(a/b) = g/b, -g*(a/b)/b
    UOpRef rb = recip(ret->src[1]);
    return std::vector<UOpRef>{mul(g, rb), neg(mul(mul(g, ret), rb))};
  });
  def({Ops::NEG}, [](const UOpRef&, const UOpRef& g) { return std::vector<UOpRef>{neg(g)}; });
  def({Ops::RECIP}, [](const UOpRef& ret, const UOpRef& g) {  // d(1/x) = -1/x^2 = -ret^2
    return std::vector<UOpRef>{neg(mul(mul(g, ret), ret))};
  });
  def({Ops::SQRT}, [](const UOpRef& ret, const UOpRef& g) {  // 1 / (2 sqrt(x))
    return std::vector<UOpRef>{mul(g, recip(mul(ret, 2.0)))};
  });
  def({Ops::EXP2}, [](const UOpRef& ret, const UOpRef& g) {  // 2^x ln 2
    return std::vector<UOpRef>{mul(mul(ret, g), M_LN2)};
  });
  def({Ops::EXP}, [](const UOpRef& ret, const UOpRef& g) {  // e^x
    return std::vector<UOpRef>{mul(ret, g)};
  });
  def({Ops::LOG2}, [](const UOpRef& ret, const UOpRef& g) {  // 1 / (x ln 2)
    return std::vector<UOpRef>{mul(g, recip(mul(ret->src[0], M_LN2)))};
  });
  def({Ops::SIN}, [](const UOpRef& ret, const UOpRef& g) {  // cos x = sin(pi/2 - x)
    const UOpRef& x = ret->src[0];
    return std::vector<UOpRef>{mul(unary(Ops::SIN, add(const_like(x, M_PI / 2), neg(x))), g)};
  });
  def({Ops::MAX}, [](const UOpRef& ret, const UOpRef& g) {
    // to the larger operand; a tie splits the gradient in half (as tinygrad)
    const UOpRef &x = ret->src[0], &y = ret->src[1];
    UOpRef tie = select(binary(Ops::CMPEQ, x, y), mul(g, 0.5), const_like(g, 0));
    return std::vector<UOpRef>{select(binary(Ops::CMPLT, y, x), g, tie),
                               select(binary(Ops::CMPLT, x, y), g, tie)};
  });
  def({Ops::WHERE}, [](const UOpRef& ret, const UOpRef& g) {  // to the branches, not the condition
    const UOpRef& c = ret->src[0];
    UOpRef zero = const_like(g, 0);
    return std::vector<UOpRef>{nullptr, select(c, g, zero), select(c, zero, g)};
  });
  def({Ops::CAST}, [](const UOpRef& ret, const UOpRef& g) {
    if (is_detach(*ret)) return std::vector<UOpRef>{nullptr};
    return std::vector<UOpRef>{cast(g, ret->src[0]->dtype)};
  });
  def({Ops::CONTIGUOUS}, [](const UOpRef&, const UOpRef& g) { return std::vector<UOpRef>{g}; });
  def({Ops::MULTI}, [](const UOpRef& ret, const UOpRef& g) {
    // each piece its part of the whole's gradient; a whole copy's goes to the first copy alone
    schedule::Sharding s = schedule::sharding_of(*ret);
    std::vector<UOpRef> out(ret->src.size());
    // a gradient on one device (it came through a copy to one) goes to each piece's device
    auto to_piece = [&](const UOpRef& x, size_t d) {
      return schedule::may_hold_multi({g}) ? x : schedule::placed(x, s.devices[d]);
    };
    if (s.axis < 0) {
      out[0] = to_piece(g, 0);
      return out;
    }
    int64_t at = 0;
    for (size_t d = 0; d < ret->src.size(); d++) {
      std::vector<int64_t> arg;
      for (int a = 0; a < static_cast<int>(g->shape().size()); a++) {
        int64_t len = ret->src[d]->shape()[a];
        arg.push_back(a == s.axis ? at : 0);
        arg.push_back(a == s.axis ? at + len : len);
      }
      at += ret->src[d]->shape()[s.axis];
      out[d] = to_piece(UOp::make(Ops::SHRINK, g->dtype, {g}, arg), d);
    }
    return out;
  });
  def({Ops::COPY}, [](const UOpRef& ret, const UOpRef& g) {
    // back where the source was; a multi-device source takes it as it is (split as needed)
    const UOpRef& x = ret->src[0];
    if (schedule::may_hold_multi({x})) return std::vector<UOpRef>{g};
    return std::vector<UOpRef>{schedule::placed(g, schedule::device_of(x))};
  });
  def({Ops::CUSTOM}, [](const UOpRef& ret, const UOpRef& g) {
    const std::string& name = std::get<std::string>(ret->arg);
    const std::string& grad = runtime::host_function(name).gradient;
    if (grad.empty() || ret->src.size() != 1)
      fail("gradient: the host function '%s' has no gradient", name);
    return std::vector<UOpRef>{UOp::make(Ops::CUSTOM, g->dtype, {g}, grad)};
  });
  def({Ops::CUSTOM_GRAD}, [](const UOpRef& ret, const UOpRef& g) {
    std::vector<UOpRef> out = {nullptr};  // none through the value's own (detached) graph
    for (UOpRef& s : registered_rule(ret->arg_int())(ret, g)) out.push_back(std::move(s));
    return out;
  });

  // reductions (keepdim: the result has the source's rank)
  def({Ops::REDUCE_AXIS}, [](const UOpRef& ret, const UOpRef& g) {
    const UOpRef& x = ret->src[0];
    const std::vector<int64_t>& a = ret->arg_ints();
    Ops op = static_cast<Ops>(a[0]);
    if (op == Ops::ADD) return std::vector<UOpRef>{expand(g, x->shape())};
    std::vector<int64_t> axes(a.begin() + 1, a.end());
    if (op == Ops::MUL) {
      // d(prod)/dx_i is the product of the others. tinygrad's ret/x is 0/0 at a zero, so:
      // with p the product of the non-zero elements and k the number of zeros among the others,
      // the product of the others is p / x_i when k == 0 (x_i itself may be the one zero: then
      // it is replaced by 1) and 0 when k > 0. Exact at zeros; one division otherwise.
      UOpRef zero = const_like(x, 0), one = const_like(x, 1);
      UOpRef is_zero = binary(Ops::CMPEQ, x, zero);
      UOpRef nonzero = select(is_zero, one, x);
      std::vector<int64_t> parg = {static_cast<int64_t>(Ops::MUL)};
      parg.insert(parg.end(), axes.begin(), axes.end());
      UOpRef p = expand(UOp::make(Ops::REDUCE_AXIS, x->dtype, {nonzero}, parg), x->shape());
      UOpRef zeros = cast(is_zero, x->dtype);
      UOpRef others = add(expand(sum(zeros, axes), x->shape()), neg(zeros));
      UOpRef excl = select(binary(Ops::CMPEQ, others, zero), mul(p, recip(nonzero)), zero);
      return std::vector<UOpRef>{mul(excl, expand(g, x->shape()))};
    }
    if (op != Ops::MAX) fail("gradient: no gradient rule for REDUCE_AXIS %s", op_name(op));
    // to every position equal to the max, split evenly between ties (as tinygrad)
    UOpRef mask = cast(binary(Ops::CMPEQ, x, expand(ret, x->shape())), g->dtype);
    UOpRef count = expand(sum(mask, axes), x->shape());
    return std::vector<UOpRef>{mul(mul(mask, recip(count)), expand(g, x->shape()))};
  });

  // movement: the inverse movement
  def({Ops::RESHAPE}, [](const UOpRef& ret, const UOpRef& g) {
    return std::vector<UOpRef>{reshape(g, ret->src[0]->shape())};
  });
  def({Ops::PERMUTE}, [](const UOpRef& ret, const UOpRef& g) {
    const std::vector<int64_t>& p = ret->arg_ints();
    std::vector<int64_t> inv(p.size());
    for (size_t i = 0; i < p.size(); i++) inv[p[i]] = static_cast<int64_t>(i);
    return std::vector<UOpRef>{UOp::make(Ops::PERMUTE, g->dtype, {g}, inv)};
  });
  def({Ops::EXPAND}, [](const UOpRef& ret, const UOpRef& g) {  // sum the expanded axes
    const Shape& in = ret->src[0]->shape();
    std::vector<int64_t> axes;
    for (size_t i = 0; i < in.size(); i++)
      if (in[i] != ret->shape()[i]) axes.push_back(static_cast<int64_t>(i));
    return std::vector<UOpRef>{sum(g, axes)};
  });
  def({Ops::PAD}, [](const UOpRef& ret, const UOpRef& g) {  // keep the unpadded part
    const Shape& in = ret->src[0]->shape();
    const std::vector<int64_t>& a = ret->arg_ints();
    std::vector<int64_t> arg;
    for (size_t i = 0; i < in.size(); i++) {
      arg.push_back(a[2 * i]);
      arg.push_back(a[2 * i] + in[i]);
    }
    return std::vector<UOpRef>{UOp::make(Ops::SHRINK, g->dtype, {g}, arg)};
  });
  def({Ops::SHRINK}, [](const UOpRef& ret, const UOpRef& g) {  // zeros where it was cut off
    const Shape& in = ret->src[0]->shape();
    const std::vector<int64_t>& a = ret->arg_ints();
    std::vector<int64_t> arg;
    for (size_t i = 0; i < in.size(); i++) {
      arg.push_back(a[2 * i]);
      arg.push_back(in[i] - a[2 * i + 1]);
    }
    return std::vector<UOpRef>{UOp::make(Ops::PAD, g->dtype, {g}, arg)};
  });
  def({Ops::FLIP}, [](const UOpRef& ret, const UOpRef& g) {
    return std::vector<UOpRef>{UOp::make(Ops::FLIP, g->dtype, {g}, ret->arg)};
  });
  return t;
}

const std::array<Rule, kNumOps>& rules() {
  static const std::array<Rule, kNumOps> t = make_rules();
  return t;
}

// The nodes (sources before users) reachable from `root` through nodes that pass `gate`; a node
// that fails it is neither listed nor entered.
std::vector<const UOp*> gated_toposort(const UOp* root,
                                       const std::function<bool(const UOp*)>& gate) {
  std::vector<const UOp*> order;
  if (!gate(root)) return order;
  absl::flat_hash_set<const UOp*> seen = {root};
  std::vector<std::pair<const UOp*, size_t>> stack = {{root, 0}};
  while (!stack.empty()) {
    auto& [u, i] = stack.back();
    if (i < u->src.size()) {
      const UOp* s = u->src[i++].get();
      if (gate(s) && seen.insert(s).second) stack.push_back({s, 0});
      continue;
    }
    order.push_back(u);
    stack.pop_back();
  }
  return order;
}

}  // namespace

int64_t register_gradient_rule(GradientRule rule) {
  RuleRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.rules.push_back(std::move(rule));
  return static_cast<int64_t>(r.rules.size()) - 1;
}

int64_t gradient_rule_for(const std::string& key, const std::function<GradientRule()>& make) {
  RuleRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto [it, fresh] = r.keyed.try_emplace(key, 0);
  if (fresh) {
    r.rules.push_back(make());
    it->second = static_cast<int64_t>(r.rules.size()) - 1;
  }
  return it->second;
}

UOpRef with_gradient_rule(const UOpRef& value, const std::vector<UOpRef>& inputs, int64_t rule) {
  std::vector<UOpRef> src = {value};
  src.insert(src.end(), inputs.begin(), inputs.end());
  return UOp::make(Ops::CUSTOM_GRAD, value->dtype, std::move(src), rule);
}

UOpRef detach(const UOpRef& x) { return UOp::make(Ops::DETACH, x->dtype, {x}); }
bool is_detach(const UOp& u) { return u.op == Ops::DETACH; }

std::vector<UOpRef> source_gradients(const UOpRef& ret, const UOpRef& grad) {
  const Rule& rule = rules()[static_cast<int>(ret->op)];
  if (!rule) fail("gradient: no gradient rule for %s", op_name(ret->op));
  std::vector<UOpRef> out = rule(ret, grad);
  TC_CHECK(out.size() == ret->src.size(), "gradient rule for ", op_name(ret->op), " returned ",
           out.size(), " gradients for ", ret->src.size(), " sources");
  return out;
}

GradientMap compute_gradient(const UOpRef& root, const UOpRef& root_grad,
                             const std::vector<UOpRef>& targets) {
  TC_CHECK(root_grad->shape() == root->shape() && root_grad->dtype == root->dtype,
           "compute_gradient: the root gradient must match the root's shape and dtype");
  absl::flat_hash_set<const UOp*> target_set;
  for (const UOpRef& t : targets) target_set.insert(t.get());

  // a node is on a target path when one of its sources is a target or on a target path
  absl::flat_hash_map<const UOp*, bool> on_path;
  for (const UOp* u : root->toposort()) {
    bool p = false;
    for (const UOpRef& s : u->src) p = p || target_set.contains(s.get()) || on_path[s.get()];
    on_path[u] = p;
  }
  // gradients flow only along target paths, and never through a detach
  std::vector<const UOp*> walk =
      gated_toposort(root.get(), [&](const UOp* u) { return on_path[u] && !is_detach(*u); });

  GradientMap grads;
  grads[root.get()] = root_grad;
  for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
    const UOp* u = *it;
    auto g = grads.find(u);
    if (g == grads.end()) continue;
    std::vector<UOpRef> local = source_gradients(u->ref(), g->second);
    for (size_t i = 0; i < local.size(); i++) {
      if (!local[i]) continue;
      auto [slot, fresh] = grads.try_emplace(u->src[i].get(), local[i]);
      if (!fresh) slot->second = add(slot->second, local[i]);
    }
  }
  return grads;
}

}  // namespace tc
