#include "tinycore/codegen/linearize.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "tinycore/codegen/lower.h"
#include "tinycore/error.h"
#include "tinycore/uop/pattern_matcher.h"

namespace tc::codegen {
namespace {

// REDUCE(v, ranges..., op) -> ASSIGN(DEFINE_ACC(identity), v, ranges..., op)
UOpRef reduces_to_accumulators(const UOpRef& sink) {
  int64_t next = 0;
  PatternMatcher pm({{UPat::op(Ops::REDUCE).no_src_check().named("r"), [&](const Captures& c) {
                        const UOpRef& r = c["r"];
                        Ops op = static_cast<Ops>(r->arg_int());
                        UOpRef acc = UOp::make(Ops::DEFINE_ACC, r->dtype, {reduce_identity(op, r->dtype)},
                                               next++);
                        std::vector<UOpRef> src = {acc};
                        src.insert(src.end(), r->src.begin(), r->src.end());
                        return UOp::make(Ops::ASSIGN, r->dtype, std::move(src), r->arg);
                      }}});
  return graph_rewrite(sink, pm);
}

using RangeSet = std::vector<const UOp*>;  // sorted

class Linearizer {
 public:
  explicit Linearizer(const UOpRef& sink) {
    for (const UOp* u : sink->toposort()) deps_[u] = compute_deps(*u);
  }

  std::vector<UOpRef> run(const UOpRef& sink) {
    // the output loops: ranges the stores depend on, outermost first
    RangeSet outer = deps_[sink.get()];
    std::sort(outer.begin(), outer.end(), [](const UOp* a, const UOp* b) { return a->arg_int() < b->arg_int(); });
    for (const UOp* r : outer) {
      hoist(*sink);
      open(r);
    }
    emit(*sink);
    for (auto it = outer.rbegin(); it != outer.rend(); ++it) close(*it);
    return std::move(out_);
  }

 private:
  RangeSet compute_deps(const UOp& u) {
    if (u.op == Ops::RANGE) return {&u};
    if (u.op == Ops::DEFINE_ACC) return {};
    RangeSet s;
    for (const UOpRef& src : u.src) {
      const RangeSet& d = deps_.at(src.get());
      s.insert(s.end(), d.begin(), d.end());
    }
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    if (u.op == Ops::ASSIGN)  // an accumulator's result is outside its own loops
      for (size_t i = 2; i < u.src.size(); i++) std::erase(s, u.src[i].get());
    return s;
  }

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

  void emit_reduce(const UOp& a) {
    const UOp& value = *a.src[1];
    hoist(value);
    emit(*a.src[0]->src[0]);  // the identity constant
    push(*a.src[0]);          // DEFINE_ACC: reset before the loops
    for (size_t i = 2; i < a.src.size(); i++) {
      emit(*a.src[i]->src[0]);
      open(a.src[i].get());
    }
    emit(value);
    push(a);
    for (size_t i = a.src.size() - 1; i >= 2; i--) close(a.src[i].get());
  }

  void open(const UOp* r) {
    emit(*r->src[0]);
    open_.insert(r);
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
  absl::flat_hash_set<const UOp*> emitted_, open_;
  std::vector<UOpRef> out_;
};

}  // namespace

std::vector<UOpRef> linearize(const UOpRef& sink) {
  UOpRef g = reduces_to_accumulators(sink);
  return Linearizer(g).run(g);
}

}  // namespace tc::codegen
