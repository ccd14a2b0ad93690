"""Variable + int: a position known only when a step runs (tinygrad's symbolic bounds, in the one
form tinycore's fixed shapes allow: a Variable plus a constant offset). Tensor.shrink and slices
take such bounds where the length between them is constant: t.shrink(((v, v+1), None)),
t[v:v+2] = x. Under TinyJit a Variable argument is an input, so a new Variable each call works."""
from tinycore._C import Tensor, Variable


class Offset:
  """A Variable's value plus a constant, read when the graph runs (its `tensor()`)."""
  __slots__ = ("name", "_tensor", "_value", "offset")

  def __init__(self, name: str, tensor: Tensor, value: int, offset: int = 0):
    self.name, self._tensor, self._value, self.offset = name, tensor, value, offset

  def tensor(self) -> Tensor:
    return self._tensor + self.offset if self.offset else self._tensor

  @property
  def value(self) -> int: return self._value + self.offset

  @property
  def variable_tensor(self) -> Tensor: return self._tensor  # the Variable's value, no offset

  def same_variable(self, other: "Offset") -> bool: return self.name == other.name  # as tinygrad's

  def __add__(self, k):
    if isinstance(k, bool) or not isinstance(k, int): return NotImplemented
    return Offset(self.name, self._tensor, self._value, self.offset + k)

  __radd__ = __add__

  def __sub__(self, k):
    if isinstance(k, bool) or not isinstance(k, int): return NotImplemented
    return Offset(self.name, self._tensor, self._value, self.offset - k)

  def __repr__(self):
    return self.name if not self.offset else f"{self.name}{'+' if self.offset > 0 else '-'}{abs(self.offset)}"


def offset_of(x):
  """x as an Offset when it is symbolic (a Variable or an Offset), else None."""
  if isinstance(x, Offset): return x
  if isinstance(x, Variable): return Offset(x.name, x.tensor(), x.value)
  return None


def window(start, stop, what: str):
  """(start Offset, constant length) of a range with a symbolic bound, or None for int bounds."""
  a, b = offset_of(start), offset_of(stop)
  if a is None and b is None: return None
  start, stop = a if a is not None else start, b if b is not None else stop  # shown as v+1
  if a is None or b is None or not a.same_variable(b):
    raise ValueError(f"{what}: the bounds ({start!r}, {stop!r}) differ by a Variable; tinycore's shapes "
                     "are fixed, so both bounds must be the same Variable plus constants, as (v, v+1)")
  if b.offset < a.offset: raise ValueError(f"{what}: the range ({start!r}, {stop!r}) has a negative length")
  return a, b.offset - a.offset


def _variable_add(self, k): return offset_of(self) + k
def _variable_sub(self, k): return offset_of(self) - k


Variable.__add__, Variable.__radd__, Variable.__sub__ = _variable_add, _variable_add, _variable_sub
