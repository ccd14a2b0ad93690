"""TinyJit for Python callables. The arguments are bound to the function's parameters (so
positional and keyword calls, in any order, are one call); the tensors among them, also inside
lists, tuples and dicts, are the step's inputs, and so are Variables (their value's buffer: a new
Variable each call works, as in tinygrad), also as the length of a dynamic dimension (a[:, :v]).
The return value is Tensors, in any nesting of tuples, lists and dicts, or None.

A replay never computes with a value other than the one it was given: a call whose arguments nest
differently from the capture's, whose Python values (the arguments that are not tensors, the
numbers the function reads from an enclosing scope) differ from the capture's, or a return value
holding something other than Tensors, is a JitError. On a method, each instance has its own
capture (tinygrad shares one across instances: the second instance would replay the first's
weights)."""
import functools
import inspect
import weakref

from tinycore import _C
from tinycore._C import Tensor, Variable
from tinycore.dynamic import is_dynamic, lengths, with_lengths
from tinycore.symbolic import SymInt, symbolic

JitError = _C.JitError  # a step TinyJit cannot capture or replay (a RuntimeError)


class _Inputs:
  """The step's input tensors in the order the arguments give them. A Variable is one input (its
  value's buffer) however often it appears, alone or as a dynamic length, named as in tinygrad."""

  def __init__(self): self.tensors, self._variables = [], {}

  def tensor(self, t: Tensor) -> int:
    self.tensors.append(t)
    return len(self.tensors) - 1

  def variable(self, v: SymInt) -> int:
    if v.name not in self._variables: self._variables[v.name] = self.tensor(v.variable_tensor)
    return self._variables[v.name]


class _Slot:
  """Where a tensor or Variable stood in the arguments: input `index`, given as `arg`; for a
  dynamic tensor, each dimension's (length, the input index of its Variable) or None."""
  __slots__ = ("index", "arg", "lengths")

  def __init__(self, index, arg, lengths=None): self.index, self.arg, self.lengths = index, arg, lengths


def _is_seq(x) -> bool:
  """A list or tuple TinyJit looks into (a namedtuple is a value of its own)."""
  return isinstance(x, (list, tuple)) and not hasattr(x, "_fields")


def _map(x, leaf):
  """x with `leaf` applied to everything in it that is not a list, tuple or dict."""
  if _is_seq(x): return type(x)(_map(v, leaf) for v in x)
  if isinstance(x, dict): return {k: _map(v, leaf) for k, v in x.items()}
  return leaf(x)


def _flatten(x, inputs: _Inputs):
  """x with each tensor (or Variable) in it, in lists, tuples and dicts too, replaced by a _Slot
  naming its place in `inputs`, where it is added."""
  def slot(a):
    if isinstance(a, Tensor):
      lens = None if not is_dynamic(a) else tuple(None if n is None else (n, inputs.variable(n)) for n in a._lengths)
      return _Slot(inputs.tensor(a), a, lens)
    v = symbolic(a)
    return a if v is None else _Slot(inputs.variable(v), a)
  return _map(x, slot)


def _fill(x, tensors):
  """The arguments `_flatten` took apart, each slot reading the step's input tensors."""
  def given(a):
    if not isinstance(a, _Slot): return a
    if not isinstance(a.arg, Tensor): return symbolic(a.arg).reading(tensors[a.index])
    if a.lengths is None: return tensors[a.index]
    return with_lengths(tensors[a.index], [None if n is None else n[0].reading(tensors[n[1]]) for n in a.lengths])
  return _map(x, given)


def _layout(x):
  """How tensors nest in an argument: compared between the capture and each replay."""
  if isinstance(x, _Slot):
    if not isinstance(x.arg, Tensor): return f"Variable {symbolic(x.arg).name}"
    return "Tensor" if x.lengths is None else f"Tensor of shape {lengths(x.arg)}"
  if _is_seq(x):
    return f"{type(x).__name__}[{', '.join(_layout(v) for v in x)}]"
  if isinstance(x, dict): return "{" + ", ".join(f"{k!r}: {_layout(v)}" for k, v in x.items()) + "}"
  return "constant"


def _call_layout(tree):
  """The layout of a call's (positional, keyword) arguments, written as the call."""
  args, kwargs = tree
  return "(" + ", ".join([_layout(a) for a in args] + [f"{k}={_layout(v)}" for k, v in kwargs.items()]) + ")"


_PRIMITIVE = (int, float, complex, bool, str, bytes, type(None))


def _constants(x, path, out):
  """The Python values among the arguments, by where they stand: a replay does not see them."""
  if isinstance(x, _Slot): return
  if _is_seq(x):
    for i, v in enumerate(x): _constants(v, f"{path}[{i}]", out)
  elif isinstance(x, dict):
    for k, v in x.items(): _constants(v, f"{path}[{k!r}]", out)
  else: out[path] = x


def _outside(fxn):
  """The numbers and strings the function reads from an enclosing scope (its closure's cells)."""
  f = getattr(fxn, "__func__", fxn)
  names, cells = getattr(getattr(f, "__code__", None), "co_freevars", ()), getattr(f, "__closure__", None) or ()
  out = {}
  for name, cell in zip(names, cells):
    try: v = cell.cell_contents
    except ValueError: continue  # not yet assigned
    if isinstance(v, _PRIMITIVE): out[f"{name!r}, read from outside the function,"] = v
  return out


