#include "nn/optim.h"

#include <algorithm>

#include "tinycore/error.h"

namespace tc::nn {

Optimizer::Optimizer(std::vector<Tensor> params, double lr) : lr_(state_tensor({1}, lr)) {
  for (Tensor& p : params) {
    bool seen = false;
    for (const Tensor& q : params_) seen = seen || q.is_same_tensor(p);
    if (seen) continue;
    if (!dtypes::is_float(p.dtype()))
      fail("Optimizer: parameter %d has dtype %s; parameters must be float", params_.size(),
           p.dtype().name());
    p.requires_grad_();
    params_.push_back(p);
  }
  if (params_.empty()) fail("Optimizer: no parameters to optimize");
}

void Optimizer::zero_grad() {
  for (Tensor& p : params_) p.set_grad({});
}

void Optimizer::set_lr(double lr) {
  lr_.assign(Tensor(std::vector<float>{static_cast<float>(lr)}, Shape{1})).realize();
}

std::vector<Tensor> Optimizer::zeros_like_params() const {
  std::vector<Tensor> out;
  for (const Tensor& p : params_) out.push_back(state_tensor(p.shape(), 0));
  return out;
}

void Optimizer::assign_state(Tensor& s, const Tensor& v) const {
  s.assign(apply_ ? apply_->where(v, s) : v);
}

std::vector<Tensor> Optimizer::schedule_step(const std::optional<Tensor>& apply) {
  if (apply && (apply->ndim() != 0 || !dtypes::is_bool(apply->dtype())))
    fail("Optimizer.step: apply must be a 0-d bool tensor, got %s %s", apply->dtype().name(),
         fmt_shape(apply->shape()));
  std::vector<Tensor> grads;
  for (size_t i = 0; i < params_.size(); i++) {
    std::optional<Tensor> g = params_[i].grad();
    if (!g)
      fail("Optimizer.step: parameter %d (shape %s) has no gradient; call backward() first", i,
           fmt_shape(params_[i].shape()));
    grads.push_back(*g);
  }
  std::vector<Tensor> state;
  apply_ = apply;
  std::vector<Tensor> updated = update(grads, state);
  for (size_t i = 0; i < params_.size(); i++) assign_state(params_[i], updated[i]);
  apply_.reset();
  state.insert(state.end(), params_.begin(), params_.end());
  return state;
}

void Optimizer::step() { realize_all(schedule_step()); }

StateDict Optimizer::state_dict() const {
  StateDict out{{"lr", lr_}};
  add_state(out);
  return out;
}

namespace {
void add_indexed(StateDict& out, const std::string& name, const std::vector<Tensor>& tensors) {
  for (size_t i = 0; i < tensors.size(); i++)
    out.emplace(name + "." + std::to_string(i), tensors[i]);
}
}  // namespace

// ---------------------------------------------------------------- LARS, SGD, Muon

LARS::LARS(std::vector<Tensor> params, LARSOpts opts)
    : Optimizer(std::move(params), opts.lr), o_(opts) {
  if (o_.momentum != 0) momentum_ = zeros_like_params();
}

std::vector<Tensor> LARS::update(const std::vector<Tensor>& grads, std::vector<Tensor>& state) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < params_.size(); i++) {
    Tensor t = params_[i].detach(), g = grads[i];
    std::optional<Tensor> r;  // the trust ratio; none means 1
    if (o_.tcoef != 0) {
      Tensor r1 = t.square().sum().sqrt(), r2 = g.square().sum().sqrt();
      r = r1.gt(0.0).where(r2.gt(0.0).where(r1 * o_.tcoef / (r2 + r1 * o_.weight_decay), 1.0), 1.0);
    }
    auto scaled = [&](const Tensor& x) { return (r ? x * *r : x) * lr_; };
    if (o_.weight_decay > 0) g = g + t * o_.weight_decay;
    if (o_.classic) g = scaled(g);
    if (o_.momentum != 0) {
      assign_state(momentum_[i], momentum_[i] * o_.momentum + g);
      g = o_.nesterov ? g + momentum_[i] * o_.momentum : momentum_[i];
    }
    if (o_.ns_params) {
      Shape shape = g.shape();
      int64_t rows = shape.empty() ? 1 : shape[0];
      g = newton_schulz(g.reshape({rows, -1}), 5, *o_.ns_params).reshape(shape);
    }
    if (!o_.classic) g = scaled(g);
    out.push_back((t - g).cast(params_[i].dtype()));
  }
  state = momentum_;
  return out;
}

void LARS::add_state(StateDict& out) const { add_indexed(out, "momentum", momentum_); }

