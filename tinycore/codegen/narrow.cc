#include "tinycore/codegen/narrow.h"

#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/renderer/llvmir.h"
#include "tinycore/uop/pattern_matcher.h"
#include "tinycore/uop/symbolic.h"

namespace tc::codegen {
namespace {

// The gates under which `v` may differ from the identity of the reduce `op` over it: for a sum,
// those of the loads among its factors (through products, casts and where(gate, x, 0)); for a
// max, those of where(gate, x, -inf). Where any of them is false, v is the identity.
void identity_gates(const UOpRef& v, Ops op, std::vector<UOpRef>& out) {
  if (op == Ops::MAX) {
    if (v->op == Ops::WHERE && v->src[2] == reduce_identity(Ops::MAX, v->dtype)) {
      out.push_back(v->src[0]);
      identity_gates(v->src[1], op, out);
    }
  } else if (v->op == Ops::LOAD && v->src.size() == 2) {
    out.push_back(v->src[1]);
  } else if (v->op == Ops::WHERE && v->src[2]->is_const(0)) {
    out.push_back(v->src[0]);
    identity_gates(v->src[1], op, out);
  } else if (v->op == Ops::MUL) {
    identity_gates(v->src[0], op, out), identity_gates(v->src[1], op, out);
  } else if (v->op == Ops::CAST) {  // a cast of 0 is 0
    identity_gates(v->src[0], op, out);
  }
}

// A reduce's terms: its value split along its own op (the unrolled copies of a sum or a max).
void terms_of(const UOpRef& v, Ops op, std::vector<UOpRef>& out) {
  if (v->op == op) {
    terms_of(v->src[0], op, out), terms_of(v->src[1], op, out);
  } else {
    out.push_back(v);
  }
}

void conjuncts(const UOpRef& gate, std::vector<UOpRef>& out) {
  if (gate->op == Ops::AND && gate->dtype == dtypes::bool_) {
    conjuncts(gate->src[0], out), conjuncts(gate->src[1], out);
  } else {
    out.push_back(gate);
  }
}

// The distinct conjuncts of the gates of the reduce `red`'s terms, one list a term.
std::vector<std::vector<UOpRef>> term_conditions(const UOp& red) {
  const Ops op = static_cast<Ops>(red.arg_int());
  std::vector<UOpRef> terms;
  terms_of(red.src[0], op, terms);
  std::vector<std::vector<UOpRef>> out;
  for (const UOpRef& t : terms) {
    std::vector<UOpRef> gates, cs;
    identity_gates(t, op, gates);
    for (const UOpRef& g : gates) conjuncts(g, cs);
    absl::flat_hash_set<const UOp*> seen;
    std::erase_if(cs, [&](const UOpRef& c) { return !seen.insert(c.get()).second; });
    out.push_back(std::move(cs));
  }
  return out;
}

// One condition on the loop r: r >= bound (lower) or r < bound (upper), bound free of r. Exact
// when the condition holds for every r within it (else it may fail for some SIMD lanes there).
struct Bound {
  const UOp* condition;
  bool lower;
  UOpRef bound;
  bool exact = true;
};

// `c` as bounds on r, into `out`: `a·r + e < k` (upper), `!(r + e < k)` (lower), or
// `r + e == k` (both: a one-hot's test, whose loop narrows to one trip, a gather) with k free of
// `inner` (the reduce's loops and the SIMD lanes, r among them) and e of all but the lanes. An
// upper bound over lanes (a lane block's elements a·r + lane < k) or a coefficient a > 1 (an
// unrolled loop) bounds the iterations where c holds for some lane, and is not exact. The
// index may be compared in another integer type (cast to int32 against a loaded int32).
void bounds_of(const UOpRef& c, const UOpRef& r, const absl::flat_hash_set<const UOp*>& inner,
               std::vector<Bound>& out) {
  bool lower = c->op == Ops::CMPNE && c->src[0]->op == Ops::CMPLT && c->src[1]->is_const(1);
  const UOpRef& cmp = lower ? c->src[0] : c;
  bool equal = cmp->op == Ops::CMPEQ && dtypes::is_int(cmp->src[0]->dtype);
  if (cmp->op != Ops::CMPLT && !equal) return;
  for (int side = 0; side < (equal ? 2 : 1); side++) {
    UOpRef sum = cmp->src[side], k = cmp->src[1 - side];
    if (sum->op == Ops::CAST && sum->src[0]->dtype == dtypes::index) sum = sum->src[0];
    if (sum->dtype != dtypes::index) continue;
    if (k->dtype != dtypes::index) k = UOp::make(Ops::CAST, dtypes::index, {k});
    int64_t a = 1;
    UOpRef e = sum == r ? index_const(0) : subtract_term(sum, r, &a);
    if (!e || depends_on(k, inner)) continue;
    // e at its least over the lanes (each lane's term positive): where c may first fail
    absl::flat_hash_map<const UOp*, UOpRef> lanes;
    for (const UOp* u : e->toposort())
      if (u->op == Ops::LANE) lanes[u] = index_const(0);
    UOpRef least = lanes.empty() ? e : simplify(substitute(e, lanes));
    if (depends_on(least, inner) || (least != e && simplify(e - least)->vmin() < 0)) continue;
    bool exact = a == 1 && least == e;
    if (!exact && (lower || equal)) continue;
    if (!exact) {  // r < ceil((k - least) / a)
      out.push_back(
          Bound{c.get(), false, (alu(Ops::MAX, k - least, index_const(0)) + (a - 1)) / a, false});
    } else if (!equal) {
      out.push_back(Bound{c.get(), lower, k - e});
    } else {
      out.push_back(Bound{c.get(), true, k - e});
      out.push_back(Bound{c.get(), false, k - e + 1});
    }
    return;
  }
}

UOpRef imax(const UOpRef& a, const UOpRef& b) { return alu(Ops::MAX, a, b); }
UOpRef imin(const UOpRef& a, const UOpRef& b) { return imax(a * -1, b * -1) * -1; }

// The loop range r narrowed: the new start and end, and the conditions that then hold.
struct Narrowed {
  UOpRef start, end;
  std::vector<const UOp*> hold;
};

// The iterations of r where a term bounded by `bounds` (all its conditions) may count.
Narrowed within(const UOpRef& r, const std::vector<Bound>& bounds) {
  Narrowed n{index_const(0), r->src[0], {}};
  for (const Bound& b : bounds) {
    if (b.lower)
      n.start = imax(n.start, b.bound);
    else
      n.end = imin(n.end, b.bound);
    if (b.exact) n.hold.push_back(b.condition);
  }
  return n;
}

// The loop range r of `reduces` (each a sum or a max over r) narrowed to where some term of
// theirs may differ from the identity; nullopt when some term has no bound on r. Conditions all
// terms share bound the loop together, and those exact then hold; else each term's own bounds
// do, and the loop runs over their union with every condition kept.
std::optional<Narrowed> narrow(const UOpRef& r, const std::vector<const UOp*>& reduces,
                               const absl::flat_hash_set<const UOp*>& inner) {
  std::vector<std::vector<Bound>> terms;
  for (const UOp* red : reduces) {
    Ops op = static_cast<Ops>(red->arg_int());
    if (op != Ops::ADD && op != Ops::MAX) return std::nullopt;
    for (const std::vector<UOpRef>& cs : term_conditions(*red)) {
      std::vector<Bound>& bounds = terms.emplace_back();
      for (const UOpRef& c : cs) bounds_of(c, r, inner, bounds);
      if (bounds.empty()) return std::nullopt;
    }
  }
  if (terms.empty()) return std::nullopt;
  std::vector<Bound> common = terms[0];
  for (const std::vector<Bound>& t : terms)
    std::erase_if(common, [&](const Bound& b) {
      return std::none_of(t.begin(), t.end(),
                          [&](const Bound& o) { return o.condition == b.condition; });
    });
  if (!common.empty()) return within(r, common);
  Narrowed n = within(r, terms[0]);
  n.hold.clear();
  for (const std::vector<Bound>& t : terms) {
    Narrowed m = within(r, t);
    n.start = imin(n.start, m.start), n.end = imax(n.end, m.end);
  }
  return n;
}

// The iterations [lo, hi) of the loop r where `gate` may hold over lanes w·r + lane (lane < w): its
// conditions w·r + lane < m (or not), with w dividing m, hold for a whole block of lanes or for
// none. Conditions of other forms, or on another loop, stay the gate's alone. nullopt for no
// such condition, or none that leaves out an iteration.
struct LaneBlocks {
  UOpRef r;
  int64_t lo, hi;
};
std::optional<LaneBlocks> lane_blocks(const UOpRef& gate, const UOpRef& lane) {
  const int64_t w = lane->src[0]->arg_int();
  std::vector<UOpRef> cs;
  conjuncts(gate, cs);
  std::optional<LaneBlocks> b;
  for (const UOpRef& c : cs) {
    bool lower = c->op == Ops::CMPNE && c->src[0]->op == Ops::CMPLT && c->src[1]->is_const(1);
    const UOpRef& cmp = lower ? c->src[0] : c;
    if (cmp->op != Ops::CMPLT || cmp->src[1]->op != Ops::CONST ||
        cmp->src[0]->dtype != dtypes::index)
      continue;
    UOpRef y = subtract_term(cmp->src[0], lane);
    if (!y) continue;
    int64_t m = cmp->src[1]->arg_int();
    if (y->op == Ops::ADD && y->src[1]->op == Ops::CONST) m -= y->src[1]->arg_int(), y = y->src[0];
    if (y->op != Ops::MUL || y->src[0]->op != Ops::RANGE || !y->src[1]->is_const(w) || m % w != 0 ||
        (b && b->r != y->src[0]))
      continue;
    if (!b) b = LaneBlocks{y->src[0], 0, y->src[0]->src[0]->arg_int()};
    if (lower)
      b->lo = std::max(b->lo, m / w);
    else
      b->hi = std::min(b->hi, m / w);
  }
  if (!b || b->lo >= b->hi || (b->lo <= 0 && b->hi >= b->r->src[0]->arg_int())) return std::nullopt;
  return b;
}

}  // namespace

bool depends_on(const UOpRef& n, const absl::flat_hash_set<const UOp*>& any) {
  for (const UOp* m : n->toposort())
    if (any.contains(m)) return true;
  return false;
}

UOpRef narrow_reduce_loops(const UOpRef& sink) {
  UOpRef out = sink;
  // each loop in turn (a window's rows, then its columns): the graph is rebuilt after each
  for (bool changed = true; changed;) {
    changed = false;
    absl::flat_hash_map<const UOp*, std::vector<const UOp*>> reduces_over;
    std::vector<const UOp*> loops;  // in graph order: the same kernel narrows the same way
    absl::flat_hash_set<const UOp*> inner;
    for (const UOp* u : out->toposort()) {
      if (u->op == Ops::LANE) inner.insert(u);
      if (u->op != Ops::REDUCE) continue;
      for (size_t i = 1; i < u->src.size(); i++) {
        std::vector<const UOp*>& over = reduces_over[u->src[i].get()];
        if (over.empty()) loops.push_back(u->src[i].get());
        over.push_back(u);
        inner.insert(u->src[i].get());
      }
    }
    for (const UOp* range : loops) {
      if (range->src[0]->op != Ops::CONST) continue;  // narrowed already
      const std::vector<const UOp*>& reduces = reduces_over[range];
      UOpRef r = range->ref();
      std::optional<Narrowed> n = narrow(r, reduces, inner);
      if (!n) continue;
      // (simplified with the rest of the kernel afterwards)
      UOpRef fresh = UOp::make(Ops::RANGE, dtypes::index, {n->end - n->start}, r->arg);
      absl::flat_hash_map<const UOp*, UOpRef> in_body = {{range, n->start + fresh}};
      for (const UOp* c : n->hold) in_body[c] = UOp::const_int(dtypes::bool_, 1);
      absl::flat_hash_map<const UOp*, UOpRef> to;
      for (const UOp* red : reduces) {
        std::vector<UOpRef> src = {substitute(red->src[0], in_body)};
        for (size_t i = 1; i < red->src.size(); i++)
          src.push_back(red->src[i].get() == range ? fresh : red->src[i]);
        to[red] = red->replace(std::move(src));
      }
      out = substitute(out, to);
      changed = true;
      break;
    }
  }
  return out;
}

namespace {

// `v` where the condition `c` is false, folded: each reduce whose every term c gates is its
// identity there. A number, or nullptr when v is not constant there.
UOpRef value_where_false(const UOpRef& v, const UOp* c) {
  absl::flat_hash_map<const UOp*, UOpRef> to = {{c, UOp::const_int(dtypes::bool_, 0)}};
  for (const UOp* u : v->toposort()) {
    const UOp* red = u->op == Ops::HREDUCE ? u->src[0].get() : u;
    if (red->op != Ops::REDUCE) continue;
    std::vector<std::vector<UOpRef>> terms = term_conditions(*red);
    if (std::all_of(terms.begin(), terms.end(), [&](const std::vector<UOpRef>& cs) {
          return std::any_of(cs.begin(), cs.end(), [&](const UOpRef& x) { return x.get() == c; });
        }))
      to[u] = reduce_identity(static_cast<Ops>(red->arg_int()), u->dtype);
  }
  UOpRef folded = simplify(substitute(v, to));
  return folded->op == Ops::CONST ? folded : nullptr;
}

}  // namespace

UOpRef narrow_output_loops(const UOpRef& sink) {
  absl::flat_hash_set<const UOp*> inner;  // the lanes and the reduces' loops
  std::vector<const UOp*> conditions, outputs;
  for (const UOp* u : sink->toposort()) {
    if (u->op == Ops::LANE) inner.insert(u);
    if (u->op == Ops::REDUCE)
      for (size_t i = 1; i < u->src.size(); i++) inner.insert(u->src[i].get());
    if (u->op == Ops::CMPLT) conditions.push_back(u);
  }
  for (const UOp* u : sink->toposort())
    if (u->op == Ops::RANGE && !inner.contains(u)) outputs.push_back(u);
  for (const UOp* range : outputs) {
    if (range->src[0]->op != Ops::CONST) continue;  // a tile's, or narrowed
    UOpRef r = range->ref();
    std::vector<Bound> candidates;  // upper bounds on r that read only the loops outside it
    inner.insert(range);
    for (const UOp* c : conditions) {
      std::vector<Bound> b;
      bounds_of(c->ref(), r, inner, b);
      if (b.empty() || b[0].lower) continue;
      const std::vector<const UOp*> reads = b[0].bound->toposort();
      if (std::none_of(reads.begin(), reads.end(), [&](const UOp* u) {
            return u->op == Ops::RANGE && u->arg_int() > range->arg_int();
          }))
        candidates.push_back(b[0]);
    }
    inner.erase(range);
    // each store's bound past which its value is a number (the batch's rows, unrolled, each
    // gated by its own position; none for a number): r runs to the furthest
    std::vector<UOpRef> fills;
    std::vector<const Bound*> bounds;
    for (size_t i = 0; i < sink->src.size() && fills.size() == i; i++) {
      const UOpRef& st = sink->src[i];
      if (!depends_on(st->src[0], {range})) break;
      if (st->src[1]->op == Ops::CONST) fills.push_back(st->src[1]), bounds.push_back(nullptr);
      for (size_t j = 0; j < candidates.size() && fills.size() == i; j++)
        if (UOpRef f = value_where_false(st->src[1], candidates[j].condition))
          fills.push_back(f), bounds.push_back(&candidates[j]);
    }
    if (fills.size() != sink->src.size() ||
        std::count(bounds.begin(), bounds.end(), nullptr) == std::ssize(bounds))
      continue;
    // r runs to the bound, clamped into its range; a loop after it stores the numbers
    UOpRef end = index_const(0);
    std::set<const UOp*> held;  // the conditions the stores' bounds test, when they are exact
    for (const Bound* b : bounds)
      if (b) end = imax(end, b->bound), held.insert(b->exact ? b->condition : nullptr);
    end = imin(end, r->src[0]);
    UOpRef head = UOp::make(Ops::RANGE, dtypes::index, {end}, r->arg);
    UOpRef rest =
        UOp::make(Ops::RANGE, dtypes::index, {r->src[0] - end}, renderer::kRestLoop + r->arg_int());
    absl::flat_hash_map<const UOp*, UOpRef> in_head = {{range, head}};
    if (held.size() == 1 && *held.begin())  // one exact bound: it holds throughout
      in_head[*held.begin()] = UOp::const_int(dtypes::bool_, 1);
    std::vector<UOpRef> stores;
    for (const UOpRef& st : sink->src) stores.push_back(substitute(st, in_head));
    // after it, r's rest, and loops of their own for those inside r
    absl::flat_hash_map<const UOp*, UOpRef> in_rest = {{range, end + rest}};
    for (const UOp* u : outputs)
      if (u->arg_int() > range->arg_int())
        in_rest[u] =
            UOp::make(Ops::RANGE, dtypes::index, u->src, renderer::kRestLoop + u->arg_int());
    for (size_t i = 0; i < fills.size(); i++)
      stores.push_back(
          sink->src[i]->replace({substitute(sink->src[i]->src[0], in_rest), fills[i]}));
    return sink->replace(std::move(stores));
  }
  return sink;
}

std::optional<std::pair<int64_t, UOpRef>> narrow_selected_store(const UOpRef& plain) {
  if (plain->src[0]->src[1]->op != Ops::WHERE) return std::nullopt;
  UOpRef sink = simplify(plain);  // the condition's tests, and the load's index (through a view)
  const UOpRef& store = sink->src[0];
  const UOpRef& value = store->src[1];
  if (value->op != Ops::WHERE || value->src[2]->op != Ops::LOAD ||
      value->src[2]->src[0] != store->src[0] ||
      (value->src[2]->src.size() > 1 && !value->src[2]->src[1]->is_const(1)))  // an ungated read
    return std::nullopt;
  std::vector<UOpRef> cs;
  conjuncts(value->src[0], cs);
  for (const UOp* u : store->src[0]->toposort()) {
    if (u->op != Ops::RANGE) continue;
    std::vector<Bound> bounds;
    for (const UOpRef& c : cs)
      if (c->op == Ops::CMPEQ && bounds.empty()) bounds_of(c, u->ref(), {u}, bounds);
    if (bounds.empty()) continue;
    UOpRef at = imin(imax(bounds[0].bound, index_const(0)), u->src[0] + -1);
    return std::make_pair(u->arg_int(), substitute(sink, {{u, at}}));
  }
  return std::nullopt;
}

double mean_trips(const UOp& range) {
  constexpr int64_t kMostPoints = 1 << 12;  // outer loop values evaluated at most
  const UOpRef& end = range.src[0];
  if (end->op == Ops::CONST) return static_cast<double>(end->arg_int());
  std::vector<const UOp*> outer;
  int64_t points = 1;
  for (const UOp* u : end->toposort())
    if (u->op == Ops::RANGE) {
      if (u->src[0]->op != Ops::CONST || (points *= u->src[0]->arg_int()) > kMostPoints)
        return static_cast<double>(end->vmax());
      outer.push_back(u);
    }
  double sum = 0;
  for (int64_t p = 0; p < points; p++) {
    absl::flat_hash_map<const UOp*, UOpRef> at;
    for (int64_t rest = p; const UOp* o : outer) {
      at[o] = index_const(rest % o->src[0]->arg_int());
      rest /= o->src[0]->arg_int();
    }
    UOpRef n = simplify(substitute(end, at));
    if (n->op != Ops::CONST) return static_cast<double>(end->vmax());
    sum += static_cast<double>(std::max<int64_t>(0, n->arg_int()));
  }
  return sum / static_cast<double>(points);
}

UOpRef narrow_gated_loads(const UOpRef& sink) {
  UOpRef lane;
  for (const UOp* u : sink->toposort())
    if (u->op == Ops::LANE) lane = u->ref();
  if (!lane) return sink;
  absl::flat_hash_map<const UOp*, UOpRef> to;
  for (const UOp* u : sink->toposort()) {
    std::optional<LaneBlocks> b;
    if (u->op != Ops::LOAD || u->src.size() != 2 || !(b = lane_blocks(u->src[1], lane))) continue;
    const UOpRef& index = u->src[0];
    // r = lo + r' simplified with r' >= 0, r' a loop of its own for its bounds, then put back
    UOpRef r1 = UOp::make(Ops::RANGE, dtypes::index, {index_const(b->hi - b->lo)}, kScratchLoop);
    UOpRef idx = simplify(substitute(index->src[1], {{b->r.get(), r1 + b->lo}}));
    idx = substitute(idx, {{r1.get(), b->r - b->lo}});
    if (idx != index->src[1]) to[index.get()] = index->replace({index->src[0], idx});
  }
  return to.empty() ? sink : substitute(sink, to);
}

}  // namespace tc::codegen
