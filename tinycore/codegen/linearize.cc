#include "tinycore/codegen/linearize.h"

#include <algorithm>
#include <functional>
#include <iterator>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/error.h"
#include "tinycore/uop/pattern_matcher.h"
#include "tinycore/uop/symbolic.h"

namespace tc::codegen {
namespace {

// REDUCE(v, ranges..., op) -> ASSIGN(DEFINE_ACC(identity), v, ranges..., op)
UOpRef reduces_to_accumulators(const UOpRef& sink) {
  int64_t next = 0;
  PatternMatcher pm({{UPat::op(Ops::REDUCE).no_src_check().named("r"), [&](const Captures& c) {
                        const UOpRef& r = c["r"];
                        Ops op = static_cast<Ops>(r->arg_int());
                        UOpRef acc = UOp::make(Ops::DEFINE_ACC, r->dtype,
                                               {reduce_identity(op, r->dtype)}, next++);
                        std::vector<UOpRef> src = {acc};
                        src.insert(src.end(), r->src.begin(), r->src.end());
                        return UOp::make(Ops::ASSIGN, r->dtype, std::move(src), r->arg);
                      }}});
  return graph_rewrite(sink, pm, "accumulators");
}

using RangeSet = std::vector<const UOp*>;  // sorted

// The loops a node runs inside: the RANGEs it reads, less those a REDUCE (or its accumulator)
// runs itself. A loop runs inside those its end reads (a narrowed loop: codegen/narrow.h).
RangeSet loops_of(const UOp& u, const absl::flat_hash_map<const UOp*, RangeSet>& deps) {
  if (u.op == Ops::DEFINE_ACC) return {};
  RangeSet s;
  if (u.op == Ops::RANGE) s.push_back(&u);
  for (const UOpRef& src : u.src) {
    const RangeSet& d = deps.at(src.get());
    s.insert(s.end(), d.begin(), d.end());
  }
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  size_t own = u.op == Ops::REDUCE ? 1 : u.op == Ops::ASSIGN ? 2 : u.src.size();
  for (size_t i = own; i < u.src.size(); i++) std::erase(s, u.src[i].get());
  return s;
}

// A loop is opened once, and the REDUCEs over the same RANGEs share it (the unrolled copies of a
// register tile). Lowering gives every read of one reduce the same RANGEs, so when two reads
// run inside different outer loops (one at a fixed index, one per output element), the later
// ones get RANGEs of their own. Repeated until stable: renaming a reduce's loops moves the
// reduces nested in it into other loops too.
UOpRef separate_reduce_loops(UOpRef sink) {
  for (int round = 0;; round++) {
    TC_CHECK(round < 64, "separating reduce loops did not settle");
    std::vector<const UOp*> order = sink->toposort();
    int64_t next = 0;
    absl::flat_hash_map<const UOp*, RangeSet> deps;
    for (const UOp* u : order) {
      deps[u] = loops_of(*u, deps);
      if (u->op == Ops::RANGE) next = std::max(next, u->arg_int() + 1);
    }
    // per set of reduce RANGEs: the outer loops of its first reads, and the new RANGEs of
    // reads inside other outer loops
    absl::flat_hash_map<std::vector<const UOp*>, RangeSet> first_loops;
    absl::flat_hash_map<std::pair<std::vector<const UOp*>, RangeSet>, std::vector<UOpRef>> moved;
    absl::flat_hash_map<const UOp*, UOpRef> to;
    for (const UOp* u : order) {
      if (u->op != Ops::REDUCE) continue;
      std::vector<const UOp*> ranges;
      for (size_t i = 1; i < u->src.size(); i++) ranges.push_back(u->src[i].get());
      auto [first, fresh] = first_loops.try_emplace(ranges, deps[u]);
      if (fresh || first->second == deps[u]) continue;
      auto [it, added] = moved.try_emplace(std::make_pair(ranges, deps[u]));
      std::vector<UOpRef>& renamed = it->second;
      if (added)
        for (const UOp* r : ranges)
          renamed.push_back(UOp::make(Ops::RANGE, r->dtype, r->src, next++));
      absl::flat_hash_map<const UOp*, UOpRef> rename;
      for (size_t i = 0; i < ranges.size(); i++) rename[ranges[i]] = renamed[i];
      std::vector<UOpRef> src = {substitute(u->src[0], rename)};
      src.insert(src.end(), renamed.begin(), renamed.end());
      to[u] = u->replace(std::move(src));
    }
    if (to.empty()) return sink;
    sink = substitute(sink, to);
  }
}

class Linearizer {
 public:
  explicit Linearizer(const UOpRef& sink) {
    for (const UOp* u : sink->toposort()) {
      deps_[u] = loops_of(*u, deps_);
      if (u->op == Ops::ASSIGN) groups_[loop_ranges(*u)].push_back(u);
    }
  }