SGD::SGD(std::vector<Tensor> params, SGDOpts o)
    : LARS(std::move(params), {.lr = o.lr,
                               .momentum = o.momentum,
                               .weight_decay = o.weight_decay,
                               .nesterov = o.nesterov,
                               .classic = o.classic,
                               .tcoef = 0,
                               .ns_params = {}}) {}

Muon::Muon(std::vector<Tensor> params, MuonOpts o)
    : LARS(std::move(params), {.lr = o.lr,
                               .momentum = o.momentum,
                               .weight_decay = o.weight_decay,
                               .nesterov = o.nesterov,
                               .classic = o.classic,
                               .tcoef = 0,
                               .ns_params = o.ns_params}) {}

// ---------------------------------------------------------------- LAMB, Adam, AdamW

LAMB::LAMB(std::vector<Tensor> params, LAMBOpts opts)
    : Optimizer(std::move(params), opts.lr),
      o_(opts),
      b1_t_(state_tensor({1}, 1)),
      b2_t_(state_tensor({1}, 1)),
      m_(zeros_like_params()),
      v_(zeros_like_params()) {}

std::vector<Tensor> LAMB::update(const std::vector<Tensor>& grads, std::vector<Tensor>& state) {
  assign_state(b1_t_, b1_t_ * o_.b1);
  assign_state(b2_t_, b2_t_ * o_.b2);
  std::vector<Tensor> out;
  for (size_t i = 0; i < params_.size(); i++) {
    Tensor t = params_[i].detach(), g = grads[i];
    assign_state(m_[i], m_[i] * o_.b1 + g * (1.0 - o_.b1));
    assign_state(v_[i], v_[i] * o_.b2 + (g * g) * (1.0 - o_.b2));
    Tensor m_hat = m_[i] / (1.0 - b1_t_), v_hat = v_[i] / (1.0 - b2_t_);
    Tensor up = m_hat / (v_hat.sqrt() + o_.eps) + t * o_.weight_decay;
    if (!o_.adam) {
      Tensor r1 = t.square().sum().sqrt(), r2 = up.square().sum().sqrt();
      up = up * r1.gt(0.0).where(r2.gt(0.0).where(r1 / r2, 1.0), 1.0);
    }
    out.push_back((t - lr_ * up).cast(params_[i].dtype()));
  }
  state = {b1_t_, b2_t_};
  state.insert(state.end(), m_.begin(), m_.end());
  state.insert(state.end(), v_.begin(), v_.end());
  return out;
}

void LAMB::add_state(StateDict& out) const {
  out.emplace("b1_t", b1_t_);
  out.emplace("b2_t", b2_t_);
  add_indexed(out, "m", m_);
  add_indexed(out, "v", v_);
}

Adam::Adam(std::vector<Tensor> params, AdamOpts o)
    : LAMB(std::move(params),
           {.lr = o.lr, .b1 = o.b1, .b2 = o.b2, .eps = o.eps, .weight_decay = 0, .adam = true}) {}

AdamW::AdamW(std::vector<Tensor> params, AdamWOpts o)
    : LAMB(std::move(params), {.lr = o.lr,
                               .b1 = o.b1,
                               .b2 = o.b2,
                               .eps = o.eps,
                               .weight_decay = o.weight_decay,
                               .adam = true}) {}

// ---------------------------------------------------------------- helpers

Tensor newton_schulz(const Tensor& x, int steps, const std::array<double, 3>& params, double eps) {
  if (x.ndim() != 2) fail("newton_schulz: needs a 2-D tensor, got shape %s", fmt_shape(x.shape()));
  const auto [a, b, c] = params;
  Tensor X = x / (x.square().sum().sqrt() + eps);
  bool tall = x.shape()[0] > x.shape()[1];
  if (tall) X = X.T();
  for (int s = 0; s < steps; s++) {
    Tensor A = X.matmul(X.T());
    Tensor B = A * b + A.matmul(A) * c;
    X = X * a + B.matmul(X);
  }
  return tall ? X.T() : X;
}

Tensor clip_grad_norm(std::vector<Tensor> params, double max_norm) {
  std::optional<Tensor> sq;
  for (const Tensor& p : params)
    if (std::optional<Tensor> g = p.grad()) {
      Tensor s = g->cast(dtypes::float32).square().sum();
      sq = sq ? *sq + s : s;
    }
  if (!sq) fail("clip_grad_norm: none of the %d parameters has a gradient", params.size());
  Tensor norm = sq->sqrt();
  Tensor scale = (max_norm / (norm + 1e-6)).minimum(1.0);
  for (Tensor& p : params)
    if (std::optional<Tensor> g = p.grad()) p.set_grad(*g * scale.cast(g->dtype()));
  return norm;
}

}  // namespace tc::nn
