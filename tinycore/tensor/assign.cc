// Writes: assign() and the in-place operators built on it, views that alias their base, and
// setitem's guard against changing a graph another tensor still reads. tinygrad's rules
// (test/backend/test_setitem.py):
//   - a view (movements or detach) of a tensor that holds a buffer aliases it: a write through
//     the view lands in the base, and the view sees every later write to the base;
//   - any other graph built from a tensor keeps the value it was built from: it reads the old
//     graph, and the old buffer when realized with the write (schedule::create_schedule orders
//     readers first). Realized after an in-place write, it reads the new contents (tinygrad's
//     test_lazy_sum_between_writes accepts both);
//   - setitem on a tensor whose graph another live tensor reads is an error, as it is in
//     tinygrad: eager frameworks would give that reader the old value, a lazy one the new.
#include <atomic>
#include <mutex>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "tinycore/gradient.h"
#include "tinycore/schedule/multi.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor.h"

namespace tc {

// The list of live tensors: linked through the Impls, so adding and removing one is O(1).
struct Tensor::LiveTensors {
  std::mutex mu;
  Impl* head = nullptr;
  static LiveTensors& get() {
    static LiveTensors* l = new LiveTensors();  // never destroyed: tensors may outlive statics
    return *l;
  }
};

namespace {

// The node under a chain of movement ops and detaches (tinygrad's UOp.base).
const UOp* movement_base(const UOp* u) {
  while (group::is_movement(u->op) || u->op == Ops::DETACH) u = u->src[0].get();
  return u;
}

std::atomic<int> default_requires_grad = 0;  // 0 false, 1 true, 2 maybe

}  // namespace

void Tensor::set_default_requires_grad(std::optional<bool> requires_grad) {
  default_requires_grad = requires_grad ? static_cast<int>(*requires_grad) : 2;
}

Tensor::Impl::Impl(UOpRef u) : uop(std::move(u)) {
  if (int d = default_requires_grad; d != 2) requires_grad = d == 1;
  LiveTensors& l = LiveTensors::get();
  std::lock_guard<std::mutex> lock(l.mu);
  live_next = l.head;
  if (l.head) l.head->live_prev = this;
  l.head = this;
}

Tensor::Impl::~Impl() {
  LiveTensors& l = LiveTensors::get();
  std::lock_guard<std::mutex> lock(l.mu);
  if (live_prev) live_prev->live_next = live_next;
  if (live_next) live_next->live_prev = live_prev;
  if (l.head == this) l.head = live_next;
}

Tensor Tensor::view_of(UOpRef u, Ops op, Arg arg, UOpRef start) const {
  Tensor v(std::move(u));
  Impl& vi = *v.impl_;
  std::shared_ptr<Impl> base = impl_->view_base.lock();
  if (base)
    vi.view_steps = impl_->view_steps;  // a view of a view: one base, the steps joined
  else
    base = impl_;
  vi.view_base = base;
  vi.view_steps.push_back({op, std::move(arg), shape(), std::move(start)});
  push_weak(base->views, base->views_prune_at, v.impl_, 16);
  return v;
}

void Tensor::hold_own(const Tensor& fresh) {
  impl_->uop = fresh.uop();
  impl_->assign_target = nullptr;
  impl_->owns_buffer = true;
}

bool Tensor::holds_buffer() const {
  if (impl_->assign_target || schedule::is_contiguous_buffer(uop())) return true;
  // a multi-device tensor whose pieces are buffers
  return uop()->op == Ops::MULTI &&
         std::all_of(uop()->src.begin(), uop()->src.end(),
                     [](const UOpRef& p) { return schedule::is_contiguous_buffer(p); });
}

Tensor& Tensor::assign(const Tensor& x) {
  if (x.shape() != shape())
    fail("Tensor.assign: the value has shape %s, the tensor %s", fmt_shape(x.shape()),
         fmt_shape(shape()));
  // (a value on several devices written to a tensor on one is for realize to judge)
  std::vector<std::string> at = devices(), from = x.devices();
  const bool both = at.size() > 1 && from.size() > 1, neither = at.size() == 1 && from.size() == 1;
  if ((both && at != from) || (neither && x.device() != device()))
    fail("Tensor.assign: the value is on %s, the tensor on %s", absl::StrJoin(from, ", "),
         absl::StrJoin(at, ", "));
  Tensor value = x.dtype() == dtype() ? x : x.cast(dtype());
  if (std::shared_ptr<Impl> base = impl_->view_base.lock(); base && Tensor(base).holds_buffer()) {
    assign_through_view(Tensor(base), value);
    return *this;
  }
  // a view of a tensor without a buffer (an unrealized result) is written on its own
  impl_->view_base.reset();
  impl_->view_steps.clear();
  if (!impl_->assign_target && holds_buffer()) {
    // The first in-place write goes to a buffer of this tensor's own: the current one may be the
    // cached result of an interned graph that other tensors share (zeros(n).contiguous()). A
    // multi-device tensor gets one a piece.
    if (impl_->owns_buffer) {
      impl_->assign_target = uop();
    } else if (uop()->op == Ops::MULTI) {
      std::vector<UOpRef> pieces;
      for (const UOpRef& p : uop()->src)
        pieces.push_back(empty(p->shape(), dtype(), schedule::device_of(p)).uop());
      impl_->assign_target = schedule::make_multi(pieces, schedule::sharding_of(*uop()));
    } else {
      impl_->assign_target = empty(shape(), dtype(), device()).uop();
    }
    impl_->owns_buffer = true;
  }
  // Not set_uop: the new graph holds the old value, so it must not count as this tensor's past.
  impl_->uop = value.uop();
  if (AssignLog* log = AssignLog::current) log->assigned_.push_back(*this);
  update_views();
  return *this;
}

void Tensor::assign_through_view(Tensor base, const Tensor& x) {
  const std::vector<ViewStep>& steps = impl_->view_steps;
  // undo the steps, last first, on the value and on a mask of the elements it covers
  Tensor value = x, covered = full(shape(), true);
  for (size_t i = steps.size(); i-- > 0;) {
    const ViewStep& s = steps[i];
    // an expand repeats elements, a pad makes new ones: neither is one element each of the base
    if (s.op == Ops::EXPAND || s.op == Ops::PAD)
      fail(
          "Tensor.assign: cannot write through a view of shape %s that %s a tensor of shape %s "
          "(its elements are not one each of the base's); write into the base instead",
          fmt_shape(shape()), s.op == Ops::EXPAND ? "expands" : "pads", fmt_shape(s.in_shape));
    switch (s.op) {
      case Ops::RESHAPE:
        value = value.reshape(s.in_shape), covered = covered.reshape(s.in_shape);
        break;
      case Ops::PERMUTE: {
        const std::vector<int64_t>& order = std::get<std::vector<int64_t>>(s.arg);
        std::vector<int> inverse(order.size());
        for (size_t a = 0; a < order.size(); a++) inverse[order[a]] = static_cast<int>(a);
        value = value.permute(inverse), covered = covered.permute(inverse);
        break;
      }
      case Ops::SHRINK: {
        const std::vector<int64_t>& r = std::get<std::vector<int64_t>>(s.arg);
        if (s.start) {  // shrink_from: base position j takes the value's j - start, if inside
          int d = static_cast<int>(r[0]);
          int64_t length = r[1], n = s.in_shape[d];
          Shape along(s.in_shape.size(), 1);
          along[d] = n;
          Tensor j = arange(0, static_cast<double>(n), 1, dtypes::int32).reshape(along);
          Tensor from = j.sub(Tensor(s.start).cast(dtypes::int32));
          Tensor inside = from.ge(0).bitwise_and(from.lt(length));
          Tensor index = from.clip(0, std::max<int64_t>(length - 1, 0)).expand(s.in_shape);
          value = value.gather(d, index), covered = covered.gather(d, index).bitwise_and(inside);
          break;
        }
        std::vector<std::pair<int64_t, int64_t>> pad;
        for (size_t a = 0; a < s.in_shape.size(); a++)
          pad.push_back({r[2 * a], s.in_shape[a] - r[2 * a + 1]});
        value = value.pad(pad), covered = covered.pad(pad);
        break;
      }
      case Ops::FLIP: {
        std::vector<int> axes;
        for (int64_t a : std::get<std::vector<int64_t>>(s.arg)) axes.push_back(static_cast<int>(a));
        value = value.flip(axes), covered = covered.flip(axes);
        break;
      }
      default:  // DETACH: the same elements
        break;
    }
  }
  base.assign(covered.where(value, base));  // every view of the base, this one too, follows
}

void Tensor::update_views() {
  for (const std::weak_ptr<Impl>& w : impl_->views) {
    std::shared_ptr<Impl> v = w.lock();
    if (!v || v->view_base.lock() != impl_) continue;
    Tensor t(uop());
    for (const ViewStep& s : v->view_steps) {
      switch (s.op) {
        case Ops::RESHAPE:
          t = t.reshape(std::get<std::vector<int64_t>>(s.arg));
          break;
        case Ops::DETACH:
          t = Tensor(tc::detach(t.uop()));
          break;
        case Ops::SHRINK:
          if (s.start) {
            const std::vector<int64_t>& r = std::get<std::vector<int64_t>>(s.arg);
            t = t.shrink_from(static_cast<int>(r[0]), Tensor(s.start), r[1]);
            break;
          }
          [[fallthrough]];
        default:
          t = Tensor(UOp::make(s.op, t.dtype(), {t.uop()}, s.arg));
      }
    }
    v->uop = t.uop();
    v->assign_target = nullptr;  // its value is the base's again, not a buffer of its own
    v->owns_buffer = false;
  }
}

std::vector<std::shared_ptr<Tensor::Impl>> Tensor::live_tensors(
    const std::function<bool(const Impl&)>& skip) {
  std::vector<std::shared_ptr<Impl>> out;
  LiveTensors& l = LiveTensors::get();
  std::lock_guard<std::mutex> lock(l.mu);
  for (Impl* p = l.head; p; p = p->live_next)
    if (!skip(*p))
      if (std::shared_ptr<Impl> s = p->weak_from_this().lock()) out.push_back(std::move(s));
  return out;
}

namespace {
// The first of `roots` whose graph reaches `target`, or null. One walk over all the graphs: a
// node they share is visited once.
const UOp* first_reader(const std::vector<UOpRef>& roots, const UOp* target) {
  absl::flat_hash_set<const UOp*> seen;
  for (const UOpRef& root : roots) {
    std::vector<const UOp*> stack = {root.get()};
    while (!stack.empty()) {
      const UOp* u = stack.back();
      stack.pop_back();
      if (u == target) return root.get();
      if (!seen.insert(u).second) continue;
      for (const UOpRef& s : u->src) stack.push_back(s.get());
    }
  }
  return nullptr;
}
}  // namespace

void Tensor::check_no_other_readers(const Tensor& value, const Impl* view) const {
  const std::vector<const UOp*>& mine = uop()->toposort();
  if (std::none_of(mine.begin(), mine.end(), [](const UOp* u) { return u->op == Ops::BUFFER; }))
    return;  // a graph of constants: nothing a reader could see change
  const bool buffer = holds_buffer();
  if (buffer && !impl_->owns_buffer) return;  // written into a buffer of its own: none is changed
  // Not readers: views of this tensor's buffer (they follow the write by design), and the
  // value's own graph (t[1] += 2 reads t[1]). Views of an unrealized result are (as tinygrad).
  const UOp* base = movement_base(uop().get());
  const UOp* shared = base->op == Ops::BUFFER ? base : nullptr;
  const std::vector<const UOp*>& value_nodes = value.uop()->toposort();
  absl::flat_hash_set<const UOp*> value_graph(value_nodes.begin(), value_nodes.end());
  std::vector<UOpRef> roots;
  for (const std::shared_ptr<Impl>& p : live_tensors([&](const Impl& p) {
         return &p == impl_.get() || &p == view || (buffer && p.view_base.lock() == impl_) ||
                value_graph.contains(p.uop.get()) ||
                (shared && movement_base(p.uop.get()) == shared);
       }))
    roots.push_back(p->uop);
  const UOp* reader = first_reader(roots, uop().get());
  if (!reader) return;
  fail(
      "Tensor.setitem: the tensor of shape %s is still read by an unrealized tensor of shape %s "
      "(%s); writing now would change what that tensor computes. Realize it first, or write "
      "into a clone()",
      fmt_shape(shape()), fmt_shape(reader->shape()), op_name(reader->op));
}

thread_local AssignLog* AssignLog::current = nullptr;
AssignLog::AssignLog() : prev_(current) { current = this; }
AssignLog::~AssignLog() { current = prev_; }

std::vector<Tensor> AssignLog::with_pending(std::vector<Tensor> tensors) const {
  absl::flat_hash_set<const Tensor::Impl*> seen;
  for (const Tensor& t : tensors) seen.insert(t.impl_.get());
  for (const Tensor& t : assigned_)
    if (t.impl_->assign_target && seen.insert(t.impl_.get()).second) tensors.push_back(t);
  return tensors;
}

// ---------------------------------------------------------------- in-place operators

Tensor& operator+=(Tensor& a, const Tensor& b) { return a.assign(a.add(b)); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.assign(a.sub(b)); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.assign(a.mul(b)); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.assign(a.div(b)); }
Tensor& operator&=(Tensor& a, const Tensor& b) { return a.assign(a.bitwise_and(b)); }
Tensor& operator|=(Tensor& a, const Tensor& b) { return a.assign(a.bitwise_or(b)); }
Tensor& operator^=(Tensor& a, const Tensor& b) { return a.assign(a.bitwise_xor(b)); }
Tensor& operator+=(Tensor& a, ConstValue b) { return a.assign(a.add(b)); }
Tensor& operator-=(Tensor& a, ConstValue b) { return a.assign(a.sub(b)); }
Tensor& operator*=(Tensor& a, ConstValue b) { return a.assign(a.mul(b)); }
Tensor& operator/=(Tensor& a, ConstValue b) { return a.assign(a.div(b)); }
Tensor& operator<<=(Tensor& a, int64_t n) { return a.assign(a.lshift(n)); }
Tensor& operator>>=(Tensor& a, int64_t n) { return a.assign(a.rshift(n)); }

}  // namespace tc
