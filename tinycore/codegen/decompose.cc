#include "tinycore/codegen/decompose.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tinycore/codegen/narrow.h"
#include "tinycore/codegen/transcendental.h"
#include "tinycore/uop/symbolic.h"

namespace tc::codegen {
namespace {

using C = const Captures&;

bool is_small_float(DType d) { return d.scalar == Scalar::Float16 || d.scalar == Scalar::BFloat16; }

UOpRef widen(const UOpRef& u) {
  return is_small_float(u->dtype) ? UOp::make(Ops::CAST, dtypes::float32, {u}) : u;
}

std::vector<Ops> math_ops() {
  std::vector<Ops> out;
  for (int i = 0; i < kNumOps; i++) {
    Ops op = static_cast<Ops>(i);
    if (group::is_alu(op) && op != Ops::CAST && op != Ops::BITCAST) out.push_back(op);
  }
  return out;
}

PatternMatcher make_decompositions() {
  return PatternMatcher({
      // LOAD(addr, true) -> LOAD(addr): a gate that always holds is no gate
      {UPat::op(Ops::LOAD, {UPat::var("addr"), UPat::cnst(1)}).named("ld"),
       [](C c) { return UOp::make(Ops::LOAD, c["ld"]->dtype, {c["addr"]}); }},
      // half/bfloat16 math -> cast(float32 math)
      {UPat::ops(math_ops()).no_src_check().named("x"),
       [](C c) -> UOpRef {
         const UOpRef& x = c["x"];
         bool small = is_small_float(x->dtype);
         bool small_src = false;
         for (const UOpRef& s : x->src) small_src |= is_small_float(s->dtype);
         if (!small && !small_src) return nullptr;
         std::vector<UOpRef> src;
         for (const UOpRef& s : x->src) src.push_back(widen(s));
         UOpRef r = UOp::make(x->op, small ? dtypes::float32 : x->dtype, std::move(src), x->arg);
         return small ? UOp::make(Ops::CAST, x->dtype, {r}) : r;
       }},
      // REDUCE over half/bfloat16 -> cast(REDUCE over float32)
      {UPat::op(Ops::REDUCE).no_src_check().named("x"),
       [](C c) -> UOpRef {
         const UOpRef& x = c["x"];
         if (!is_small_float(x->dtype)) return nullptr;
         std::vector<UOpRef> src = x->src;
         src[0] = widen(src[0]);
         return UOp::make(Ops::CAST, x->dtype,
                          {UOp::make(Ops::REDUCE, dtypes::float32, src, x->arg)});
       }},
      // an integer to float16 overflows to inf explicitly: LLVM 19 folds fpext(sitofp i32 to
      // half) into sitofp to float when it knows few bits of the int are set, as if half held
      // every such value (INT_MIN * x became -2^31, not -inf; found by tensor_fuzz), and it
      // folds a detour through float32 the same way. Below 65520 the cast is exact either way.
      {UPat::op(Ops::CAST, {UPat::var("y")}).named("x"),
       [](C c) -> UOpRef {
         if (c["x"]->dtype.scalar != Scalar::Float16 || !dtypes::is_int(c["y"]->dtype))
           return nullptr;
         DType h = c["x"]->dtype, f32 = dtypes::float32;
         UOpRef f = UOp::make(Ops::CAST, f32, {c["y"]});
         UOpRef size = UOp::make(Ops::MAX, f32, {f, UOp::make(Ops::NEG, f32, {f})});
         UOpRef fits = UOp::make(Ops::CMPLT, dtypes::bool_, {size, UOp::const_(f32, 65520.0)});
         UOpRef negative = UOp::make(Ops::CMPLT, dtypes::bool_, {f, UOp::const_(f32, 0.0)});
         double inf = std::numeric_limits<double>::infinity();
         UOpRef overflow =
             UOp::make(Ops::WHERE, h, {negative, UOp::const_(h, -inf), UOp::const_(h, inf)});
         return UOp::make(Ops::WHERE, h, {fits, UOp::make(Ops::CAST, h, {f}), overflow});
       }},
      // casts to and from bfloat16 go through float32
      {UPat::op(Ops::CAST, {UPat::var("y")}).named("x"),
       [](C c) -> UOpRef {
         DType to = c["x"]->dtype, from = c["y"]->dtype;
         bool via = (to.scalar == Scalar::BFloat16 && from != dtypes::float32) ||
                    (from.scalar == Scalar::BFloat16 && to != dtypes::float32);
         if (!via || to == from) return nullptr;
         return UOp::make(Ops::CAST, to, {UOp::make(Ops::CAST, dtypes::float32, {c["y"]})});
       }},
  });
}

}  // namespace

int register_itemsize(DType d) { return is_small_float(d) ? 4 : std::max(d.itemsize(), 1); }

const PatternMatcher& decompositions() {
  static const PatternMatcher pm = make_decompositions() + transcendental_rules();
  return pm;
}

namespace {

// The division `n` (IDIV or MOD of a tensor's integers) with its divisor made safe.
UOpRef safe_division(const UOpRef& n, bool is_signed) {
  DType d = n->dtype, b8 = dtypes::bool_;
  const UOpRef &a = n->src[0], &b = n->src[1];
  auto c = [&](int64_t v) { return UOp::const_int(d, v); };
  UOpRef zero = UOp::make(Ops::CMPEQ, b8, {b, c(0)}), special = zero, minus_one;
  if (is_signed) {
    minus_one = UOp::make(Ops::CMPEQ, b8, {b, c(-1)});
    special = UOp::make(Ops::OR, b8, {zero, minus_one});
  }
  UOpRef r = UOp::make(n->op, d, {a, UOp::make(Ops::WHERE, d, {special, c(1), b})});
  if (is_signed) {
    UOpRef negated = n->op == Ops::IDIV ? UOp::make(Ops::SUB, d, {c(0), a}) : c(0);
    r = UOp::make(Ops::WHERE, d, {minus_one, negated, r});
  }
  return UOp::make(Ops::WHERE, d, {zero, c(0), r});
}

}  // namespace

UOpRef safe_divisions(const UOpRef& sink) {
  absl::flat_hash_map<const UOp*, UOpRef> done;  // each node rebuilt on its safe sources
  for (const UOp* u : sink->toposort()) {
    std::vector<UOpRef> src;
    for (const UOpRef& s : u->src) src.push_back(done.at(s.get()));
    UOpRef n = u->replace(std::move(src));
    if ((u->op == Ops::IDIV || u->op == Ops::MOD) && u->dtype != dtypes::index) {
      const UOp& b = *n->src[1];
      bool is_signed = !dtypes::is_unsigned(u->dtype) && !dtypes::is_bool(u->dtype);
      // (a constant's bounds are its value, but uint64 keeps no bounds: its constants are read)
      bool safe = b.op == Ops::CONST ? b.arg_int() != 0 && !(is_signed && b.arg_int() == -1)
                                     : b.vmin() > 0 || (is_signed && b.vmax() < -1);
      if (!safe) n = safe_division(n, is_signed);
    }
    done[u] = n;
  }
  return done.at(sink.get());
}

UOpRef simplify_kernel(const UOpRef& sink) {
  static const PatternMatcher pm = symbolic() + decompositions();
  UOpRef out = graph_rewrite(sink, pm, "simplify_kernel");
  UOpRef narrowed = narrow_gated_loads(out);
  return narrowed == out ? out : graph_rewrite(narrowed, pm, "simplify_kernel");
}

}  // namespace tc::codegen
