#include "tinycore/codegen/lower.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "tinycore/codegen/narrow.h"
#include "tinycore/error.h"

namespace tc::codegen {
namespace {

using Index = std::vector<UOpRef>;

UOpRef true_() { return UOp::const_int(dtypes::bool_, 1); }

// The strides of a contiguous row-major layout.
std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; i--) st[i] = st[i + 1] * s[i + 1];
  return st;
}

UOpRef linear_index(const Index& idx, const Shape& shape) {
  std::vector<int64_t> st = strides_of(shape);
  UOpRef lin = index_const(0);
  for (size_t i = 0; i < idx.size(); i++)
    if (shape[i] != 1) lin = lin + idx[i] * st[i];
  return lin;
}

UOpRef identity_of(Ops op, DType dt) { return UOp::const_(dt, reduce_identity_value(op, dt)); }

class Lowerer {
 public:
  explicit Lowerer(int first_range) : next_range_(first_range) {}

  UOpRef value(const UOpRef& n, const Index& idx, const UOpRef& valid) {
    std::vector<UOpRef> key = {n, valid};
    key.insert(key.end(), idx.begin(), idx.end());
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    UOpRef out = compute(n, idx, valid);
    memo_[std::move(key)] = out;
    return out;
  }

  std::vector<int64_t> reduce_sizes;  // of each reduce loop, in the order of their numbers
  std::vector<UOpRef> innermost;      // the loops each reduce runs innermost

 private:
  UOpRef new_range(int64_t size) {
    if (size == 1) return index_const(0);
    return UOp::make(Ops::RANGE, dtypes::index, {index_const(size)}, int64_t{next_range_++});
  }

  UOpRef compute(const UOpRef& n, const Index& idx, const UOpRef& valid) {
    const Shape& in = n->src.empty() ? n->shape() : n->src[0]->shape();
    switch (n->op) {
      case Ops::DEFINE_GLOBAL: {
        UOpRef addr = UOp::make(Ops::INDEX, n->dtype, {n, idx[0]});
        if (valid == true_()) return UOp::make(Ops::LOAD, n->dtype.base(), {addr});
        return UOp::make(Ops::LOAD, n->dtype.base(), {addr, valid});
      }
      case Ops::CONST:
        return n;
      case Ops::IOTA:  // the element's own index
        return UOp::make(Ops::CAST, n->dtype, {idx[0]});
      case Ops::CONTIGUOUS:
      case Ops::DETACH:
        return value(n->src[0], idx, valid);
      case Ops::RESHAPE: {
        // a reshape of a reshape is one reshape: the linear index is split once (a flatten of a
        // buffer view indexes the buffer linearly, with no division to recombine)
        UOpRef src = n->src[0];
        while (src->op == Ops::RESHAPE) src = src->src[0];
        const Shape& from = src->shape();
        UOpRef lin = linear_index(idx, n->shape());
        std::vector<int64_t> st = strides_of(from);
        Index out;
        for (size_t j = 0; j < from.size(); j++) {
          if (from[j] == 1)
            out.push_back(index_const(0));
          else if (j == 0)
            out.push_back(lin / st[j]);  // lin < numel wherever it is read
          else
            out.push_back((lin / st[j]) % from[j]);
        }
        return value(src, out, valid);
      }
      case Ops::PERMUTE: {
        Index out(idx.size());
        const auto& perm = n->arg_ints();
        for (size_t i = 0; i < perm.size(); i++) out[perm[i]] = idx[i];
        return value(n->src[0], out, valid);
      }
      case Ops::EXPAND: {
        Index out = idx;
        for (size_t i = 0; i < in.size(); i++)
          if (in[i] == 1) out[i] = index_const(0);
        return value(n->src[0], out, valid);
      }
      case Ops::SHRINK: {
        Index out = idx;
        const auto& a = n->arg_ints();
        for (size_t i = 0; i < in.size(); i++) out[i] = idx[i] + a[2 * i];
        return value(n->src[0], out, valid);
      }
      case Ops::FLIP: {
        Index out = idx;
        for (int64_t ax : n->arg_ints()) out[ax] = index_const(in[ax] - 1) - idx[ax];
        return value(n->src[0], out, valid);
      }
      case Ops::PAD: {
        // out-of-range positions read nothing (a gated load) and yield 0
        Index out = idx;
        const auto& a = n->arg_ints();
        UOpRef inside = true_();
        bool clamp = divides(n->src[0]);
        for (size_t i = 0; i < in.size(); i++) {
          if (a[2 * i] == 0 && a[2 * i + 1] == 0) continue;
          out[i] = idx[i] - a[2 * i];
          // Where the source's index is divided (a reshape of it), an index that may be
          // negative keeps x // c and x % c from folding into their terms; it is only read
          // inside, so it may as well be clamped to the source's range, which folds.
          if (clamp) out[i] = clamp_index(out[i], in[i]);
          inside =
              logical_and(inside, logical_and(ge(idx[i], a[2 * i]), lt(idx[i], a[2 * i] + in[i])));
        }
        UOpRef v = value(n->src[0], out, logical_and(valid, inside));
        return where(inside, v, UOp::const_(n->dtype, 0));
      }
      case Ops::REDUCE_AXIS: {
        // one set of ranges per reduce node: unrolled copies made later accumulate in the same
        // loop
        const auto& a = n->arg_ints();
        auto [it, fresh] = reduce_ranges_.try_emplace(n.get());
        ReduceRanges& rr = it->second;  // moves when a nested reduce adds its entry: the ranges
                                        // are copied before the source is lowered
        if (fresh) {
          keep_.push_back(n);
          for (size_t i = 1; i < a.size(); i++) {
            UOpRef r = new_range(in[a[i]]);
            if (r->op == Ops::RANGE) {
              rr.ranges.push_back(r), reduce_sizes.push_back(in[a[i]]);
              if (i + 1 == a.size()) innermost.push_back(r);
            }
            rr.index.push_back(r);
          }
        }
        Index out = idx;
        for (size_t i = 1; i < a.size(); i++) out[a[i]] = rr.index[i - 1];
        std::vector<UOpRef> src = {nullptr};
        src.insert(src.end(), rr.ranges.begin(), rr.ranges.end());
        UOpRef v = value(n->src[0], out, valid);
        if (src.size() == 1) return v;
        src[0] = v;
        return UOp::make(Ops::REDUCE, v->dtype, std::move(src), a[0]);
      }
      default:
        break;
    }
    TC_CHECK(group::is_alu(n->op), "cannot lower ", op_name(n->op), " inside a kernel");
    std::vector<UOpRef> src;
    for (const UOpRef& s : n->src) src.push_back(value(s, idx, valid));
    return UOp::make(n->op, n->dtype, std::move(src), n->arg);
  }

