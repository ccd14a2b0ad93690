// Optimizers, as tinygrad's nn/optim.py: each step is a lazily built update that assigns every
// parameter (and its state) in place and realizes in one schedule, so a TinyJit step captures it.
// The learning rate is a realized tensor: set_lr() writes it in place, so schedules work under the
// JIT too. Results match PyTorch's optimizers step for step (tests/nn/optim_test.cc).
//
//   SGD, Muon      are LARS with the trust ratio off (Muon orthogonalizes 2-D updates)
//   Adam, AdamW    are LAMB with the trust ratio off
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "nn/state.h"
#include "tinycore/tensor.h"

namespace tc::nn {

class Optimizer {
 public:
  // Parameters are marked requires_grad. Throws on an empty list or a non-float parameter.
  Optimizer(std::vector<Tensor> params, double lr);
  virtual ~Optimizer() = default;

  void zero_grad();  // clears every parameter's grad
  void step();       // realizes schedule_step()
  // Assigns the updates; returns what to realize. Where `apply` (a 0-d bool tensor) is false
  // the step is skipped: parameters and state keep their values (a GradScaler that found an inf
  // or NaN in the gradients), decided when the step runs, so a TinyJit captures both outcomes.
  std::vector<Tensor> schedule_step(const std::optional<Tensor>& apply = {});
  const Tensor& lr() const { return lr_; }
  void set_lr(double lr);  // in place: a captured step sees it
  const std::vector<Tensor>& params() const { return params_; }
  // Handles to the state the steps assign, by name ("lr", "b1_t", "m.3", "momentum.0"): save it
  // with safe_save, restore it with load_state_dict (which assigns through these handles).
  StateDict state_dict() const;

 protected:
  virtual void add_state(StateDict& out) const { (void)out; }  // the subclass's own state
  // The new value of each parameter from its gradient, and the state tensors to realize with it.
  virtual std::vector<Tensor> update(const std::vector<Tensor>& grads,
                                     std::vector<Tensor>& state) = 0;
  std::vector<Tensor> zeros_like_params() const;  // realized float32 state, one per parameter
  // s.assign(v), or s kept where this step is skipped (schedule_step's `apply`).
  void assign_state(Tensor& s, const Tensor& v) const;
  std::vector<Tensor> params_;
  Tensor lr_;
  std::optional<Tensor> apply_;  // of the step being built
};

struct LARSOpts {
  double lr = 0.001, momentum = 0.9, weight_decay = 1e-4;
  bool nesterov = false;
  bool classic = true;   // the learning rate applied before the momentum (LARS paper), else after
  double tcoef = 0.001;  // trust coefficient; 0 turns the trust ratio off
  // Newton-Schulz coefficients (a, b, c): orthogonalize each update (Muon)
  std::optional<std::array<double, 3>> ns_params = {};
};

class LARS : public Optimizer {
 public:
  LARS(std::vector<Tensor> params, LARSOpts opts);

 protected:
  std::vector<Tensor> update(const std::vector<Tensor>& grads, std::vector<Tensor>& state) override;
  void add_state(StateDict& out) const override;
  LARSOpts o_;
  std::vector<Tensor> momentum_;
};

struct SGDOpts {
  double lr = 0.001, momentum = 0, weight_decay = 0;
  bool nesterov = false, classic = false;
};
class SGD : public LARS {
 public:
  SGD(std::vector<Tensor> params, SGDOpts opts = {});
};

struct MuonOpts {
  double lr = 3e-3, momentum = 0.96, weight_decay = 0;
  bool nesterov = true, classic = false;
  std::array<double, 3> ns_params = {3.4445, -4.7750, 2.0315};
};
class Muon : public LARS {
 public:
  Muon(std::vector<Tensor> params, MuonOpts opts = {});
};

struct LAMBOpts {
  double lr = 0.001, b1 = 0.9, b2 = 0.999, eps = 1e-6, weight_decay = 0;
  bool adam = false;  // trust ratio off
};
class LAMB : public Optimizer {
 public:
  LAMB(std::vector<Tensor> params, LAMBOpts opts = {});

 protected:
  std::vector<Tensor> update(const std::vector<Tensor>& grads, std::vector<Tensor>& state) override;
  void add_state(StateDict& out) const override;
  LAMBOpts o_;
  Tensor b1_t_, b2_t_;  // b1^t and b2^t
  std::vector<Tensor> m_, v_;
};

struct AdamOpts {
  double lr = 0.001, b1 = 0.9, b2 = 0.999, eps = 1e-8;
};
class Adam : public LAMB {
 public:
  Adam(std::vector<Tensor> params, AdamOpts opts = {});
};

struct AdamWOpts {
  double lr = 0.001, b1 = 0.9, b2 = 0.999, eps = 1e-8, weight_decay = 0.01;
};
class AdamW : public LAMB {
 public:
  AdamW(std::vector<Tensor> params, AdamWOpts opts = {});
};

// X orthogonalized by `steps` Newton-Schulz iterations with coefficients (a, b, c), as in Muon:
// X / |X| then X <- a X + (b A + c A A) X with A = X X^T (on the transpose when rows > cols).
Tensor newton_schulz(const Tensor& x, int steps, const std::array<double, 3>& params,
                     double eps = 1e-7);

// Scales every parameter's gradient so their global L2 norm is at most max_norm (lazily, as a
// graph); returns the norm before clipping, as a 0-d tensor.
Tensor clip_grad_norm(std::vector<Tensor> params, double max_norm);  // handles share the grads

}  // namespace tc::nn
