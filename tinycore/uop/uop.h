// The immutable, interned UOp: structurally equal nodes are the same object, so equality is
// pointer equality and every graph is a DAG with free common-subexpression elimination.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "tinycore/dtype.h"
#include "tinycore/uop/ops.h"

namespace tc {

namespace runtime {
class Buffer;
}

using Shape = std::vector<int64_t>;
// The number of elements of a shape (of its dimensions from `from` on): the one product of a
// shape the core uses.
inline int64_t shape_numel(const Shape& s, size_t from = 0) {
  int64_t n = 1;
  for (size_t i = from; i < s.size(); i++) n *= s[i];
  return n;
}
using Arg = std::variant<std::monostate, int64_t, double, std::vector<int64_t>, std::string>;

class UOp;
using UOpRef = std::shared_ptr<const UOp>;

// Arguments by op:
//   BUFFER {id, size}          CONST int64 (ints, bool) or double (floats)
//   RESHAPE/EXPAND new shape   PERMUTE order   PAD/SHRINK {b0, e0, b1, e1, ...}   FLIP axes
//   REDUCE_AXIS {op, axes...}  REDUCE op       DEFINE_GLOBAL {index, size}
//   RANGE / DEFINE_ACC number   ASSIGN op   LANE: src {width}, the SIMD lane ids 0..width-1
class UOp : public std::enable_shared_from_this<UOp> {
 public:
  // The only way to build a node: returns the existing node when an equal one is alive.
  static UOpRef make(Ops op, DType dtype, std::vector<UOpRef> src = {}, Arg arg = {});
  static UOpRef const_(DType dtype, double value);
  static UOpRef const_int(DType dtype, int64_t value);
  static UOpRef sink(std::vector<UOpRef> src) {
    return make(Ops::SINK, dtypes::void_, std::move(src));
  }

  const Ops op;
  const DType dtype;
  const std::vector<UOpRef> src;
  const Arg arg;
  const size_t hash;

  // Tensor-level shape; {} for scalars and for codegen nodes.
  const Shape& shape() const { return shape_; }
  // Interval bounds of integer and bool nodes (the whole dtype range when unknown).
  int64_t vmin() const { return vmin_; }
  int64_t vmax() const { return vmax_; }

  int64_t arg_int() const { return std::get<int64_t>(arg); }
  const std::vector<int64_t>& arg_ints() const { return std::get<std::vector<int64_t>>(arg); }
  double const_value() const;  // CONST as a double (ints converted)
  bool is_const(double v) const { return op == Ops::CONST && const_value() == v; }

  // The same node with other sources (itself when nothing changed).
  UOpRef replace(std::vector<UOpRef> new_src) const;
  UOpRef ref() const { return shared_from_this(); }
  // Every node reachable from this one, sources before users.
  std::vector<const UOp*> toposort() const;

  // Runtime attachments: the memory behind a BUFFER node, and the buffer view that holds this
  // node's value after it was realized (so later schedules reuse it) with the buffer write clock
  // then: an in-place write (assign) of that buffer or of one the value was computed from makes
  // the value stale, and it is computed again.
  mutable std::shared_ptr<runtime::Buffer> buffer;
  mutable UOpRef realized;
  mutable uint64_t realized_clock = 0;

  // Number of nodes alive (for tests of freeing), and of those with op `op`.
  static size_t live_count();
  static size_t live_count(Ops op);

  UOp(Ops op, DType dtype, std::vector<UOpRef> src, Arg arg, size_t hash);
  ~UOp();
  UOp(const UOp&) = delete;
  UOp& operator=(const UOp&) = delete;

 private:
  Shape shape_;
  int64_t vmin_ = 0, vmax_ = 0;
  void infer();
};

// Index arithmetic builders (no simplification here: the symbolic rewrite does that).
UOpRef alu(Ops op, const UOpRef& a, const UOpRef& b);
UOpRef operator+(const UOpRef& a, const UOpRef& b);
UOpRef operator+(const UOpRef& a, int64_t b);
UOpRef operator-(const UOpRef& a, const UOpRef& b);
UOpRef operator-(const UOpRef& a, int64_t b);
UOpRef operator*(const UOpRef& a, const UOpRef& b);
UOpRef operator*(const UOpRef& a, int64_t b);
UOpRef operator/(const UOpRef& a, int64_t b);  // IDIV
UOpRef operator%(const UOpRef& a, int64_t b);  // MOD
UOpRef lt(const UOpRef& a, int64_t b);
UOpRef ge(const UOpRef& a, int64_t b);
UOpRef logical_and(const UOpRef& a, const UOpRef& b);
UOpRef where(const UOpRef& c, const UOpRef& t, const UOpRef& f);
UOpRef index_const(int64_t v);

// The value a reduction with `op` starts from: 0 for ADD, 1 for MUL, the lowest value of the
// dtype for MAX (-inf for floats). Also what a reduce over no element gives.
double reduce_identity_value(Ops op, DType dtype);

}  // namespace tc
