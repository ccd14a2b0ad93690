"""Optimizers with tinygrad's signatures (tinygrad.nn.optim): SGD and Muon are LARS, Adam and
AdamW are LAMB, and the update itself is nn/optim.h's. step() builds the update lazily (every
parameter and state tensor assigned in place) and realizes it with the model's buffers, as
tinygrad does, so a TinyJit that runs a training step captures it.

The tensors an optimizer is given are split as tinygrad splits them: trainable parameters, and
buffers (a BatchNorm's running statistics, marked by nn.state.get_parameters) that each step only
realizes."""
from tinycore import _C
from tinycore._C import Tensor
from tinycore.helpers import Device

_native = _C.nn


def _is_buffer(t) -> bool:
  return getattr(t, "_nn_buffer", False)


class Optimizer:
  """What every optimizer has: params, buffers, lr (a realized (1,) tensor), zero_grad(), step(),
  schedule_step()."""

  def __init__(self, params, device=None, fused=False):
    if fused: raise ValueError("tinycore's optimizers have no fused form (fused=True)")
    params = list(params)
    for t in params:
      if not isinstance(t, Tensor): raise TypeError(f"optimizer parameters must be Tensors, got {type(t).__name__}")
    self.buffers = [t for t in params if _is_buffer(t)]
    self._trainable = [t for t in params if not _is_buffer(t)]
    if device is not None and self._trainable and any(Device.canonicalize(device) != t.device for t in self._trainable):
      raise ValueError(f"optimizer device {device} differs from its parameters' ({self._trainable[0].device})")
    self._native = None  # set by the subclass: the C++ optimizer

  @property
  def params(self) -> list:
    """The trainable tensors, without duplicates (marked requires_grad)."""
    return self._native.params

  @property
  def lr(self) -> Tensor:
    """The learning rate, a realized (1,) float32 tensor: assigning into it (opt.lr.assign(...)) or
    to the attribute (opt.lr = 0.01) changes it in place, so a captured TinyJit step sees it."""
    return self._native.lr

  @lr.setter
  def lr(self, value):
    if isinstance(value, Tensor): value = value.numpy().reshape(-1)
    if hasattr(value, "__len__"):
      if len(value) != 1: raise ValueError(f"optimizer lr must be one number, got {len(value)}")
      value = value[0]
    self._native.set_lr(float(value))

  def zero_grad(self):
    """Clears every parameter's grad."""
    self._native.zero_grad()

  def schedule_step(self) -> list:
    """Assigns the updates lazily; returns every tensor to realize (state, parameters, buffers)."""
    return self._native.schedule_step() + self.buffers

  def step(self):
    """One update: schedule_step(), realized."""
    _C.realize_all(self.schedule_step())

  def state_dict(self) -> dict:
    """The optimizer's state by name ("lr", "m.0", "b1_t", "momentum.0"...): handles to save with
    nn.state.safe_save and restore with nn.state.load_state_dict."""
    return self._native.state_dict()


class OptimizerGroup(Optimizer):
  """Several optimizers stepped together (parameters split between them)."""

  def __init__(self, *optimizers: Optimizer):  # pylint: disable=super-init-not-called
    self.optimizers = optimizers
    self.buffers = [b for o in optimizers for b in o.buffers]

  def __getitem__(self, i): return self.optimizers[i]

  @property
  def params(self) -> list: return [p for o in self.optimizers for p in o.params]

  @property
  def lr(self): raise AttributeError("OptimizerGroup has one lr per optimizer: use group[i].lr")

  def zero_grad(self):
    for o in self.optimizers: o.zero_grad()

  def schedule_step(self) -> list: return [t for o in self.optimizers for t in o.schedule_step()]

  def state_dict(self) -> dict:
    return {f"{i}.{k}": v for i, o in enumerate(self.optimizers) for k, v in o.state_dict().items()}