  std::vector<UOpRef> run(const UOpRef& sink) {
    // the stores in runs that share their output loops, each inside the loops its stores run in,
    // outermost first; the next run closes the loops it does not run in (a narrowed output
    // loop's, codegen/narrow.h, before the loop after it that stores the rest)
    std::vector<const UOp*> nest;
    for (size_t first = 0, end; first < sink->src.size(); first = end) {
      RangeSet outer = deps_[sink->src[first].get()];
      for (end = first + 1; end < sink->src.size(); end++) {
        const RangeSet& d = deps_[sink->src[end].get()];
        auto missing = [](const RangeSet& a, const RangeSet& b) {  // a loop of a not in b
          return !std::includes(b.begin(), b.end(), a.begin(), a.end());
        };
        if (missing(d, outer) && missing(outer, d)) break;
        RangeSet both;
        std::set_union(outer.begin(), outer.end(), d.begin(), d.end(), std::back_inserter(both));
        outer = std::move(both);
      }
      auto kept = std::find_if(nest.begin(), nest.end(), [&](const UOp* r) {
        return !std::binary_search(outer.begin(), outer.end(), r);
      });
      for (size_t keep = kept - nest.begin(); nest.size() > keep; nest.pop_back())
        close(nest.back());
      std::sort(outer.begin(), outer.end(),
                [](const UOp* a, const UOp* b) { return a->arg_int() < b->arg_int(); });
      for (const UOp* r : outer) {
        if (open_.contains(r)) continue;
        hoist(*sink);
        open(r);
        nest.push_back(r);
      }
      for (size_t i = first; i < end; i++) emit(*sink->src[i]);
    }
    push(*sink);
    for (auto it = nest.rbegin(); it != nest.rend(); ++it) close(*it);
    return std::move(out_);
  }

 private:
  bool ready(const UOp& u) const {
    const RangeSet& d = deps_.at(&u);
    return std::all_of(d.begin(), d.end(), [&](const UOp* r) { return open_.contains(r); });
  }

  // Emit every node of `root`'s graph that can run with the loops open now.
  void hoist(const UOp& root) {
    for (const UOp* u : root.toposort())
      if (!emitted_.contains(u) && u->op != Ops::SINK && u->op != Ops::STORE &&
          u->op != Ops::DEFINE_ACC && ready(*u))
        emit(*u);
  }

  void emit(const UOp& u) {
    if (emitted_.contains(&u)) return;
    TC_CHECK(u.op != Ops::RANGE, "RANGE ", u.arg_int(), " used outside its loop");
    if (u.op == Ops::ASSIGN) return emit_reduce(u);
    if (u.op == Ops::DEFINE_ACC) return;  // placed by its reduce, right before the loops
    for (const UOpRef& s : u.src) emit(*s);
    push(u);
  }

  static std::vector<const UOp*> loop_ranges(const UOp& assign) {
    std::vector<const UOp*> r;
    for (size_t i = 2; i < assign.src.size(); i++) r.push_back(assign.src[i].get());
    return r;
  }

  // Accumulators over the same ranges that can start now share one loop nest (the unrolled
  // copies of a register tile).
  void emit_reduce(const UOp& a) {
    std::vector<const UOp*> ranges = loop_ranges(a), batch;
    for (const UOp* g : groups_.at(ranges))
      if (!emitted_.contains(g) && ready(*g)) batch.push_back(g);
    for (const UOp* g : batch) hoist(*g->src[1]);
    for (const UOp* g : batch) {
      emit(*g->src[0]->src[0]);  // the identity constant
      push(*g->src[0]);          // DEFINE_ACC: reset before the loops
    }
    for (const UOp* r : ranges) {
      TC_CHECK(!opened_.contains(r), "RANGE ", r->arg_int(), " opened twice");
      emit(*r->src[0]);
      open(r);
    }
    for (const UOp* g : batch) emit(*g->src[1]);
    for (const UOp* g : batch) push(*g);
    for (auto it = ranges.rbegin(); it != ranges.rend(); ++it) close(*it);
  }

  void open(const UOp* r) {
    emit(*r->src[0]);
    open_.insert(r);
    opened_.insert(r);
    push(*r);
  }
  void close(const UOp* r) {
    open_.erase(r);
    out_.push_back(UOp::make(Ops::END, dtypes::void_, {r->ref()}));
  }
  void push(const UOp& u) {
    emitted_.insert(&u);
    if (u.op != Ops::SINK) out_.push_back(u.ref());
  }

  absl::flat_hash_map<const UOp*, RangeSet> deps_;
  absl::flat_hash_set<const UOp*> emitted_, open_, opened_;
  absl::flat_hash_map<std::vector<const UOp*>, std::vector<const UOp*>> groups_;
  std::vector<UOpRef> out_;
};

}  // namespace

std::vector<UOpRef> linearize(const UOpRef& sink) {
  UOpRef g = reduces_to_accumulators(separate_reduce_loops(sink));
  return Linearizer(g).run(g);
}

}  // namespace tc::codegen
