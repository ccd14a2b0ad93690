"""Integers known only when a step runs: a Variable's value times a constant plus a constant
(tinygrad's symbolic ints, in the affine form tinycore needs). They bound windows, as
t.shrink(((v, v+1), None)) and t[v:v+2] = x, whose length is constant; and they are the lengths of
dynamic dimensions (a[:, :v], tinycore/dynamic.py), as `10 - a.shape[1]`. Under TinyJit a
Variable argument is an input, so a new Variable each call works."""
from tinycore._C import Tensor, Variable


class SymInt:
  """coef * (the Variable `name`'s value) + offset; `tensor()` reads it when the graph runs."""
  __slots__ = ("name", "_tensor", "_value", "lo", "hi", "coef", "offset")

  def __init__(self, name: str, tensor: Tensor, value: int, lo: int, hi: int, coef: int = 1, offset: int = 0):
    self.name, self._tensor, self._value, self.lo, self.hi = name, tensor, value, lo, hi
    self.coef, self.offset = coef, offset

  def _affine(self, coef: int, offset: int):
    """The same Variable as coef * v + offset: a plain int once the Variable cancels out."""
    if coef == 0: return offset
    return SymInt(self.name, self._tensor, self._value, self.lo, self.hi, coef, offset)

  def reading(self, tensor: Tensor) -> "SymInt":
    """The same expression over another tensor holding the Variable's value (a TinyJit input)."""
    return SymInt(self.name, tensor, self._value, self.lo, self.hi, self.coef, self.offset)

  def tensor(self) -> Tensor:
    t = self._tensor * self.coef if self.coef != 1 else self._tensor
    return t + self.offset if self.offset else t

  @property
  def value(self) -> int: return self.coef * self._value + self.offset

  @property
  def min(self) -> int: return min(self.coef * self.lo, self.coef * self.hi) + self.offset

  @property
  def max(self) -> int: return max(self.coef * self.lo, self.coef * self.hi) + self.offset

  @property
  def variable_tensor(self) -> Tensor: return self._tensor  # the Variable's value, as bound

  def same_variable(self, other: "SymInt") -> bool: return self.name == other.name  # as tinygrad's

  def same(self, other) -> bool:
    """Whether other is the same expression (the same Variable, coefficient and offset)."""
    return isinstance(other, SymInt) and self.same_variable(other) and (self.coef, self.offset) == (other.coef, other.offset)

  def __add__(self, k):
    if isinstance(k, SymInt):
      if not self.same_variable(k):
        raise ValueError(f"{self!r} + {k!r}: an expression of two Variables is not supported; tinycore's symbolic ints hold one")
      return self._affine(self.coef + k.coef, self.offset + k.offset)
    if isinstance(k, bool) or not isinstance(k, int): return NotImplemented
    return self._affine(self.coef, self.offset + k)

  __radd__ = __add__

  def __neg__(self): return self._affine(-self.coef, -self.offset)

  def __sub__(self, k):
    if isinstance(k, SymInt) or (isinstance(k, int) and not isinstance(k, bool)): return self + (-k)
    return NotImplemented

  def __rsub__(self, k):
    if isinstance(k, bool) or not isinstance(k, int): return NotImplemented
    return (-self) + k

  def __mul__(self, k):
    if isinstance(k, bool) or not isinstance(k, int): return NotImplemented
    return self._affine(self.coef * k, self.offset * k)

  __rmul__ = __mul__

  def __repr__(self):
    v = self.name if self.coef == 1 else f"-{self.name}" if self.coef == -1 else f"{self.coef}*{self.name}"
    if not self.offset: return v
    if self.coef < 0: return f"{self.offset}{v}"  # 10-i, not -i+10
    return f"{v}{'+' if self.offset > 0 else '-'}{abs(self.offset)}"


def symbolic(x):
  """x as a SymInt when it is symbolic (a Variable or a SymInt), else None."""
  if isinstance(x, SymInt): return x
  if isinstance(x, Variable): return SymInt(x.name, x.tensor(), x.value, x.min, x.max)
  return None


def window(start, stop, size: int, what: str):
  """(start, length) of a range of a dimension of `size` with a symbolic bound, each an int or a
  SymInt; None for int bounds. A bound of None is the dimension's end, a negative int counts
  from it. A symbolic length (an int start, a Variable stop: a[:, :v]) makes a dynamic dimension."""
  a, b = symbolic(start), symbolic(stop)
  if a is None and b is None: return None
  start = a if a is not None else 0 if start is None else start + size if start < 0 else start
  stop = b if b is not None else size if stop is None else stop + size if stop < 0 else stop
  if a is not None and b is not None and not a.same_variable(b):
    raise ValueError(f"{what}: the bounds ({start!r}, {stop!r}) are two Variables; both must be the same Variable plus constants, as (v, v+1)")
  length = stop - start
  if a is not None and not isinstance(length, int):
    raise ValueError(f"{what}: the range ({start!r}, {stop!r}) has a Variable start and a length {length!r}; a Variable start needs "
                     "a constant length, as (v, v+2), and a dynamic length an int start, as a[:, :v]")
  if (length if isinstance(length, int) else length.max) < 0:
    raise ValueError(f"{what}: the range ({start!r}, {stop!r}) has a negative length")
  return start, length


def _variable_add(self, k): return symbolic(self) + k
def _variable_sub(self, k): return symbolic(self) - k
def _variable_rsub(self, k): return k - symbolic(self)
def _variable_mul(self, k): return symbolic(self) * k
def _variable_neg(self): return -symbolic(self)


Variable.__add__, Variable.__radd__, Variable.__sub__ = _variable_add, _variable_add, _variable_sub
Variable.__rsub__, Variable.__mul__, Variable.__rmul__, Variable.__neg__ = _variable_rsub, _variable_mul, _variable_mul, _variable_neg