def _same(a, b) -> bool:
  """Whether a replay given b computes what the capture given a did: numbers and strings by
  value, tuples by their items, anything else (a module, an array) only when it is the same object."""
  if type(a) is not type(b): return False
  if isinstance(a, _PRIMITIVE): return a == b or (a != a and b != b)  # NaN is NaN
  if isinstance(a, tuple): return len(a) == len(b) and all(map(_same, a, b))
  return a is b


def _outputs(ret, path, out):
  """ret with each Tensor replaced by its index in `out`; anything else is a JitError."""
  if isinstance(ret, Tensor):
    if is_dynamic(ret):
      raise JitError(f"TinyJit: the function returned a tensor of shape {ret.shape} at {path}, whose length is a Variable; "
                     "pad it to a fixed length before returning it, as x.pad((None, (0, n - x.shape[1])))")
    out.append(ret)
    return len(out) - 1
  if _is_seq(ret):
    return type(ret)(_outputs(r, f"{path}[{i}]", out) for i, r in enumerate(ret))
  if isinstance(ret, dict): return {k: _outputs(r, f"{path}[{k!r}]", out) for k, r in ret.items()}
  raise JitError(f"TinyJit: the function returned {type(ret).__name__} {ret!r} at {path}: a replay "
                 "does not run the function, so it can return only Tensors (in tuples, lists or dicts) or None")


class TinyJit:
  def __init__(self, fxn, prune=False, optimize=False):
    # prune (tinygrad: drop the kernels that do not depend on the inputs) is what every capture
    # does here: such a launch runs again only when a buffer it reads was written since
    self.fxn, self.prune, self.optimize = fxn, prune, optimize
    self._jit = _C._TinyJit(self._run)
    self._out = None  # the return value with each Tensor replaced by its output index
    self._layout = None  # how the arguments nested at the capture
    self._frozen_at_capture = {}  # the Python values the capture saw (_frozen)
    try:
      self._signature = inspect.signature(fxn)
    except (TypeError, ValueError):
      self._signature = None  # a builtin: positional arguments, then keywords sorted by name
    self._instances = weakref.WeakKeyDictionary()
    functools.update_wrapper(self, fxn)

  def _bind(self, args, kwargs):
    """The call as (positional, keyword) arguments in the function's parameter order."""
    if self._signature is None:
      self._names = [str(i) for i in range(len(args))]
      return list(args), dict(sorted(kwargs.items()))
    try:
      bound = self._signature.bind(*args, **kwargs)
    except TypeError as e:
      raise TypeError(f"TinyJit({getattr(self.fxn, '__name__', 'function')}): {e}") from None
    bound.apply_defaults()  # f(x) and f(x, scale=1.0) are one call
    self._names = []  # each positional argument's parameter, for messages
    for p in self._signature.parameters.values():
      if p.kind == p.VAR_POSITIONAL:
        self._names += [f"{p.name}[{j}]" for j in range(len(bound.args) - len(self._names))]
      elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD): self._names.append(p.name)
    return list(bound.args), dict(bound.kwargs)

  def _frozen(self):
    """The Python values this call's function sees that a replay cannot change: the arguments
    that are not tensors (by parameter name) and the numbers it reads from outside."""
    out = {}
    for name, a in zip(self._names, self._tree[0]): _constants(a, f"argument {name!r}", out)
    for k, v in self._tree[1].items(): _constants(v, f"argument {k!r}", out)
    out.update(_outside(self.fxn))
    return out

  def _run(self, inputs):
    ret = self.fxn(*_fill(self._tree[0], inputs), **_fill(self._tree[1], inputs))
    out = []
    self._out = None if ret is None else _outputs(ret, "the return value", out)
    return out

  def __call__(self, *args, **kwargs):
    inputs = _Inputs()
    self._tree = _flatten(tuple(self._bind(args, kwargs)), inputs)
    layout = _call_layout(self._tree)
    replay = self._jit.captured
    if replay and layout != self._layout:
      raise JitError(f"TinyJit: called with arguments {layout}, captured with {self._layout}: "
                     "tensors must stand where they stood at the capture")
    frozen = self._frozen()
    if replay:  # a Python value the capture saw differently would replay a wrong result
      for where, was in self._frozen_at_capture.items():
        if where in frozen and not _same(was, frozen[where]):
          raise JitError(f"TinyJit: {where} is {frozen[where]!r}, captured with {was!r}: a replay does not run the function, "
                         "so its Python values are fixed at the capture; pass a Tensor or a Variable for a value that changes "
                         "(or reset() to capture again)")
    out = self._jit(inputs.tensors)
    if not replay: self._layout, self._frozen_at_capture = layout, frozen
    return None if self._out is None else _map(self._out, lambda i: out[i])

  @property
  def captured(self) -> bool: return self._jit.captured

  @property
  def kernel_count(self) -> int: return self._jit.kernel_count

  def reset(self):
    self._jit.reset()
    self._layout, self._frozen_at_capture = None, {}

  def __get__(self, obj, objtype=None):  # on a method: one capture per instance
    if obj is None: return self
    try:
      jit = self._instances.get(obj)
      if jit is None: jit = self._instances[obj] = TinyJit(self.fxn.__get__(obj, objtype), self.prune, self.optimize)
      return jit
    except TypeError:  # an instance that cannot be weakly referenced shares one capture
      return functools.partial(self.__call__, obj)