class LARS(Optimizer):
  """Layer-wise Adaptive Rate Scaling (https://arxiv.org/abs/1708.03888): SGD whose step is scaled
  by the trust ratio tcoef * |w| / (|g| + weight_decay * |w|) (tcoef=0: plain SGD)."""

  def __init__(self, params, lr=0.001, momentum=0.9, weight_decay=1e-4, ns_steps=0, ns_coefficients=None, nesterov=False,
               classic=True, pre_wd=True, tcoef=0.001, device=None, fused=False):
    if not pre_wd: raise NotImplementedError("LARS: tinycore applies weight decay to the gradient before momentum (pre_wd=True) only")
    if ns_coefficients is not None and ns_steps != 5:
      raise NotImplementedError(f"LARS: tinycore's Newton-Schulz orthogonalization runs 5 steps, not ns_steps={ns_steps}")
    super().__init__(params, device, fused)
    self.momentum, self.wd, self.nesterov, self.classic, self.tcoef = momentum, weight_decay, nesterov, classic, tcoef
    self._native = _native.LARS(self._trainable, lr, momentum, weight_decay, nesterov, classic, tcoef,
                                None if ns_coefficients is None else tuple(ns_coefficients))


class LAMB(Optimizer):
  """LAMB (https://arxiv.org/abs/1904.00962): Adam's update with weight decay, scaled by the trust
  ratio |w| / |update| (adam=True: off, which is Adam/AdamW)."""

  def __init__(self, params, lr=0.001, b1=0.9, b2=0.999, eps=1e-6, weight_decay=0.0, adam=False, device=None, fused=False):
    super().__init__(params, device, fused)
    self.b1, self.b2, self.eps, self.wd, self.adam = b1, b2, eps, weight_decay, adam
    self._native = _native.LAMB(self._trainable, lr, b1, b2, eps, weight_decay, adam)


def SGD(params, lr=0.001, momentum=0.0, weight_decay=0.0, nesterov=False, classic=False, device=None, fused=False) -> LARS:
  """Stochastic gradient descent with optional momentum (nesterov), weight decay; classic applies
  the learning rate before the momentum."""
  return LARS(params, lr, momentum, weight_decay, 0, None, nesterov, classic=classic, tcoef=0.0, device=device, fused=fused)


def Muon(params, lr=0.001, momentum=0.95, weight_decay=0.0, ns_steps=5, ns_coefficients=(3.4445, -4.775, 2.0315),
         nesterov=True, device=None, fused=False) -> LARS:
  """SGD with momentum whose updates are orthogonalized by Newton-Schulz steps
  (https://kellerjordan.github.io/posts/muon/).

  tinygrad decays the weights after the momentum (w * (1 - weight_decay * lr)); tinycore's Muon
  has no such form, so weight_decay must be 0 (the default here, unlike tinygrad's 0.1)."""
  if weight_decay != 0:
    raise NotImplementedError("Muon: decoupled weight decay (tinygrad's weight_decay after the momentum) is not "
                              "implemented in tinycore; use weight_decay=0")
  return LARS(params, lr, momentum, 0.0, ns_steps, ns_coefficients, nesterov, classic=False, tcoef=0.0, device=device,
              fused=fused)


def AdamW(params, lr=0.001, b1=0.9, b2=0.999, eps=1e-8, weight_decay=0.01, device=None, fused=False) -> LAMB:
  """Adam with decoupled weight decay (https://arxiv.org/abs/1711.05101)."""
  return LAMB(params, lr, b1, b2, eps, weight_decay, adam=True, device=device, fused=fused)


def Adam(params, lr=0.001, b1=0.9, b2=0.999, eps=1e-8, device=None, fused=False) -> LAMB:
  """Adam (https://arxiv.org/abs/1412.6980)."""
  return LAMB(params, lr, b1, b2, eps, 0.0, adam=True, device=device, fused=fused)


def clip_grad_norm(params, max_norm: float) -> Tensor:
  """Scales the parameters' gradients (lazily) so their global L2 norm is at most max_norm;
  returns the norm before clipping (a 0-d tensor)."""
  return _native.clip_grad_norm(list(params), max_norm)