  // Whether lowering `n` divides an index: a reshape into more than one dimension under it.
  bool divides(const UOpRef& n) {
    if (auto it = divides_.find(n.get()); it != divides_.end()) return it->second;
    bool d = false;
    if (n->op == Ops::RESHAPE) {
      int dims = 0;
      for (int64_t s : n->src[0]->shape()) dims += s != 1;
      d = dims > 1;
    }
    for (size_t i = 0; i < n->src.size() && !d; i++) d = divides(n->src[i]);
    keep_.push_back(n);
    return divides_[n.get()] = d;
  }

  static UOpRef clamp_index(const UOpRef& x, int64_t size) {
    if (x->vmin() >= 0 && x->vmax() < size) return x;
    UOpRef low = alu(Ops::MAX, x, index_const(0));  // max(x, 0)
    return index_const(0) -
           alu(Ops::MAX, index_const(0) - low, index_const(1 - size));  // min(., size-1)
  }

  struct ReduceRanges {
    Index index;                 // per reduce axis
    std::vector<UOpRef> ranges;  // the loops
  };

  int next_range_;
  absl::flat_hash_map<const UOp*, bool> divides_;
  absl::flat_hash_map<std::vector<UOpRef>, UOpRef> memo_;
  absl::flat_hash_map<const UOp*, ReduceRanges> reduce_ranges_;
  std::vector<UOpRef> keep_;  // reduce nodes, kept alive while their address is a key
};

}  // namespace

bool has_reduce(const UOpRef& ast) {
  for (const UOp* u : ast->toposort())
    if (u->op == Ops::REDUCE_AXIS) return true;
  return false;
}

UOpRef reduce_identity(Ops op, DType dt) { return identity_of(op, dt); }

std::string kernel_name(const Shape& shape, const std::vector<int64_t>& reduce_sizes) {
  std::string name = reduce_sizes.empty() ? "E" : "r";
  for (int64_t s : shape)
    if (s != 1) absl::StrAppend(&name, "_", s);
  for (int64_t s : reduce_sizes) absl::StrAppend(&name, "_", s);
  return name.size() == 1 ? name + "_1" : name;
}

LoweredKernel lower(const UOpRef& ast) {
  TC_CHECK(ast->op == Ops::SINK && ast->src.size() == 1 && ast->src[0]->op == Ops::STORE,
           "kernel AST must be SINK(STORE(...))");
  const UOpRef& store = ast->src[0];
  const UOpRef& out = store->src[0];
  const UOpRef& value = store->src[1];
  const Shape& shape = value->shape();
  const int nd = static_cast<int>(shape.size());
  Index idx(nd);
  for (int i = 0; i < nd; i++)
    idx[i] = shape[i] == 1
                 ? index_const(0)
                 : UOp::make(Ops::RANGE, dtypes::index, {index_const(shape[i])}, int64_t{i});
  Lowerer lowerer(nd);
  UOpRef v = lowerer.value(value, idx, true_());
  UOpRef addr = UOp::make(Ops::INDEX, out->dtype, {out, linear_index(idx, shape)});
  UOpRef sink = UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {addr, v})});
  Shape loops = shape;
  if (auto narrowed = lowerer.reduce_sizes.empty() ? narrow_selected_store(sink) : std::nullopt)
    loops[narrowed->first] = 1, sink = narrowed->second;
  return {ast,
          sink,
          loops,
          std::move(lowerer.innermost),
          nd,
          kernel_name(loops, lowerer.reduce_sizes),
          !lowerer.reduce_sizes.empty()};
}

}  // namespace tc::codegen
