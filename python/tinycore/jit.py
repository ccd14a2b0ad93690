"""TinyJit for Python callables: tensors among the arguments (positional or keyword) are the
step's inputs, and so are Variables (their value's buffer: a new Variable each call works, as in
tinygrad); the return value is a Tensor, a tuple/list of them, or None."""
import functools

from tinycore import _C
from tinycore._C import Tensor, Variable
from tinycore.symbolic import Offset, offset_of


def _input(a):
  """The tensor an argument gives the step, or None: a Tensor, or a Variable's value."""
  if isinstance(a, Tensor): return a
  if isinstance(a, (Variable, Offset)): return offset_of(a).variable_tensor
  return None


def _given(a, tensor):
  """The argument the captured function sees for `a`, reading the step's input `tensor`."""
  if isinstance(a, Tensor): return tensor
  v = offset_of(a)
  return Offset(v.name, tensor, v.value - v.offset, v.offset)


class TinyJit:
  def __init__(self, fxn):
    self.fxn = fxn
    self._jit = _C._TinyJit(self._run)
    self._out = None  # how the outputs nest: ("one",), ("seq", type, n) or ("none",)
    functools.update_wrapper(self, fxn)

  def _run(self, inputs):
    args = [_given(a, inputs[i]) if i is not None else a for i, a in zip(self._slots, self._args)]
    kwargs = {k: (_given(v, inputs[i]) if i is not None else v) for k, (i, v) in self._kw.items()}
    ret = self.fxn(*args, **kwargs)
    if ret is None:
      self._out = ("none",)
      return []
    if isinstance(ret, Tensor):
      self._out = ("one",)
      return [ret]
    if isinstance(ret, (tuple, list)) and all(isinstance(r, Tensor) for r in ret):
      self._out = ("seq", type(ret), len(ret))
      return list(ret)
    raise TypeError(f"TinyJit: the function must return a Tensor, a tuple or list of Tensors, or None; got {type(ret).__name__}")

  def __call__(self, *args, **kwargs):
    inputs, self._slots, self._args, self._kw = [], [], list(args), {}
    for a in args:
      x = _input(a)
      self._slots.append(len(inputs) if x is not None else None)
      if x is not None: inputs.append(x)
    for k, v in kwargs.items():
      x = _input(v)
      self._kw[k] = (len(inputs), v) if x is not None else (None, v)
      if x is not None: inputs.append(x)
    out = self._jit(inputs)
    if self._out[0] == "none": return None
    if self._out[0] == "one": return out[0]
    return self._out[1](out)

  @property
  def captured(self) -> bool: return self._jit.captured

  @property
  def kernel_count(self) -> int: return self._jit.kernel_count

  def reset(self): self._jit.reset()

  def __get__(self, obj, objtype=None):  # a TinyJit on a method binds like a function
    return functools.partial(self.__call__, obj) if obj is not None else self
