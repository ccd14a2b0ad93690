#include "tinycore/uop/uop.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "tinycore/error.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/uop/printer.h"
#include "tinycore/uop/spec.h"

namespace tc {
namespace {

// Doubles are compared and hashed by bit pattern, so -0.0 and NaN constants intern correctly.
struct ArgEq {
  bool operator()(const Arg& a, const Arg& b) const {
    if (a.index() != b.index()) return false;
    if (const double* x = std::get_if<double>(&a)) {
      double y = std::get<double>(b);
      return std::memcmp(x, &y, sizeof(double)) == 0;
    }
    return a == b;
  }
};

size_t hash_arg(const Arg& a) {
  if (const double* x = std::get_if<double>(&a)) {
    uint64_t bits;
    std::memcpy(&bits, x, sizeof bits);
    return absl::HashOf(a.index(), bits);
  }
  return std::visit(
      [&](const auto& v) -> size_t {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return 0;
        else
          return absl::HashOf(a.index(), v);
      },
      a);
}

// The intern table. It holds raw pointers only, so it never keeps a node alive; a node removes
// itself when its last reference goes. Nothing may drop a reference while holding the lock: the
// node's removal would take the lock again. (So the pointers are not const: a const node's
// weak_from_this() converts, locking and dropping a temporary reference.)
struct InternTable {
  std::mutex mu;
  absl::flat_hash_map<size_t, std::vector<UOp*>> buckets;
  size_t live = 0;
  std::array<std::atomic<size_t>, kNumOps> live_by_op{};
};
InternTable& table() {
  static InternTable* t = new InternTable();  // never destroyed: nodes may outlive main's statics
  return *t;
}

struct Deleter {
  void operator()(UOp* u) const {
    {
      InternTable& t = table();
      std::lock_guard<std::mutex> lock(t.mu);
      auto it = t.buckets.find(u->hash);
      if (it != t.buckets.end()) {
        std::erase(it->second, u);
        if (it->second.empty()) t.buckets.erase(it);
      }
      t.live--;
      t.live_by_op[static_cast<int>(u->op)]--;
    }
    delete u;  // outside the lock: freeing sources re-enters the table
  }
};

bool same_sources(const std::vector<UOpRef>& a, const std::vector<UOpRef>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (a[i].get() != b[i].get()) return false;
  return true;
}

int64_t sat(__int128 v) {
  constexpr __int128 lo = std::numeric_limits<int64_t>::min(),
                     hi = std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(std::clamp(v, lo, hi));
}

}  // namespace

UOp::UOp(Ops op, DType dtype, std::vector<UOpRef> src, Arg arg, size_t hash)
    : op(op), dtype(dtype), src(std::move(src)), arg(std::move(arg)), hash(hash) {}
UOp::~UOp() = default;

size_t UOp::live_count() {
  std::lock_guard<std::mutex> lock(table().mu);
  return table().live;
}
size_t UOp::live_count(Ops op) { return table().live_by_op[static_cast<int>(op)].load(); }

namespace {

// A new node that breaks the UOp spec (spec.h) is a bug: the failed check names it and its sources.
void check_spec(Ops op, DType dtype, const std::vector<UOpRef>& src, const Arg& arg) {
  std::string why = spec_violation(op, dtype, src, arg);
  if (why.empty()) return;
  std::string sources;
  for (const UOpRef& s : src)
    absl::StrAppend(&sources, sources.empty() ? "" : ", ", op_name(s->op), " ", s->dtype.name());
  TC_CHECK(false, "UOp spec: ", op_name(op), " ", dtype.name(), " of (", sources, ") arg ",
           print_arg(arg), ": ", why);
}

}  // namespace

UOpRef UOp::make(Ops op, DType dtype, std::vector<UOpRef> src, Arg arg) {
  size_t h = absl::HashOf(op, dtype, hash_arg(arg));
  for (const UOpRef& s : src) h = absl::HashOf(h, s.get());
  InternTable& t = table();
  std::unique_lock<std::mutex> lock(t.mu);
  auto& bucket = t.buckets[h];
  for (UOp* u : bucket) {
    if (u->op != op || !(u->dtype == dtype) || !ArgEq()(u->arg, arg) || !same_sources(u->src, src))
      continue;
    if (UOpRef alive = u->weak_from_this().lock()) return alive;  // else it is being freed
  }
  if (spec_enabled()) check_spec(op, dtype, src, arg);
  std::shared_ptr<UOp> node(new UOp(op, dtype, std::move(src), std::move(arg), h), Deleter());
  node->infer();  // before another thread can find it (kernels are built on several threads)
  bucket.push_back(node.get());
  t.live++;
  t.live_by_op[static_cast<int>(op)]++;
  return node;
}

UOpRef UOp::const_(DType dtype, double value) {
  if (dtypes::is_float(dtype)) return make(Ops::CONST, dtype, {}, cast_value(value, dtype));
  if (dtype.scalar == Scalar::UInt64 && value >= 9223372036854775808.0)
    return make(Ops::CONST, dtype, {}, static_cast<int64_t>(static_cast<uint64_t>(value)));
  return make(Ops::CONST, dtype, {}, static_cast<int64_t>(cast_value(value, dtype)));
}

UOpRef UOp::const_int(DType dtype, int64_t value) {
  if (dtypes::is_float(dtype)) return const_(dtype, static_cast<double>(value));
  return make(Ops::CONST, dtype, {}, cast_int(value, dtype));
}

double UOp::const_value() const {
  if (const double* d = std::get_if<double>(&arg)) return *d;
  if (dtype.scalar == Scalar::UInt64) return static_cast<double>(static_cast<uint64_t>(arg_int()));
  return static_cast<double>(arg_int());
}

UOpRef UOp::replace(std::vector<UOpRef> new_src) const {
  if (same_sources(src, new_src)) return ref();
  return make(op, dtype, std::move(new_src), arg);
}

std::vector<const UOp*> UOp::toposort() const {
  std::vector<const UOp*> order;
  std::unordered_set<const UOp*> seen;
  std::vector<std::pair<const UOp*, size_t>> stack = {{this, 0}};
  seen.insert(this);
  while (!stack.empty()) {
    auto& [u, i] = stack.back();
    if (i < u->src.size()) {
      const UOp* s = u->src[i++].get();
      if (seen.insert(s).second) stack.push_back({s, 0});
      continue;
    }
    order.push_back(u);
    stack.pop_back();
  }
  return order;
}

// Derived facts: the tensor shape and the integer bounds. Inputs were validated by the builder
// (Tensor checks user input); here a mismatch is a bug.
void UOp::infer() {
  const Shape empty;
  const Shape& in = src.empty() ? empty : src[0]->shape();
  switch (op) {
    case Ops::BUFFER:
    case Ops::DEFINE_GLOBAL:
      shape_ = {arg_ints()[1]};
      break;
    case Ops::IOTA:
    case Ops::RESHAPE:
    case Ops::EXPAND:
      shape_ = arg_ints();
      break;
    case Ops::PERMUTE:
      for (int64_t p : arg_ints()) shape_.push_back(in[p]);
      break;
    case Ops::PAD:
    case Ops::SHRINK: {
      const auto& a = arg_ints();
      for (size_t i = 0; i < in.size(); i++)
        shape_.push_back(op == Ops::PAD ? in[i] + a[2 * i] + a[2 * i + 1]
                                        : a[2 * i + 1] - a[2 * i]);
      break;
    }
    case Ops::REDUCE_AXIS: {
      shape_ = in;
      const auto& a = arg_ints();
      for (size_t i = 1; i < a.size(); i++) shape_[a[i]] = 1;
      break;
    }
    case Ops::FLIP:
    case Ops::CONTIGUOUS:
    case Ops::DETACH:
    case Ops::CUSTOM_GRAD:
    case Ops::CUSTOM:
    case Ops::COPY:
      shape_ = in;
      break;
    case Ops::MULTI: {  // the pieces side by side along the axis the arg names first
      shape_ = in;
      int axis = std::stoi(std::get<std::string>(arg));
      if (axis >= 0)
        for (size_t i = 1; i < src.size(); i++) shape_[axis] += src[i]->shape()[axis];
      break;
    }
    default:
      if (group::is_alu(op)) shape_ = op == Ops::WHERE ? src[1]->shape() : in;
  }

  // bounds
  vmin_ = static_cast<int64_t>(std::max(dtypes::min(dtype), -9.2e18));
  vmax_ = static_cast<int64_t>(std::min(dtypes::max(dtype), 9.2e18));
  if (!(dtypes::is_int(dtype) || dtypes::is_bool(dtype)) || dtype.count != 1 || dtype.ptr) return;
  // uint64 values past INT64_MAX do not fit these int64 bounds: nothing is derived for them
  if (dtype == dtypes::uint64) return;
  // an interval outside the dtype means the op may wrap around: then nothing is known
  auto set = [&](__int128 lo, __int128 hi) {
    if (lo < vmin_ || hi > vmax_) return;
    vmin_ = sat(lo), vmax_ = sat(hi);
  };
  auto A = [&](int i) -> const UOp& { return *src[i]; };
  switch (op) {
    case Ops::CONST:
      vmin_ = vmax_ = arg_int();
      return;
    case Ops::RANGE:
    case Ops::LANE:
      // a loop that may have no trip keeps two values: an index of it folded to a constant would
      // drop the loop from its body, which would then run once
      set(0, std::max<__int128>(__int128(A(0).vmax()) - 1, op == Ops::RANGE && A(0).vmin() < 1));
      return;
    case Ops::ADD:
      set(__int128(A(0).vmin()) + A(1).vmin(), __int128(A(0).vmax()) + A(1).vmax());
      return;
    case Ops::SUB:
      set(__int128(A(0).vmin()) - A(1).vmax(), __int128(A(0).vmax()) - A(1).vmin());
      return;
    case Ops::NEG:
      set(-__int128(A(0).vmax()), -__int128(A(0).vmin()));
      return;
    case Ops::MUL: {
      __int128 c[4] = {__int128(A(0).vmin()) * A(1).vmin(), __int128(A(0).vmin()) * A(1).vmax(),
                       __int128(A(0).vmax()) * A(1).vmin(), __int128(A(0).vmax()) * A(1).vmax()};
      set(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
      return;
    }
    case Ops::IDIV: {
      if (A(1).op != Ops::CONST || A(1).arg_int() == 0) return;
      int64_t c = A(1).arg_int();
      int64_t a = A(0).vmin() / c, b = A(0).vmax() / c;  // truncation is monotonic in x
      set(std::min(a, b), std::max(a, b));
      return;
    }
    case Ops::MOD: {
      if (A(1).op != Ops::CONST || A(1).arg_int() <= 0) return;
      int64_t c = A(1).arg_int();
      if (A(0).vmin() >= 0 && A(0).vmax() < c)
        set(A(0).vmin(), A(0).vmax());
      else if (A(0).vmin() >= 0)
        set(0, c - 1);
      else
        set(-(c - 1), c - 1);
      return;
    }
    case Ops::MAX:
      set(std::max(A(0).vmin(), A(1).vmin()), std::max(A(0).vmax(), A(1).vmax()));
      return;
    case Ops::CMPLT:
      if (A(0).vmax() < A(1).vmin())
        set(1, 1);
      else if (A(0).vmin() >= A(1).vmax())
        set(0, 0);
      else
        set(0, 1);
      return;
    case Ops::CMPNE:
    case Ops::CMPEQ: {
      bool disjoint = A(0).vmax() < A(1).vmin() || A(1).vmax() < A(0).vmin();
      bool same_const =
          A(0).vmin() == A(0).vmax() && A(1).vmin() == A(1).vmax() && A(0).vmin() == A(1).vmin();
      int64_t ne = disjoint ? 1 : same_const ? 0 : -1;
      if (ne < 0)
        set(0, 1);
      else
        set(op == Ops::CMPNE ? ne : 1 - ne, op == Ops::CMPNE ? ne : 1 - ne);
      return;
    }
    case Ops::AND:
      if (dtypes::is_bool(dtype)) set(A(0).vmin() & A(1).vmin(), A(0).vmax() & A(1).vmax());
      return;
    case Ops::OR:
      if (dtypes::is_bool(dtype)) set(A(0).vmin() | A(1).vmin(), A(0).vmax() | A(1).vmax());
      return;
    case Ops::WHERE:
      if (A(0).vmin() == 1)
        set(A(1).vmin(), A(1).vmax());
      else if (A(0).vmax() == 0)
        set(A(2).vmin(), A(2).vmax());
      else
        set(std::min(A(1).vmin(), A(2).vmin()), std::max(A(1).vmax(), A(2).vmax()));
      return;
    case Ops::CAST:
      if (dtypes::is_int(A(0).dtype) || dtypes::is_bool(A(0).dtype))
        if (A(0).vmin() >= vmin_ && A(0).vmax() <= vmax_) set(A(0).vmin(), A(0).vmax());
      return;
    default:
      return;
  }
}

UOpRef index_const(int64_t v) { return UOp::const_int(dtypes::index, v); }
UOpRef alu(Ops op, const UOpRef& a, const UOpRef& b) {
  DType out = group::is_comparison(op) ? dtypes::bool_ : a->dtype;
  return UOp::make(op, out, {a, b});
}
UOpRef operator+(const UOpRef& a, const UOpRef& b) { return alu(Ops::ADD, a, b); }
UOpRef operator+(const UOpRef& a, int64_t b) { return a + UOp::const_int(a->dtype, b); }
UOpRef operator-(const UOpRef& a, const UOpRef& b) { return a + b * -1; }
UOpRef operator-(const UOpRef& a, int64_t b) { return a + (-b); }
UOpRef operator*(const UOpRef& a, const UOpRef& b) { return alu(Ops::MUL, a, b); }
UOpRef operator*(const UOpRef& a, int64_t b) { return a * UOp::const_int(a->dtype, b); }
UOpRef operator/(const UOpRef& a, int64_t b) {
  return alu(Ops::IDIV, a, UOp::const_int(a->dtype, b));
}
UOpRef operator%(const UOpRef& a, int64_t b) {
  return alu(Ops::MOD, a, UOp::const_int(a->dtype, b));
}
UOpRef lt(const UOpRef& a, int64_t b) { return alu(Ops::CMPLT, a, UOp::const_int(a->dtype, b)); }
UOpRef ge(const UOpRef& a, int64_t b) {
  return alu(Ops::CMPNE, lt(a, b), UOp::const_int(dtypes::bool_, 1));
}
UOpRef logical_and(const UOpRef& a, const UOpRef& b) { return alu(Ops::AND, a, b); }
UOpRef where(const UOpRef& c, const UOpRef& t, const UOpRef& f) {
  return UOp::make(Ops::WHERE, t->dtype, {c, t, f});
}

double reduce_identity_value(Ops op, DType dt) {
  TC_CHECK(op == Ops::ADD || op == Ops::MUL || op == Ops::MAX, "no reduction with ", op_name(op));
  if (op == Ops::ADD) return 0;
  if (op == Ops::MUL) return 1;
  return dtypes::is_float(dt) ? -INFINITY : dtypes::min(dt);
}

}  // namespace tc
