"""The Python forms of Tensor's methods: *shape arguments, device= keywords, x[...] indexing and
the operators. The operations themselves are native (tinycore._C)."""
import contextlib

from tinycore import _C
from tinycore._C import Tensor, dtypes
from tinycore.helpers import Device
from tinycore import dynamic
from tinycore.symbolic import symbolic, window

_I = _C._IndexItem


def _method(fn):
  setattr(Tensor, fn.__name__, fn)
  return fn


def _static(fn):
  setattr(Tensor, fn.__name__, staticmethod(fn))
  return fn


def _dims(shape, args=()):
  """tinygrad's f(2, 3) or f((2, 3)) forms of a shape or an axis list (argfix)."""
  if args and isinstance(shape, (tuple, list)): raise ValueError(f"bad arg {(shape, *args)}: a tuple must be the only argument")
  if args: return (shape, *args)
  if isinstance(shape, (tuple, list)): return tuple(shape)
  return (shape,)


def _place(t: Tensor, device=None, requires_grad=None) -> Tensor:
  if device is not None and Device.canonicalize(device) != t.device: t = t.to(device)
  t.requires_grad = requires_grad  # None: tinygrad's "maybe" (backward fills its grad if used)
  return t



# ---- movement ----
@_method
def reshape(self, shape, *args) -> Tensor:
  new = _dims(shape, args)
  return self._reshape([self.shape[i] if s is None else s for i, s in enumerate(new)])


@_method
def view(self, shape, *args) -> Tensor:
  return self.reshape(shape, *args)


@_method
def expand(self, shape, *args) -> Tensor:
  return self._expand([-1 if s is None else s for s in _dims(shape, args)])


@_method
def permute(self, order, *args) -> Tensor:
  return self._permute(list(_dims(order, args)))


@_method
def flip(self, axis, *args) -> Tensor:
  return self._flip(list(_dims(axis, args)))


@_method
def shrink(self, arg) -> Tensor:
  """Per-dimension (start, end) pairs (None: the whole dimension). A bound may be a Variable plus
  constants: (v, v+1) is a window that starts where the Variable's value says when the graph runs;
  (0, v) a dynamic dimension of length v (tinycore/dynamic.py)."""
  ranges, windows = [], []
  for d, (a, s) in enumerate(zip(arg, self.shape)):
    w = None if a is None else window(a[0], a[1], s, "Tensor.shrink")
    if w is not None: windows.append((d, *w))
    ranges.append((0, s) if a is None or w is not None else tuple(a))
  out = self._shrink(ranges)
  for d, start, length in windows: out = dynamic.window(out, d, start, length)
  return out


