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
  nothing = TinyJit(lambda x: None)
  for i in range(4):
    x = Tensor([1.0, float(i)])
    out = single(x, 3.0)
    assert isinstance(out, Tensor) and out.tolist() == [3.0, 3.0 * i]
    pair = listed(x, y=Tensor([float(i), 1.0]))
    assert isinstance(pair, list) and [p.tolist() for p in pair] == [[1.0 + i, i + 1.0], [1.0 - i, i - 1.0]]
    assert nothing(x) is None


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
    (lambda: (Tensor.ones(2, 3),), ["TinyJit", "1 inputs", "2"]),
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
  with pytest.raises(ValueError, match=r"Tensor.shrink: the bounds \(v, 3\) differ by a Variable"):
    t.shrink(((v, 3), None))
  with pytest.raises(ValueError, match=r"Tensor indexing: the bounds \(None, v\) differ by a Variable"):
    t[:v]
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


def test_bad_return_value_is_a_type_error():
  jit = TinyJit(lambda x: 3)
  with pytest.raises(TypeError, match="must return a Tensor"):
    jit(Tensor([1.0]))
