"""Dynamic dimensions: a dimension whose length is a Variable (tinygrad's symbolic shapes, as
a[:, :v]), in the one form tinycore's fixed shapes allow. The tensor is stored at the length's upper
bound and carries the length (a SymInt, shown in `shape`); what reads the dimension masks it by the
Variable's value when the graph runs, so one TinyJit capture serves every value (XLA's bounded
dynamic shapes). Elementwise operations keep the length, a pad that ends at a fixed length (the
idiom x.pad((None, (0, n - x.shape[1])))) masks the rest, and reading values (numpy, tolist) reads
the first `value` elements. Any other operation on such a tensor raises, naming the operation and
the dimension: tinycore never computes over the stored padding silently."""
import functools

from tinycore._C import Tensor
from tinycore.symbolic import SymInt

# Operations that act on each element on its own (and broadcast): their result keeps the lengths.
ELEMENTWISE = frozenset("""
  neg log log2 exp exp2 relu sigmoid sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh
  abs sign reciprocal square trunc ceil floor round isinf isnan isfinite logical_not bitwise_not erf
  gelu quick_gelu leaky_relu elu celu selu swish silu relu6 hardswish hardsigmoid hardtanh mish softplus softsign
  logsigmoid tanh
  add sub mul div idiv mod fmod pow maximum minimum bitwise_and bitwise_or bitwise_xor lshift rshift
  lt gt le ge eq ne where clip clamp lerp copysign logaddexp xor
  cast bitcast float half int bool long double to contiguous realize clone detach requires_grad_
""".split())
# Operations that read values: they read the first `value` elements of each dynamic dimension.
READS = frozenset("numpy tolist item data".split())

_stored_shape = Tensor.shape.fget  # the shape as stored (a dynamic dimension at its bound)
Tensor._lengths = None  # per dimension: None, or the SymInt length of a dynamic dimension
_made = False  # whether this process made a dynamic tensor: until then the guards check nothing


def lengths(t) -> tuple:
  """The length of each dimension of t (an int, or the SymInt of a dynamic one)."""
  if t._lengths is None: return _stored_shape(t)
  return tuple(s if n is None else n for s, n in zip(_stored_shape(t), t._lengths))


def with_lengths(t: Tensor, lens) -> Tensor:
  """t (stored at each bound) as a tensor whose dimensions have lengths `lens` (None: stored)."""
  global _made
  if any(n is not None for n in lens): t._lengths, _made = tuple(lens), True
  return t


def is_dynamic(x) -> bool:
  return isinstance(x, Tensor) and x._lengths is not None


def _has_dynamic(args) -> bool:
  for a in args:
    if isinstance(a, Tensor):
      if a._lengths is not None: return True
    elif isinstance(a, (list, tuple)) and _has_dynamic(a): return True
  return False


def _tensors(args):
  """The tensors among a call's arguments, also one level inside lists and tuples."""
  for a in args:
    if isinstance(a, Tensor): yield a
    elif isinstance(a, (list, tuple)): yield from (x for x in a if isinstance(x, Tensor))


def _dynamic_dims(t: Tensor) -> str:
  return ", ".join(f"dimension {d} has length {n!r}" for d, n in enumerate(t._lengths) if n is not None)


def _elementwise(fn, name, args, kwargs):
  out = fn(*args, **kwargs)  # on the stored tensors: broadcasting lines up their bounds
  if not isinstance(out, Tensor): return out
  lens = [None] * out.ndim
  operands = list(_tensors(list(args) + list(kwargs.values())))
  for x in operands:  # each dynamic length, aligned from the right as broadcasting does
    for d, n in enumerate(x._lengths or ()):
      if n is not None: lens[out.ndim - x.ndim + d] = n
  for x in operands:  # the others must have the same length there, or broadcast from 1
    stored = _stored_shape(x)
    for d in range(x.ndim):
      r, n = out.ndim - x.ndim + d, (x._lengths or (None,) * x.ndim)[d]
      want = lens[r]
      if want is None or (n is not None and n.same(want)) or (n is None and stored[d] == 1): continue
      raise ValueError(f"Tensor.{name}: dimension {r} has length {want!r} in one operand and {n if n is not None else stored[d]!r} "
                       f"in another (shapes {[lengths(o) for o in operands]}); a dynamic length only meets the same length or 1")
  return with_lengths(out, lens)


def _read(fn, t, args, kwargs):
  """fn on the first `value` elements of each dynamic dimension of t (its values as bound now)."""
  stored = _stored_shape(t)
  ranges = [(0, s if n is None else max(0, min(s, n.value))) for s, n in zip(stored, t._lengths)]
  return fn(t._shrink(ranges), *args, **kwargs)


