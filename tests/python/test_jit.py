"""tinycore.TinyJit from Python: call 1 runs the function, call 2 captures its kernels, later calls
replay them with the new inputs; wrong inputs raise, JIT=0 turns it off, Variables rebind."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tinycore
from tinycore import Context, GlobalCounters, Tensor, TinyJit, Variable, dtypes
from tinycore.jit import JitError


class Counted:
  """A step function that counts how often its Python body runs."""

  def __init__(self, fn):
    self.fn, self.runs = fn, 0

  def __call__(self, *args, **kwargs):
    self.runs += 1
    return self.fn(*args, **kwargs)


def inputs(i):
  x = np.arange(6, dtype=np.float32).reshape(2, 3) * (i + 1) - i
  y = np.array([0.5, -1.0, 2.0], dtype=np.float32) + i
  return x, y


def reference(x, y):
  x, y = x.astype(np.float64), y.astype(np.float64)
  return (x * y + 1) / (np.abs(y) + 1), (x - y).sum(axis=1)


def step_fn(x, y):
  return (x * y + 1) / (y.abs() + 1), (x - y).sum(axis=1)


def test_plain_then_capture_then_replay_with_new_inputs():
  body = Counted(step_fn)
  jit = TinyJit(body)
  for i in range(6):
    x, y = inputs(i)
    GlobalCounters.reset()
    a, b = jit(Tensor(x), Tensor(y))
    want_a, want_b = reference(x, y)
    np.testing.assert_allclose(a.numpy(), want_a, rtol=1e-6)
    np.testing.assert_allclose(b.numpy(), want_b, rtol=1e-6)
    # call 1 runs the body plainly, call 2 runs it once more to capture, replays skip it
    assert body.runs == min(i + 1, 2), f"call {i + 1}"
    assert jit.captured == (i >= 1)
    if i >= 2: assert GlobalCounters.kernel_count == jit.kernel_count > 0
  assert jit.kernel_count > 0


def test_outputs_are_fresh_each_call():
  jit = TinyJit(lambda x: x * 2 + 1)
  kept = [(jit(Tensor([float(i), -float(i)])), i) for i in range(5)]
  for out, i in kept:  # an output is not overwritten by later replays
    assert out.tolist() == [2.0 * i + 1, -2.0 * i + 1]
  assert len({id(o) for o, _ in kept}) == 5


def test_return_forms_and_keyword_and_constant_arguments():
  single = TinyJit(lambda x, scale: x * scale)
  listed = TinyJit(lambda x, *, y: [x + y, x - y])
  nothing = TinyJit(lambda x: (x.assign(x + 1).realize(), None)[1])  # a step run for its writes
  for i in range(4):
    x = Tensor([1.0, float(i)])
    out = single(x, 3.0)
    assert isinstance(out, Tensor) and out.tolist() == [3.0, 3.0 * i]
    pair = listed(x, y=Tensor([float(i), 1.0]))
    assert isinstance(pair, list) and [p.tolist() for p in pair] == [[1.0 + i, i + 1.0], [1.0 - i, i - 1.0]]
    assert nothing(x) is None and x.tolist() == [2.0, i + 1.0]


def test_jit_on_a_method():
  class Model:
    def __init__(self):
      self.w = Tensor([[1.0, 2.0], [3.0, 4.0]])

    @TinyJit
    def __call__(self, x):
      return (x @ self.w).relu()

  m = Model()
  w = np.array([[1.0, 2.0], [3.0, 4.0]])
  for i in range(4):
    x = np.array([[1.0, -float(i)]], dtype=np.float32)
    np.testing.assert_allclose(m(Tensor(x)).numpy(), np.maximum(x @ w, 0))


@pytest.mark.parametrize("make,fragments", [
    (lambda: (Tensor.ones(3, 3), Tensor.ones(3)), ["TinyJit", "input 0", "(3, 3)", "(2, 3)"]),
    (lambda: (Tensor.ones(2, 3), Tensor.ones(4)), ["TinyJit", "input 1", "(4,)", "(3,)"]),
    (lambda: (Tensor.ones(2, 3, dtype=dtypes.float16), Tensor.ones(3)), ["TinyJit", "input 0", "half", "float"]),
    (lambda: (Tensor.ones(2, 3), [Tensor.ones(3)]), ["TinyJit", "called with arguments (Tensor, list[Tensor])", "captured with (Tensor, Tensor)"]),
])
def test_replay_with_different_inputs_raises(make, fragments):
  jit = TinyJit(step_fn)
  for i in range(3): jit(*(Tensor(a) for a in inputs(i)))
  with pytest.raises(RuntimeError) as info:
    jit(*make())
  for f in fragments: assert f in str(info.value)
  a, _ = jit(*(Tensor(a) for a in inputs(5)))  # the capture is still usable
  np.testing.assert_allclose(a.numpy(), reference(*inputs(5))[0], rtol=1e-6)


def test_reset_captures_again_with_new_shapes():
  body = Counted(lambda x: x.sum(axis=0))
  jit = TinyJit(body)
  for _ in range(3): jit(Tensor.ones(2, 3))
  jit.reset()
  assert not jit.captured
  for n in range(3):
    assert jit(Tensor.ones(4, 2) * n).tolist() == [4.0 * n, 4.0 * n]
  assert body.runs == 4 and jit.captured


def test_jit_off_by_environment(monkeypatch):
  monkeypatch.setenv("JIT", "0")
  body = Counted(lambda x: x + 1)
  jit = TinyJit(body)
  for i in range(4): assert jit(Tensor([float(i)])).tolist() == [i + 1.0]
  assert body.runs == 4 and not jit.captured


def test_jit_off_by_context():
  body = Counted(lambda x: x * x)
  jit = TinyJit(body)
  with Context(JIT=0):
    for i in range(3): assert jit(Tensor([float(i)])).tolist() == [float(i * i)]
  assert body.runs == 3 and not jit.captured
  assert os.environ.get("JIT") is None or os.environ["JIT"] != "0"
  for i in range(4): assert jit(Tensor([float(i)])).tolist() == [float(i * i)]  # on again
  assert jit.captured and body.runs == 5


def test_variable_rebinds_between_replays():
  v = Variable("n", 0, 8)
  assert (v.name, v.min, v.max, v.value) == ("n", 0, 8, 0)

  @TinyJit
  def prefix_sum(x):  # sums the first n elements: the mask reads the bound value at launch
    return (Tensor.arange(8) < v.tensor()).where(x, 0.0).sum()

  x = np.arange(1, 9, dtype=np.float32)
  for n in (3, 8, 0, 5, 1, 7):
    v.bind(n)
    assert v.value == n
    assert prefix_sum(Tensor(x)).item() == x[:n].sum(), f"n={n}"
  with pytest.raises(RuntimeError, match=r"Variable n: value 9 is outside its range \[0, 8\]"):
    v.bind(9)


def test_a_new_variable_each_call_moves_a_window_write():
  # tinygrad's test_jit_setitem_variable_offset: the Variable is an argument, new every call
  @TinyJit
  def write_row(t, a, v):
    t.shrink(((v, v + 1), None)).assign(a).realize()

  @TinyJit
  def write_pair(t, a, v):
    t[v - 1:v + 1] = a
    t.realize()

  t, pairs = Tensor.zeros(6, 6).contiguous().realize(), Tensor.zeros(7).contiguous().realize()
  want, want_pairs = np.zeros((6, 6)), np.zeros(7)
  for i in (0, 3, 5, 1, 4, 2):
    write_row(t, Tensor.full((1, 6), i + 1.0).contiguous(), Variable("v", 0, 5).bind(i))
    want[i, :] = i + 1
    np.testing.assert_array_equal(t.numpy(), want)
    write_pair(pairs, Tensor([i + 0.5, -i - 0.5]), Variable("p", 1, 6).bind(i + 1))
    want_pairs[i:i + 2] = [i + 0.5, -i - 0.5]
    np.testing.assert_array_equal(pairs.numpy(), want_pairs)
  assert write_row.captured and write_pair.captured


def test_variable_bounds_must_keep_a_fixed_length():
  t, v = Tensor.zeros(6, 6).contiguous().realize(), Variable("v", 0, 5).bind(2)
  with pytest.raises(ValueError, match=r"Tensor.shrink: the range \(v, 3\) has a Variable start and a length 3-v"):
    t.shrink(((v, 3), None))
  with pytest.raises(ValueError, match=r"Tensor indexing: the bounds \(v, w\) are two Variables"):
    t[v:Variable("w", 0, 5)]
  with pytest.raises(IndexError, match=r"with a Variable bound must have step 1"):
    t[v:v + 4:2]
  with pytest.raises(ValueError, match=r"the range \(v\+2, v\) has a negative length"):
    t[v + 2:v]
  np.testing.assert_array_equal(t[1, v:v + 3].numpy(), np.zeros(3))


def test_assign_inside_the_step_persists_across_replays():
  w = Tensor([0.0, 0.0])

  @TinyJit
  def step(x):
    w.assign(w + x).realize()
    return w * 2

  total = np.zeros(2)
  for i in range(6):
    x = np.array([1.0, i], dtype=np.float32)
    total += x
    np.testing.assert_array_equal(step(Tensor(x)).numpy(), 2 * total)
    np.testing.assert_array_equal(w.numpy(), total)


def test_unrealized_assign_inside_the_step_persists():
  w = Tensor([0.0, 0.0])

  @TinyJit
  def step(x):
    w.assign(w + x)
    return w * 1

  total = np.zeros(2)
  for i in range(5):
    x = np.array([1.0, i], dtype=np.float32)
    total += x
    np.testing.assert_array_equal(step(Tensor(x)).numpy(), total)
  np.testing.assert_array_equal(w.numpy(), total)


def test_reading_values_inside_the_step_raises():
  @TinyJit
  def peek(x):
    x.numpy()
    return x * 2

  assert peek(Tensor([1.0])).tolist() == [2.0]  # the plain first call may read
  with pytest.raises(RuntimeError, match="inside a TinyJit"):
    peek(Tensor([1.0]))


def test_call_after_a_failed_capture_does_not_crash():
  # in a child process: the crash would take pytest down with it
  script = textwrap.dedent("""
      from tinycore import Tensor, TinyJit
      calls = [0]
      def fn(x):
        calls[0] += 1
        if calls[0] == 2: raise ValueError("fails while capturing")
        return x * 2
      jit = TinyJit(fn)
      jit(Tensor([1.0]))
      try: jit(Tensor([1.0]))
      except ValueError: pass
      for i in range(3):
        try: jit(Tensor([float(i)])).tolist()
        except RuntimeError: pass
      print("survived")
  """)
  env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(tinycore.__file__)))
  proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
  assert proc.returncode == 0 and "survived" in proc.stdout, proc.stderr[-2000:]


def test_bad_return_value_is_a_jit_error():
  jit = TinyJit(lambda x: 3)
  with pytest.raises(JitError, match="returned int 3 at the return value"):
    jit(Tensor([1.0]))


# ---- tinygrad's footguns (test_jit_footguns.py): each replays correctly or is a JitError ----
def test_tensors_inside_lists_and_dicts_are_inputs():
  @TinyJit
  def f(a, arr, named):
    return {"sum": (a + arr[0] * arr[1]).realize(), "scaled": [named["w"] * 2]}

  for i in range(5):
    a, b, c, w = (np.array([1.0, -2.0, 3.0], dtype=np.float32) * (i + k) for k in range(4))
    out = f(Tensor(a), [Tensor(b), Tensor(c)], {"w": Tensor(w)})
    np.testing.assert_allclose(out["sum"].numpy(), a + b * c)
    np.testing.assert_allclose(out["scaled"][0].numpy(), w * 2)
  with pytest.raises(JitError, match=r"called with arguments \(Tensor, list\[Tensor, Tensor\], \{'w': constant\}\), captured with \(Tensor, list\[Tensor, Tensor\], \{'w': Tensor\}\)"):
    f(Tensor(a), [Tensor(b), Tensor(c)], {"w": 2.0})


def test_keyword_order_and_positional_or_keyword_calls_are_one_call():
  @TinyJit
  def f(first, second): return (first / second).realize()

  for i in range(4):
    a, b = np.float32([1.0, 2.0, 3.0]) + i, np.float32([2.0, 4.0, 8.0]) + i
    want = a / b
    np.testing.assert_allclose(f(second=Tensor(b), first=Tensor(a)).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(f(first=Tensor(a), second=Tensor(b)).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(f(Tensor(a), second=Tensor(b)).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(f(Tensor(a), Tensor(b)).numpy(), want, rtol=1e-6)
  with pytest.raises(TypeError, match=r"TinyJit\(f\): missing a required argument: 'second'"):
    f(Tensor(a))


def test_each_instance_has_its_own_capture():
  class Model:
    def __init__(self, scale): self.scale = Tensor([scale])

    @TinyJit
    def forward(self, x): return (x * self.scale).realize()

  m1, m2 = Model(2.0), Model(3.0)
  for i in range(4):
    assert m1.forward(Tensor([5.0 + i])).item() == 2 * (5 + i)
    assert m2.forward(Tensor([5.0 + i])).item() == 3 * (5 + i)
  assert Model.forward.captured is False  # the class's TinyJit ran nothing itself


def test_one_tensor_as_two_arguments_and_nothing_to_replay_are_jit_errors():
  add = TinyJit(lambda a, b: (a + b).realize())
  x = Tensor([1.0, 2.0, 3.0])
  with pytest.raises(JitError, match="inputs 0 and 1 are the same tensor"):
    add(x, x)
  for i in range(4):  # two tensors of one graph share a buffer when realized: still two inputs
    assert add(Tensor.full((3,), i) * 2, Tensor.full((3,), i) * 2).tolist() == [4.0 * i] * 3
  nothing = TinyJit(lambda a, b: None)
  nothing(Tensor([1.0]), Tensor([2.0]))
  with pytest.raises(JitError, match="ran no kernel and returned no tensor"):
    nothing(Tensor([1.0]), Tensor([2.0]))


def test_an_output_fed_back_then_a_new_input():
  @TinyJit
  def step(x): return ((x + 1).realize() * 2).realize()

  step(Tensor([10.0]).contiguous().realize())
  x = step(Tensor([20.0]).contiguous().realize())
  for _ in range(3): x = step(x)
  assert x.item() == 350
  y = Tensor([100.0]).contiguous().realize()
  for _ in range(3): y = step(y)
  assert y.item() == 814  # tinygrad's graph runner once gave 1406: the old output as the input


def test_constants_and_views_at_new_offsets_replay_their_own_values():
  mul = TinyJit(lambda a, b: (a * b).realize())
  plus = TinyJit(lambda a: (a + 1).realize())
  base = np.arange(100, dtype=np.float32).reshape(10, 10)
  t = Tensor(base).realize()
  for i in range(1, 6):
    assert mul(Tensor([1.0, 2.0, 3.0]).realize(), Tensor(float(i))).tolist() == [i, 2 * i, 3 * i]
    np.testing.assert_array_equal(plus(t[:, i:i + 2]).numpy(), base[:, i:i + 2] + 1)


# ---- dynamic dimensions: a length that is a Variable (tinycore/dynamic.py) ----
def test_a_dynamic_dimension_shows_its_length_pads_and_reads_its_values():
  x = np.random.default_rng(0).random((3, 10), dtype=np.float32)
  a, v = Tensor(x).realize(), Variable("i", 1, 10)
  for i in (4, 1, 10, 7):
    s = a[:, :v.bind(i)]
    assert repr(s.shape) == "(3, i)" and repr(10 - s.shape[1]) == "10-i" and repr(s.shape[1] + 2) == "i+2"
    np.testing.assert_array_equal(s.numpy(), x[:, :i])  # a read takes the bound value
    np.testing.assert_allclose((s * 2 + 1).numpy(), x[:, :i] * 2 + 1, rtol=1e-6)
    padded = (s.exp() + 1).pad((None, (0, 10 - s.shape[1])), value=-1.0)
    assert padded.shape == (3, 10)
    want = np.full((3, 10), -1.0, dtype=np.float32)
    want[:, :i] = np.exp(x[:, :i]) + 1
    np.testing.assert_allclose(padded.numpy(), want, rtol=1e-6)
    grown = s.pad(((1, 0), (2, 3)))  # still dynamic: 2 + i + 3
    assert repr(grown.shape) == "(4, i+5)"
    np.testing.assert_array_equal(grown.numpy(), np.pad(x[:, :i], ((1, 0), (2, 3))))
    # a column broadcasts into it; shrink with a Variable stop makes one too
    col = Tensor(np.arange(3, dtype=np.float32).reshape(3, 1))
    np.testing.assert_allclose((s - col).numpy(), x[:, :i] - np.arange(3).reshape(3, 1), rtol=1e-6)
    np.testing.assert_array_equal(a.shrink((None, (2, v))).numpy(), x[:, 2:i])


def test_a_pad_of_a_dynamic_dimension_follows_each_value_under_tinyjit():
  # tinygrad's test_symbolic_pad_view_frozen: tinygrad replays the length of its capture
  x = np.random.default_rng(1).random((3, 10), dtype=np.float32)
  a = Tensor(x).realize()

  @TinyJit
  def f(a): return (a + 1).pad((None, (0, 10 - a.shape[1]))).realize()

  @TinyJit
  def g(a): return (a + 1).pad((None, (0, 10 - a.shape[1]))).contiguous().realize()

  for jit in (f, g):
    for i in (1, 2, 3, 4, 9, 4, 10, 6):
      want = np.zeros((3, 10), dtype=np.float32)
      want[:, :i] = x[:, :i] + 1
      np.testing.assert_allclose(jit(a[:, :Variable("i", 1, 10).bind(i)]).numpy(), want, rtol=1e-6)
    assert jit.captured


def test_what_a_dynamic_dimension_cannot_do_raises_naming_it():
  a, v = Tensor.ones(3, 10).contiguous().realize(), Variable("i", 1, 10).bind(4)
  s = a[:, :v]
  for op, name in [(lambda: s.sum(), "sum"), (lambda: s.reshape(30), "reshape"), (lambda: s[0], "__getitem__"),
                   (lambda: s @ Tensor.ones(10, 2), "matmul"), (lambda: Tensor.ones(3, 10) + s, "add"),
                   (lambda: s.T, "T"), (lambda: Tensor.cat(a, s), "cat")]:
    with pytest.raises(ValueError, match=rf"Tensor.{name}"):
      op()
  with pytest.raises(ValueError, match=r"dimension 1 has length i in one operand and 10 in another"):
    Tensor.ones(3, 10) + s
  with pytest.raises(ValueError, match="a write needs a constant length"):
    a[:, :v] = 2.0
  with pytest.raises(ValueError, match="padding before the data"):
    s.pad((None, (v, 0)))
  with pytest.raises(ValueError, match=r"from 0 has 5 elements, but the length i ranges over \[1, 10\]"):
    Tensor.ones(3, 5)[:, :v]
  with pytest.raises(JitError, match="whose length is a Variable"):
    step = TinyJit(lambda t: t * 2)
    for i in range(2): step(a[:, :Variable("i", 1, 10).bind(i + 1)])


def test_python_values_that_differ_from_the_capture_are_jit_errors():
  @TinyJit
  def f(x, use_square, scale=1.0):
    return (x * x if use_square else x * 2) * scale

  for _ in range(3): assert f(Tensor([3.0]), False).tolist() == [6.0]
  assert f(Tensor([3.0]), False, scale=1.0).tolist() == [6.0]  # equal values replay
  with pytest.raises(JitError, match=r"argument 'use_square' is True, captured with False"):
    f(Tensor([3.0]), True)
  with pytest.raises(JitError, match=r"argument 'scale' is 2.0, captured with 1.0"):
    f(Tensor([3.0]), False, 2.0)
  f.reset()  # a new capture takes the new values
  for _ in range(3): assert f(Tensor([3.0]), True).tolist() == [9.0]

  mult = 1

  @TinyJit
  def g(x): return x * mult

  results = []
  for i in range(2):
    mult = i + 1
    results.append(g(Tensor([10.0])).item())
  assert results == [10.0, 20.0]
  assert g(Tensor([4.0])).item() == 8.0  # mult is still 2
  mult = 3
  with pytest.raises(JitError, match=r"'mult', read from outside the function, is 3, captured with 2"):
    g(Tensor([10.0]))

  @TinyJit
  def h(x, cfg): return x * cfg[0]

  for _ in range(3): assert h(Tensor([1.0]), (float("nan"),)).tolist()[0] != 1.0  # NaN is NaN
  model_a, model_b = object(), object()
  k = TinyJit(lambda x, m: x + 1)
  for _ in range(3): k(Tensor([1.0]), model_a)
  with pytest.raises(JitError, match="argument 'm' is <object"):
    k(Tensor([1.0]), model_b)  # another object (a module's weights) would replay model_a's