@_method
def pad(self, padding, mode: str = "constant", value=0.0) -> Tensor:
  """Per-dimension (before, after) pairs (None: no padding), or a flat list in torch's order:
  (left, right) of the last dimension first."""
  padding = list(padding)
  if all(p is None or isinstance(p, (tuple, list)) for p in padding):
    if len(padding) != self.ndim:
      raise ValueError(f"Tensor.pad: padding {padding} must have one (before, after) pair per dimension of {self.shape}")
    pairs = [(0, 0) if p is None else tuple(p) for p in padding]
  else:
    if len(padding) % 2 != 0 or len(padding) // 2 > self.ndim:
      raise ValueError(f"Tensor.pad: flat padding {padding} must have an even length of at most {2 * self.ndim}")
    pairs = [(0, 0)] * (self.ndim - len(padding) // 2) + [(padding[i], padding[i + 1]) for i in range(len(padding) - 2, -1, -2)]
  if self._lengths is not None or any(symbolic(x) is not None for p in pairs for x in p):
    if mode != "constant": raise ValueError(f"Tensor.pad: mode '{mode}' with a dynamic dimension or a Variable amount; only 'constant' is supported")
    return dynamic.pad(self, [tuple(symbolic(x) or x for x in p) for p in pairs], value)
  return self._pad(pairs, mode, value)


@_method
def repeat(self, repeats, *args) -> Tensor:
  return self._repeat(list(_dims(repeats, args)))


@_method
def roll(self, shifts, dims=None) -> Tensor:
  """Without dims, rolls the flattened tensor (as torch)."""
  shifts = list(shifts) if isinstance(shifts, (tuple, list)) else [shifts]
  if dims is None:
    if len(shifts) != 1: raise RuntimeError(f"Tensor.roll: without dims, shifts must be one int, got {shifts}")
    return self.flatten()._roll(shifts, [0]).reshape(self.shape)
  dims = list(dims) if isinstance(dims, (tuple, list)) else [dims]
  if len(shifts) != len(dims): raise RuntimeError(f"Tensor.roll: shifts {shifts} and dims {dims} must have the same length")
  return self._roll(shifts, dims)


@_method
def rearrange(self, formula: str, **sizes) -> Tensor:
  return self._rearrange(formula, list(sizes.items()))


@_method
def cat(self, *args, dim: int = 0) -> Tensor:
  return Tensor._cat([self, *args], dim)


@_method
def stack(self, *args, dim: int = 0) -> Tensor:
  """Tensor.stack(a, b, ...) or Tensor.stack((a, b, ...)), as tinygrad's argfix."""
  if isinstance(self, (tuple, list)):
    if args: raise ValueError(f"Tensor.stack: pass the tensors as one sequence or as arguments, not both (got {self!r} and {args!r})")
    return Tensor._stack(list(self), dim)
  return Tensor._stack([self, *args], dim)


@_method
def meshgrid(self, *args, indexing: str = "ij"):
  return tuple(Tensor._meshgrid([self, *args], indexing))


@_method
def pool(self, kernel_size, stride=1, dilation=1) -> Tensor:
  return self._pool(kernel_size, stride, dilation)


@_static
def einsum(formula: str, *operands, dtype=None) -> Tensor:
  if len(operands) == 1 and isinstance(operands[0], (tuple, list)): operands = operands[0]
  return Tensor._einsum(formula, list(operands), dtype)


# ---- indexing ----
def _index_item(i):
  if isinstance(i, Tensor): return _I.tensor(i)
  if isinstance(i, bool): raise IndexError(f"Tensor indexing: a bool index ({i}) is not supported")
  if isinstance(i, int): return _I.int(i)
  if i is None: return _I.newaxis()
  if i is Ellipsis: return _I.ellipsis()
  if isinstance(i, slice):
    for part in (i.start, i.stop, i.step):
      if part is not None and not isinstance(part, int): raise TypeError(f"Tensor indexing: slice {i} must hold ints")
    return _I.slice(i.start, i.stop, i.step)
  # a list's dtype is inferred, so that float or bool lists are rejected like such tensors
  if isinstance(i, (list, tuple)): return _I.tensor(Tensor(list(i)) if i else Tensor([], dtype=dtypes.int32))
  if hasattr(i, "__index__"): return _I.int(i.__index__())
  raise IndexError(f"Tensor indexing: {type(i).__name__} {i!r} is not a valid index (int, slice, None, ..., Tensor or list)")


def _index_list(indices):
  if not isinstance(indices, tuple): indices = (indices,)
  return [_index_item(i) for i in indices]


def _symbolic_slices(self, indices):
  """For indices with a slice bounded by a Variable (t[v:v+2]): the indices with each such slice
  made whole, and (axis of the result, start, length) for each (symbolic.window's). None when
  there is none."""
  items = indices if isinstance(indices, tuple) else (indices,)
  is_symbolic = lambda i: isinstance(i, slice) and (symbolic(i.start) is not None or symbolic(i.stop) is not None)
  if not any(is_symbolic(i) for i in items): return None
  if any(isinstance(i, (Tensor, list, tuple)) for i in items):
    raise IndexError("Tensor indexing: a slice with a Variable bound cannot be mixed with tensor or list indices")
  consumed = sum(1 for i in items if i is not None and i is not Ellipsis)
  static, windows, axis, dim = [], [], 0, 0  # the result's axis, and self's dimension
  for i in items:
    if is_symbolic(i):
      if i.step not in (None, 1): raise IndexError(f"Tensor indexing: slice {i} with a Variable bound must have step 1")
      windows.append((axis, *window(i.start, i.stop, self.shape[dim], "Tensor indexing")))
      i = slice(None)
    static.append(i)
    axis += self.ndim - consumed if i is Ellipsis else 0 if isinstance(i, int) else 1
    dim += self.ndim - consumed if i is Ellipsis else 0 if i is None else 1
  return tuple(static), windows


@_method
def __getitem__(self, indices) -> Tensor:
  windowed = _symbolic_slices(self, indices)
  if windowed is None: return self._getitem(_index_list(indices))
  static, windows = windowed
  out = self._getitem(_index_list(static))
  for axis, start, length in windows: out = dynamic.window(out, axis, start, length)
  return out


@_method
def __setitem__(self, indices, v) -> None:
  if isinstance(v, (list, tuple)): v = Tensor(v, dtype=self.dtype)
  if _symbolic_slices(self, indices) is None: return self._setitem(_index_list(indices), v)
  view = self[indices]
  if view._lengths is not None:
    raise ValueError(f"Tensor.__setitem__: the window {view.shape} has a dynamic length; a write needs a constant length, as t[v:v+2] = x")
  self._setitem_view(view, v if isinstance(v, Tensor) else Tensor(v, dtype=self.dtype))


@_method
def __delitem__(self, indices) -> None:
  raise TypeError("Tensor does not support deleting items")


@_method
def one_hot(self, num_classes: int) -> Tensor:
  """tinygrad's one_hot: num_classes must be given (non-negative), as jax.nn.one_hot."""
  if num_classes < 0: raise ValueError(f"Tensor.one_hot: num_classes must be non-negative, got {num_classes}")
  return self._one_hot(num_classes)


# ---- creation ----
@_static
def empty(*shape, device=None, dtype=None, requires_grad=None, **kwargs) -> Tensor:
  return _place(Tensor._empty(list(_dims(shape[0], shape[1:]) if shape else ()), dtypes.default_float if dtype is None else dtype), device, requires_grad)


@_static
def full(shape, fill_value, dtype=None, device=None, requires_grad=None) -> Tensor:
  shape = list(shape) if isinstance(shape, (tuple, list)) else [shape]
  return _place(Tensor._full(shape, fill_value, dtype), device, requires_grad)


@_static
def zeros(*shape, dtype=None, device=None, requires_grad=None) -> Tensor:
  return Tensor.full(_dims(shape[0], shape[1:]) if shape else (), 0.0, dtype or dtypes.default_float, device, requires_grad)


@_static
def ones(*shape, dtype=None, device=None, requires_grad=None) -> Tensor:
  return Tensor.full(_dims(shape[0], shape[1:]) if shape else (), 1.0, dtype or dtypes.default_float, device, requires_grad)


@_static
def arange(start, stop=None, step=1, dtype=None, device=None, requires_grad=None) -> Tensor:
  if stop is None: start, stop = 0, start
  if all(isinstance(x, int) for x in (start, stop, step)) and step != 0:
    n = max(0, -(-(stop - start) // step))
    ends = (start, start + (n - 1) * step) if n else ()
    if dtype is None and any(not dtypes.int32.min <= e <= dtypes.int32.max for e in ends): dtype = dtypes.int64
    if dtype is not None and dtypes.is_int(dtype):
      for e in ends:
        if not dtype.min <= e <= dtype.max: raise OverflowError(f"Tensor.arange: {e} does not fit in {dtype}")
  return _place(Tensor._arange(start, stop, step, dtype), device, requires_grad)


@_static
def linspace(start, stop, steps, dtype=None, device=None, requires_grad=None) -> Tensor:
  return _place(Tensor._linspace(start, stop, steps, dtypes.default_float if dtype is None else dtype), device, requires_grad)


@_static
def eye(n, m=None, dtype=None, device=None, requires_grad=None) -> Tensor:
  return _place(Tensor._eye(n, m, dtypes.default_float if dtype is None else dtype), device, requires_grad)


@_method
def full_like(self, fill_value, dtype=None, device=None, requires_grad=None) -> Tensor:
  return Tensor.full(self.shape, fill_value, self.dtype if dtype is None else dtype, device or self.device, requires_grad)


@_method
def zeros_like(self, dtype=None, device=None, requires_grad=None) -> Tensor:
  return self.full_like(0, dtype, device, requires_grad)


@_method
def ones_like(self, dtype=None, device=None, requires_grad=None) -> Tensor:
  return self.full_like(1, dtype, device, requires_grad)


@_method
def empty_like(self, dtype=None, device=None, requires_grad=None) -> Tensor:
  return Tensor.empty(*self.shape, dtype=self.dtype if dtype is None else dtype, device=device or self.device, requires_grad=requires_grad)


def _random(name, defaults):
  def make(*shape, device=None, requires_grad=None, **kwargs):
    for k in kwargs:
      if k not in defaults: raise TypeError(f"Tensor.{name}() got an unexpected keyword argument '{k}'")
    opts = {**defaults, **kwargs}
    t = getattr(Tensor, "_" + name)(list(_dims(shape[0], shape[1:]) if shape else ()), *opts.values())
    return _place(t, device, requires_grad)
  make.__name__ = name
  return _static(make)


_random("randn", {"dtype": None})
_random("normal", {"mean": 0.0, "std": 1.0, "dtype": None})
_random("uniform", {"low": 0.0, "high": 1.0, "dtype": None})
_random("scaled_uniform", {"dtype": None})
_random("glorot_uniform", {"dtype": None})
_random("kaiming_uniform", {"a": 0.01, "dtype": None})
_random("kaiming_normal", {"a": 0.01, "dtype": None})


@_static
def rand(*shape, device=None, dtype=None, contiguous=True, requires_grad=None) -> Tensor:
  return _place(Tensor._rand(list(_dims(shape[0], shape[1:]) if shape else ()), dtype, contiguous), device, requires_grad)


@_static
def randint(*shape, low=0, high=10, dtype=dtypes.int32, device=None, requires_grad=None) -> Tensor:
  return _place(Tensor._randint(list(_dims(shape[0], shape[1:]) if shape else ()), low, high, dtype), device, requires_grad)


@_static
def randperm(n, device=None, dtype=dtypes.int32, requires_grad=None) -> Tensor:
  return _place(Tensor._randperm(n, dtype), device, requires_grad)


@_method
def rand_like(self, dtype=None, device=None, **kwargs) -> Tensor:
  return Tensor.rand(*self.shape, dtype=self.dtype if dtype is None else dtype, device=device or self.device, **kwargs)


@_method
def randn_like(self, dtype=None, device=None, **kwargs) -> Tensor:
  return Tensor.randn(*self.shape, dtype=self.dtype if dtype is None else dtype, device=device or self.device, **kwargs)


# ---- training mode and no_grad ----



@_static
@contextlib.contextmanager
def train(mode: bool = True):
  prev = _C.Tensor._training()
  _C.Tensor._set_training(mode)
  try: yield
  finally: _C.Tensor._set_training(prev)


@_static
def test():
  return Tensor.train(False)


# ---- operators ----
def _binary(name, method, reverse=False):
  setattr(Tensor, name, lambda self, x: getattr(self, method)(x, reverse))


for _n, _m in [("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"), ("mod", "mod"),
               ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"), ("pow", "pow")]:
  _binary(f"__{_n}__", _m)
  _binary(f"__r{_n}__", _m, True)
Tensor.__floordiv__ = lambda self, x: self.div(x, rounding_mode="floor")
Tensor.__rfloordiv__ = lambda self, x: self.div(x, True, rounding_mode="floor")
Tensor.__matmul__ = lambda self, x: self.matmul(x)
Tensor.__rmatmul__ = lambda self, x: self.matmul(x, True)
Tensor.__neg__ = lambda self: self.neg()
Tensor.__pos__ = lambda self: self
# numpy defers to Tensor's reflected operators (np.float32(2) * t is a Tensor), rather than
# iterating the tensor into an array of 0-d Tensors
Tensor.__array_ufunc__ = None
Tensor.__abs__ = lambda self: self.abs()
Tensor.__invert__ = lambda self: self.bitwise_not()
Tensor.__lshift__ = lambda self, x: self.lshift(x)
Tensor.__rshift__ = lambda self, x: self.rshift(x)
Tensor.__rlshift__ = lambda self, x: self.lshift(x, True)
Tensor.__rrshift__ = lambda self, x: self.rshift(x, True)
Tensor.__lt__ = lambda self, x: self.lt(x)
Tensor.__gt__ = lambda self, x: self.gt(x)
Tensor.__le__ = lambda self, x: self.le(x)
Tensor.__ge__ = lambda self, x: self.ge(x)
Tensor.__eq__ = lambda self, x: self.eq(x)
Tensor.__ne__ = lambda self, x: self.ne(x)

for _n, _f in [("iadd", "add"), ("isub", "sub"), ("imul", "mul"), ("itruediv", "div"), ("ipow", "pow"),
               ("iand", "bitwise_and"), ("ior", "bitwise_or"), ("ixor", "bitwise_xor"), ("imatmul", "matmul"),
               ("ilshift", "lshift"), ("irshift", "rshift")]:
  setattr(Tensor, f"__{_n}__", (lambda f: lambda self, x: self.assign(getattr(self, f)(x)))(_f))
Tensor.__ifloordiv__ = lambda self, x: self.assign(self // x)
