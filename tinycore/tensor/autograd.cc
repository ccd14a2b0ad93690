// Autograd: requires_grad, grad, detach, gradient() and backward(), which rewrite the UOp graph
// with the rules of tinycore/gradient.h; a NoGrad guard turns backward() off for a scope.
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "tinycore/gradient.h"
#include "tinycore/tensor.h"

namespace tc {

namespace {
thread_local bool no_grad_active = false;
}  // namespace

NoGrad::NoGrad() : prev_(no_grad_active) { no_grad_active = true; }
NoGrad::~NoGrad() { no_grad_active = prev_; }
bool Tensor::no_grad() { return no_grad_active; }

Tensor& Tensor::requires_grad_(bool requires_grad) {
  // Equal constants are one interned node (zeros(n) made twice is one graph): a constant that
  // becomes a parameter gets a buffer of its own first, so its gradient is its own.
  const auto& nodes = uop()->toposort();
  bool constant = std::none_of(nodes.begin(), nodes.end(), [](const UOp* u) {
    return u->op == Ops::BUFFER || u->op == Ops::DEFINE_VAR;
  });
  if (requires_grad && constant) {
    Tensor own = empty(shape(), dtype());
    own.assign(*this).realize();
    hold_own(own);
  }
  impl_->requires_grad = requires_grad;
  return *this;
}
bool Tensor::requires_grad() const { return impl_->requires_grad.value_or(false); }
std::optional<bool> Tensor::requires_grad_state() const { return impl_->requires_grad; }
Tensor& Tensor::requires_grad_maybe_() {
  impl_->requires_grad = std::nullopt;
  return *this;
}

std::optional<Tensor> Tensor::grad() const {
  if (!impl_->grad) return std::nullopt;
  return Tensor(impl_->grad);
}
void Tensor::set_grad(std::optional<Tensor> grad) {
  if (grad && grad->shape() != shape())
    fail("Tensor.set_grad: a grad of shape %s for a tensor of shape %s", fmt_shape(grad->shape()),
         fmt_shape(shape()));
  impl_->grad = grad ? grad->impl_ : nullptr;
}

Tensor Tensor::detach() const { return view_of(tc::detach(uop()), Ops::DETACH, {}); }

std::vector<UOpRef> Tensor::grad_nodes() const {
  auto strip = [](UOpRef u) {
    while (u->op == Ops::RESHAPE) u = u->src[0];
    return u;
  };
  std::vector<UOpRef> out = {strip(uop())};
  for (const std::weak_ptr<const UOp>& w : impl_->before_realize)
    if (UOpRef u = w.lock()) out.push_back(strip(u));
  return out;
}

std::vector<Tensor> Tensor::gradient_of(const UOpRef& root, const UOpRef& root_grad,
                                        const std::vector<Tensor>& targets) {
  std::vector<std::vector<UOpRef>> nodes;
  std::vector<UOpRef> all;
  for (const Tensor& t : targets) {
    nodes.push_back(t.grad_nodes());
    all.insert(all.end(), nodes.back().begin(), nodes.back().end());
  }
  GradientMap grads = compute_gradient(root, root_grad, all);
  std::vector<Tensor> out;
  for (size_t i = 0; i < targets.size(); i++) {
    std::optional<Tensor> sum;
    for (const UOpRef& n : nodes[i]) {
      auto it = grads.find(n.get());
      if (it == grads.end()) continue;
      Tensor g = Tensor(it->second).reshape(targets[i].shape());
      sum = sum ? sum->add(g) : g;
    }
    out.push_back(sum ? *sum : zeros(targets[i].shape(), targets[i].dtype()));
  }
  return out;
}

namespace {
// The gradient flowing into `t` for gradient()/backward(): 1 for a scalar, else `given`.
UOpRef root_gradient(const char* name, const Tensor& t, const std::optional<Tensor>& given) {
  if (!dtypes::is_float(t.dtype()))
    fail("Tensor.%s: only float Tensors have gradient, this tensor is %s", name, t.dtype().name());
  if (!given) {
    if (t.ndim() != 0)
      fail(
          "Tensor.%s: when no gradient is provided, %s must be called on a scalar tensor, got "
          "shape "
          "%s",
          name, name, fmt_shape(t.shape()));
    return UOp::const_(t.dtype(), 1.0);
  }
  if (given->shape() != t.shape())
    fail("Tensor.%s: gradient of shape %s does not match the tensor's shape %s", name,
         fmt_shape(given->shape()), fmt_shape(t.shape()));
  return given->cast(t.dtype()).uop();
}
}  // namespace

std::vector<Tensor> Tensor::gradient(const std::vector<Tensor>& targets,
                                     std::optional<Tensor> gradient) const {
  UOpRef g = root_gradient("gradient", *this, gradient);
  for (size_t i = 0; i < targets.size(); i++)
    if (!dtypes::is_float(targets[i].dtype()))
      fail("Tensor.gradient: only float Tensors have gradient, target %d is %s", i,
           targets[i].dtype().name());
  return gradient_of(uop(), g, targets);
}

Tensor& Tensor::backward(std::optional<Tensor> gradient) {
  UOpRef g = root_gradient("backward", *this, gradient);
  if (no_grad()) return *this;

  // the parameters this graph depends on (backward fills a grad for each, zeros when the
  // dependence is only through something without a gradient, as tinygrad)
  absl::flat_hash_set<const UOp*> in_graph;
  for (const UOp* u : uop()->toposort()) in_graph.insert(u);
  std::vector<std::shared_ptr<Impl>> params;
  std::vector<Tensor> targets;
  for (std::shared_ptr<Impl>& p :
       live_tensors([](const Impl& p) { return p.requires_grad == false; })) {
    Tensor t(p);
    if (!dtypes::is_float(t.dtype())) continue;
    std::vector<UOpRef> nodes = t.grad_nodes();
    // a bare CONST is shared by every equal constant in the graph: no grad (as tinygrad)
    if (nodes[0]->op == Ops::CONST) continue;
    bool used = false;
    for (const UOpRef& n : nodes) used = used || in_graph.contains(n.get());
    if (!used) continue;
    targets.push_back(t);
    params.push_back(std::move(p));
  }
  if (params.empty()) return *this;
  std::vector<Tensor> grads = gradient_of(uop(), g, targets);
  for (size_t i = 0; i < params.size(); i++) {
    Impl& p = *params[i];
    if (!p.grad) {
      p.grad = grads[i].impl_;
    } else {  // accumulate in place, so every handle to the grad sees the sum
      p.grad->uop = Tensor(p.grad).add(grads[i]).uop();
    }
  }
  return *this;
}

}  // namespace tc
