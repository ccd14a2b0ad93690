// The handle: its size and device, moves between devices, clone and replace, and running its graph
// (realize, realize_all) with the host reads behind data(), item() and host_data().
#include "tinycore/tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "tinycore/engine/realize.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/runtime/device.h"
#include "tinycore/schedule/multi.h"
#include "tinycore/schedule/schedule.h"
#include "tinycore/tensor/internal.h"

namespace tc {

int64_t Tensor::numel() const { return shape_numel(shape()); }

std::string Tensor::device() const { return schedule::device_of(uop()); }

// ---------------------------------------------------------------- properties

int64_t Tensor::element_size() const { return dtype().itemsize(); }
int64_t Tensor::nbytes() const { return numel() * element_size(); }
bool Tensor::is_floating_point() const { return dtypes::is_float(dtype()); }
Shape Tensor::size() const { return shape(); }
int64_t Tensor::size(int dim) const {
  return shape()[detail::resolve_dim("size", *this, dim, detail::Dims::kExisting)];
}

// ---------------------------------------------------------------- devices, clone, replace

Tensor Tensor::to(const std::string& device) const {
  std::string name;
  try {
    name = runtime::get_device(device).name();
  } catch (const Error& e) {
    fail("Tensor.to: no device \"%s\" (%s)", device, e.what());
  }
  // a multi-device value is gathered on the device lazily, its pieces copied there
  if (uop()->op == Ops::MULTI || devices().size() > 1)
    return Tensor(UOp::make(Ops::COPY, dtype(), {uop()}, name));
  if (name == this->device()) return *this;
  std::vector<uint8_t> host = bytes();
  Tensor out = from_blob(host.data(), shape(), dtype(), name);
  if (impl_->grad) out.impl_->grad = Tensor(impl_->grad).to(name).impl_;
  if (requires_grad()) out.requires_grad_();
  return out;
}

Tensor& Tensor::to_(const std::string& device) {
  Tensor moved = to(device);
  if (moved.impl_ == impl_) return *this;
  return replace(moved);
}

Tensor Tensor::shard(const std::vector<std::string>& devices, std::optional<int> axis) const {
  if (std::vector<std::string> now = this->devices(); now.size() > 1 || now[0] != device())
    fail("Tensor.shard: the tensor is on several devices already (%s)", absl::StrJoin(now, ", "));
  if (devices.empty()) fail("Tensor.shard: no devices given");
  schedule::check_shard_devices(devices);
  int a = axis ? detail::resolve_dim("shard", *this, *axis, detail::Dims::kExisting) : -1;
  std::vector<UOpRef> pieces(devices.size(), uop());  // a whole copy each, or a piece each:
  if (a >= 0) {
    auto bounds = schedule::split_bounds(shape()[a], static_cast<int>(devices.size()));
    for (size_t d = 0; d < devices.size(); d++)
      pieces[d] = shrink(detail::range_on(*this, a, bounds[d].first, bounds[d].second)).uop();
  }
  for (size_t d = 0; d < devices.size(); d++) pieces[d] = schedule::placed(pieces[d], devices[d]);
  Tensor out(schedule::make_multi(std::move(pieces), {a, devices}));
  if (requires_grad()) out.requires_grad_();
  return out;
}

Tensor& Tensor::shard_(const std::vector<std::string>& devices, std::optional<int> axis) {
  return replace(shard(devices, axis));
}

std::vector<std::string> Tensor::devices() const {
  // a graph over multi-device tensors runs on theirs, unless it copies them to one device; with
  // none alive anywhere (a one-device program: every assign asks), no walk of the graph
  if (UOp::live_count(Ops::MULTI) == 0) return {device()};
  absl::flat_hash_set<const UOp*> seen = {uop().get()};
  for (std::vector<const UOp*> pending = {uop().get()}; !pending.empty();) {
    const UOp* u = pending.back();
    pending.pop_back();
    if (u->op == Ops::MULTI) return schedule::sharding_of(*u).devices;
    if (u->op != Ops::COPY)
      for (const UOpRef& s : u->src)
        if (seen.insert(s.get()).second) pending.push_back(s.get());
  }
  return {device()};
}

std::optional<int> Tensor::shard_axis() const {
  // the split of what the graph computes
  UOpRef lowered = devices().size() > 1 ? schedule::lower_multi(uop()) : uop();
  int axis = lowered->op == Ops::MULTI ? schedule::sharding_of(*lowered).axis : -1;
  return axis >= 0 ? std::optional<int>(axis) : std::nullopt;
}

Tensor Tensor::clone() const {
  // Into a new buffer of its own: contiguous() alone of a realized buffer is that buffer, which
  // a write to this tensor would change. Its value is a node of its own (contiguous()), so that
  // a setitem on the clone is not taken for a write to the graph this tensor holds.
  Tensor ret = empty(shape(), dtype(), device());
  ret.assign(contiguous());
  if (impl_->grad) ret.impl_->grad = Tensor(impl_->grad).clone().impl_;
  if (requires_grad()) ret.requires_grad_();
  return ret;
}

Tensor& Tensor::replace(const Tensor& x) {
  if (x.shape() != shape())
    fail("Tensor.replace: shape mismatch, the tensor is %s and the replacement %s",
         fmt_shape(shape()), fmt_shape(x.shape()));
  impl_->uop = x.uop();
  // the new graph's buffer may be another tensor's: a later assign must not write it in place
  impl_->assign_target = nullptr;
  impl_->owns_buffer = false;
  impl_->view_base.reset();  // no longer a view: its value is x's
  impl_->view_steps.clear();
  return *this;
}

void Tensor::Impl::set_uop(UOpRef u) {
  if (u == uop) return;
  std::erase_if(before_realize, [](const std::weak_ptr<const UOp>& w) { return w.expired(); });
  // the reshape-free node: a graph built from a reshape of this tensor holds that, not `uop`
  UOpRef base = uop;
  while (base->op == Ops::RESHAPE) base = base->src[0];
  // A constant (zeros, full) is interned: every equal constant in any graph is that node, so it
  // is no mark of this tensor (a loss holding zeros of the same shape would send its gradient
  // here).
  const UOp* c = base.get();
  while (group::is_movement(c->op) || c->op == Ops::CAST) c = c->src[0].get();
  if (c->op != Ops::CONST && c->op != Ops::IOTA) before_realize.push_back(base);
  uop = std::move(u);
}

// ---------------------------------------------------------------- realize

Tensor& Tensor::realize() {
  realize_all({*this});
  return *this;
}

void Tensor::realize_each(const std::vector<Tensor>& tensors) {
  std::vector<UOpRef> roots, targets;
  for (const Tensor& t : tensors) {
    roots.push_back(t.uop());
    targets.push_back(t.impl_->assign_target);
  }
  std::vector<UOpRef> views = engine::realize(roots, targets);
  for (size_t i = 0; i < tensors.size(); i++) {
    Impl& t = *tensors[i].impl_;
    bool assigned = t.assign_target != nullptr;
    t.set_uop(views[i]);
    t.assign_target = nullptr;
    // its views read the graph it had: that read its buffer's old contents
    if (assigned) Tensor(tensors[i]).update_views();
  }
}

void realize_all(const std::vector<Tensor>& tensors) {
  // A view of a tensor whose write is pending realizes that tensor: the write lands in its
  // buffer, and the view then reads that buffer (a copy of it only where it is no plain reshape).
  std::vector<Tensor> to_realize;
  absl::flat_hash_set<const Tensor::Impl*> seen;
  std::vector<Tensor> views;
  for (const Tensor& t : tensors) {
    std::shared_ptr<Tensor::Impl> base = t.impl_->view_base.lock();
    Tensor r = base && base->assign_target ? Tensor(base) : t;
    if (r.impl_ != t.impl_) views.push_back(t);
    if (seen.insert(r.impl_.get()).second) to_realize.push_back(r);
  }
  Tensor::realize_each(to_realize);
  std::vector<Tensor> copies;
  for (const Tensor& v : views)
    if (!schedule::is_contiguous_buffer(v.uop()) && seen.insert(v.impl_.get()).second)
      copies.push_back(v);
  if (!copies.empty()) Tensor::realize_each(copies);
}

// The buffer holding the realized contents (realized now if needed), for a host read.
std::shared_ptr<runtime::Buffer> Tensor::realized_buffer(const char* reader) const {
  if (engine::LaunchCapture::active())
    jit_fail(
        "Tensor.%s inside a TinyJit function: the value read now would not change on replay; "
        "return the tensor from the function instead",
        reader);
  UOpRef view = engine::realize({uop()})[0];
  if (view->op == Ops::MULTI) view = engine::realize({schedule::gathered(view, "CPU")})[0];
  return schedule::base_buffer(view)->buffer;
}

std::vector<uint8_t> Tensor::bytes() const {
  std::shared_ptr<runtime::Buffer> b = realized_buffer("data/item/tolist");
  std::vector<uint8_t> out(b->nbytes());
  b->copyout(out.data(), out.size());
  return out;
}

std::shared_ptr<const void> Tensor::host_data() const {
  std::shared_ptr<runtime::Buffer> b = realized_buffer("host_data");
  if (b->device().name() != "CPU") return nullptr;
  return std::shared_ptr<const void>(b, b->ensure_allocated());
}

}  // namespace tc