def _guard(name, fn):
  """fn, checked for dynamic tensors among its arguments: elementwise operations keep their
  lengths, reads read the bound values, anything else is an error naming the dimension."""
  if name in ELEMENTWISE: handle = functools.partial(_elementwise, fn, name)
  elif name in READS: handle = lambda args, kwargs: _read(fn, args[0], args[1:], kwargs)
  else: handle = None

  @functools.wraps(fn)
  def guarded(*args, **kwargs):
    if not _made or not (_has_dynamic(args) or (kwargs and _has_dynamic(kwargs.values()))):
      return fn(*args, **kwargs)
    if handle is not None: return handle(args, kwargs)
    t = next(x for x in _tensors(list(args) + list(kwargs.values())) if x._lengths is not None)
    raise ValueError(f"Tensor.{name}: not supported on a tensor with a dynamic dimension (shape {lengths(t)}: "
                     f"{_dynamic_dims(t)}); pad it to a fixed length first, as x.pad((None, (0, n - x.shape[1])))")
  return guarded


# Left unguarded: pad handles dynamic dimensions itself (tensor.py), the rest reads no extent.
_AWARE = frozenset({"pad", "shape", "ndim", "dtype", "device", "requires_grad", "grad"})
# Guarded too: the special methods that read a dimension's extent.
_DUNDERS = frozenset({"__getitem__", "__setitem__", "__len__", "__iter__"})


def install():
  """Guards every public Tensor method (and `T`), and shows dynamic lengths in `shape`."""
  for name, attr in list(vars(Tensor).items()):
    if name in _AWARE or (name.startswith("_") and name not in _DUNDERS): continue
    if isinstance(attr, staticmethod): setattr(Tensor, name, staticmethod(_guard(name, attr.__func__)))
    elif isinstance(attr, property):
      if name == "T": Tensor.T = property(_guard("T", attr.fget))
    elif callable(attr): setattr(Tensor, name, _guard(name, attr))
  Tensor.shape = property(lengths, doc="The length of each dimension: an int, or a SymInt for a dynamic one.")


# ---- the operations that make and end dynamic dimensions ----
def window(t: Tensor, dim: int, start, length) -> Tensor:
  """The `length` elements of `dim` from `start` (ints or SymInts, from symbolic.window)."""
  if isinstance(length, int): return t.shrink_from(dim, start.tensor(), length)  # a Variable start
  room = _stored_shape(t)[dim] - start
  if length.max > room:  # (a negative length is an empty slice, as in numpy)
    raise ValueError(f"Tensor.shrink: dimension {dim} of {lengths(t)} from {start} has {room} elements, but the length "
                     f"{length!r} ranges over [{length.min}, {length.max}]: the Variable's range must fit the dimension")
  bound = length.max
  ranges = [(0, s) for s in _stored_shape(t)]
  ranges[dim] = (start, start + bound)
  lens = list(t._lengths or (None,) * t.ndim)
  lens[dim] = length
  return with_lengths(t._shrink(ranges), lens)


def pad(t: Tensor, pairs, value) -> Tensor:
  """Constant padding where a length or an amount is a SymInt: each such dimension is stored at
  the bound of its new length, and the elements outside the data are masked to `value` by the
  Variable's value when the graph runs."""
  stored = _stored_shape(t)
  old = t._lengths or (None,) * t.ndim
  ranges, static, lens, masks = [], [], [], []
  for d, ((before, after), n, s) in enumerate(zip(pairs, old, stored)):
    if not isinstance(before, int) or before < 0:
      raise ValueError(f"Tensor.pad: dimension {d}: padding before the data ({before!r}) must be a non-negative int where a length "
                       "or an amount is a Variable; only the padding after it may be a Variable")
    total = before + (s if n is None else n) + after
    if isinstance(total, int) and total < 0 or isinstance(total, SymInt) and total.min < 0:
      raise ValueError(f"Tensor.pad: dimension {d} of length {s if n is None else n!r} padded by ({before!r}, {after!r}) has a negative length {total!r}")
    bound = total if isinstance(total, int) else total.max
    keep = max(0, min(s, bound - before))  # the stored elements that fit in the new bound
    ranges.append((0, keep))
    static.append((before, bound - before - keep))
    lens.append(None if isinstance(total, int) else total)
    if n is not None: masks.append((d, bound, before, n))
  out = t._shrink(ranges)._pad(static, "constant", value)
  for d, bound, before, n in masks:  # the data ends at before + n, known when the graph runs
    at = Tensor.arange(bound, device=t.device).reshape([bound if i == d else 1 for i in range(t.ndim)])
    out = (at < n.tensor().to(t.device) + before).where(out, value)
  return with_lengths(out, lens)
