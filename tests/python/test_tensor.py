"""tinycore.Tensor from Python: construction, reading values back, every operator, indexing,
reductions, movement, creation and autograd, each checked against numpy in double precision."""
import numpy as np
import pytest

from tinycore import Device, Tensor, dtypes

RNG = np.random.default_rng(0)

NUMPY_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                np.uint64, np.float16, np.float32, np.float64]


@pytest.fixture(autouse=True)
def fresh_rng():
  """Each test draws the same data however the tests are selected or ordered."""
  global RNG
  RNG = np.random.default_rng(1)


def rand(*shape, low=-2.0, high=2.0):
  return RNG.uniform(low, high, shape).astype(np.float32)


def close(t: Tensor, ref, atol=1e-5, rtol=1e-5):
  """t's values match the double-precision reference `ref`, with the same shape."""
  got = t.numpy()
  ref = np.asarray(ref)
  assert got.shape == ref.shape, f"shape {got.shape}, expected {ref.shape}"
  np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), atol=atol, rtol=rtol)


def sample(np_dtype, shape=(2, 3)):
  """Small values every dtype holds exactly (bools alternate)."""
  n = int(np.prod(shape))
  if np_dtype is np.bool_: return (np.arange(n) % 2 == 0).reshape(shape)
  return (np.arange(n) % 7 + 1).astype(np_dtype).reshape(shape)


# ---------------------------------------------------------------- construction

@pytest.mark.parametrize("data,dtype", [
    ([1, 2, 3], dtypes.int32),
    ([[1, 2], [3, 4]], dtypes.int32),
    ((1, 2), dtypes.int32),
    ([1.5, 2], dtypes.float32),
    ([1, 2.5], dtypes.float32),
    ([True, False], dtypes.bool),
    ([[True], [False]], dtypes.bool),
    (3, dtypes.int32),
    (-2.5, dtypes.float32),
    (True, dtypes.bool),
    ([], dtypes.float32),
])
def test_python_data_dtype_inference(data, dtype):
  # tinygrad's rules: Python ints are int32, floats float32, bools bool
  t = Tensor(data)
  assert t.dtype == dtype
  assert t.shape == np.array(data).shape
  assert t.tolist() == np.array(data).tolist()


@pytest.mark.parametrize("np_dtype", NUMPY_DTYPES, ids=lambda d: d.__name__)
def test_numpy_array_keeps_its_dtype(np_dtype):
  a = sample(np_dtype)
  t = Tensor(a)
  assert t.dtype == np.dtype(np_dtype)
  assert t.shape == (2, 3)
  out = t.numpy()
  assert out.dtype == np.dtype(np_dtype)
  np.testing.assert_array_equal(out, a)
  assert t.tolist() == a.tolist()
  assert t[1, 2].item() == a[1, 2].item() and type(t[1, 2].item()) is type(a[1, 2].item())


@pytest.mark.parametrize("np_dtype", [np.int8, np.uint16, np.float64, np.bool_], ids=lambda d: d.__name__)
def test_numpy_scalar_array_is_0d_and_keeps_its_dtype(np_dtype):
  a = np.array(sample(np_dtype, (1,))[0])
  t = Tensor(a)
  assert t.shape == () and t.dtype == np.dtype(np_dtype)
  assert t.item() == a.item()


def test_non_contiguous_numpy_arrays():
  a = np.arange(24, dtype=np.float32).reshape(4, 6)
  for view in (a.T, a[::2, 1::3], a[::-1], np.broadcast_to(a[0], (3, 6))):
    np.testing.assert_array_equal(Tensor(view).numpy(), view)


def test_extreme_64_bit_values_round_trip():
  for a in (np.array([2**64 - 1, 2**63, 0], dtype=np.uint64), np.array([-2**63, 2**63 - 1, -1], dtype=np.int64)):
    np.testing.assert_array_equal(Tensor(a).numpy(), a)
  big = 2**53 + 1  # not a float64: must not pass through a double
  assert Tensor(np.array([big], dtype=np.int64)).tolist() == [big]


def test_empty_numpy_array():
  t = Tensor(np.zeros((0, 3), dtype=np.int16))
  assert t.shape == (0, 3) and t.dtype == dtypes.int16 and t.numel() == 0
  assert t.numpy().shape == (0, 3)


@pytest.mark.parametrize("dtype", [dtypes.float16, dtypes.int64, "int8", np.uint8, "float64", dtypes.bool])
def test_dtype_argument_overrides_inference(dtype):
  t = Tensor([0, 1, 2], dtype=dtype)
  assert t.dtype == dtype
  np.testing.assert_array_equal(t.numpy(), np.array([0, 1, 2]).astype(t.numpy().dtype))


def test_dtype_argument_converts_numpy_data():
  t = Tensor(np.array([1.75, -2.5]), dtype=dtypes.int32)
  assert t.dtype == dtypes.int32
  assert t.tolist() == [1, -2]  # truncation toward zero, as numpy's astype


def test_bytes_are_uint8():
  t = Tensor(b"\x00\x01\xfe\xff")
  assert t.dtype == dtypes.uint8
  assert t.tolist() == [0, 1, 254, 255]


def test_none_is_an_empty_float_tensor():
  t = Tensor(None)
  assert t.shape == (0,) and t.dtype == dtypes.float32


def test_tensor_from_tensor_and_cast():
  a = Tensor([1.5, 2.5])
  assert Tensor(a).tolist() == [1.5, 2.5]
  b = Tensor(a, dtype=dtypes.float16)
  assert b.dtype == dtypes.float16 and b.tolist() == [1.5, 2.5]


def test_device_and_requires_grad_arguments():
  t = Tensor([1.0, 2.0], device="cpu", requires_grad=True)
  assert t.device == "CPU"
  assert t.requires_grad is True


def test_numpy_scalars_become_0d_tensors():
  assert Tensor(np.float32(2.5)).shape == ()
  assert Tensor(np.float32(2.5)).item() == 2.5
  assert Tensor(np.int64(-7)).item() == -7


def test_python_ints_up_to_2_64_are_uint64_constants():
  top = 2**64 - 1
  assert Tensor(top, dtype=dtypes.uint64).numpy() == np.uint64(top)
  t = Tensor([1, 2**63], dtype=dtypes.uint64) + 2**63  # wraps like uint64
  assert t.numpy().tolist() == [2**63 + 1, 0]
  assert (Tensor([top], dtype=dtypes.uint64) // 1).numpy().tolist() == [top]
  assert Tensor([1.0]).add(2**63).item() == 2.0**63  # the value, not the bits, for a float
  for bad in (2**64, -2**63 - 1):
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
      Tensor([1], dtype=dtypes.uint64) + bad


# ---------------------------------------------------------------- values back on the host

def test_numpy_returns_a_copy():
  t = Tensor([1.0, 2.0])
  a = t.numpy()
  a[0] = 99
  assert t.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("value,typ", [(3, int), (2.5, float), (True, bool)])
def test_item_returns_python_scalars(value, typ):
  item = Tensor(value).item()
  assert type(item) is typ and item == value
  assert type(Tensor([[value]]).item()) is typ


def test_tolist_nesting_and_types():
  assert Tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
  assert Tensor(5).tolist() == 5
  assert Tensor([[True, False]]).tolist() == [[True, False]]
  assert Tensor(np.zeros((2, 0))).tolist() == [[], []]


def test_bfloat16_comes_back_as_float32():
  t = Tensor([1.5, -2.0], dtype=dtypes.bfloat16)
  assert t.dtype == dtypes.bfloat16
  out = t.numpy()
  assert out.dtype == np.float32 and out.tolist() == [1.5, -2.0]


def test_properties():
  t = Tensor(np.zeros((2, 3, 4), dtype=np.float16))
  assert t.shape == (2, 3, 4) and isinstance(t.shape, tuple)
  assert t.ndim == 3 and t.dim() == 3
  assert t.numel() == 24
  assert len(t) == 2
  assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
  assert t.dtype == dtypes.float16 and t.element_size() == 2 and t.nbytes() == 48
  assert t.device == "CPU"
  assert t.is_floating_point() and not Tensor([1]).is_floating_point()
  scalar = Tensor(1.0)
  assert scalar.shape == () and scalar.ndim == 0 and scalar.numel() == 1


def test_repr_names_shape_dtype_and_device():
  r = repr(Tensor.zeros(2, 3))
  assert "(2, 3)" in r and "float" in r and "CPU" in r


# ---------------------------------------------------------------- operators

A = rand(2, 3)
B = rand(3) + 3.0  # positive and away from 0: a safe divisor and pow base
FLOAT_OPS = [
    ("add", lambda x, y: x + y),
    ("sub", lambda x, y: x - y),
    ("mul", lambda x, y: x * y),
    ("truediv", lambda x, y: x / y),
    ("floordiv", lambda x, y: x // y),
    ("mod", lambda x, y: x % y),
    ("lt", lambda x, y: x < y),
    ("le", lambda x, y: x <= y),
    ("gt", lambda x, y: x > y),
    ("ge", lambda x, y: x >= y),
    ("eq", lambda x, y: x == y),
    ("ne", lambda x, y: x != y),
]


@pytest.mark.parametrize("name,op", FLOAT_OPS, ids=[n for n, _ in FLOAT_OPS])
def test_float_binary_ops_broadcast(name, op):
  a64, b64 = A.astype(np.float64), B.astype(np.float64)
  a64[0, 1] = b64[1]  # one equal pair, so == and <= see both outcomes
  ta, tb = Tensor(a64.astype(np.float32)), Tensor(b64.astype(np.float32))
  out = op(ta, tb)
  ref = op(a64, b64)
  assert out.dtype == (dtypes.bool if ref.dtype == np.bool_ else dtypes.float32)
  close(out, ref, atol=1e-5)
  close(op(tb, ta), op(b64, a64), atol=1e-5)  # broadcasting works either way round


@pytest.mark.parametrize("name,op", FLOAT_OPS, ids=[n for n, _ in FLOAT_OPS])
def test_float_ops_with_python_scalars_and_reflected(name, op):
  a64 = A.astype(np.float64)
  ta = Tensor(A)
  for s in (2.5, 3, -1.5):
    out = op(ta, s)
    assert out.dtype in (dtypes.float32, dtypes.bool)  # a scalar never promotes a float tensor
    close(out, op(a64, s), atol=1e-5)
  for s in (2.5, -3):  # __radd__, __rsub__ ... with the scalar on the left
    close(op(s, Tensor(B)), op(s, B.astype(np.float64)), atol=1e-5)


def test_numpy_scalars_as_operands_on_either_side():
  t = Tensor([1.0, 2.0])
  for out, ref in ((t + np.float32(2), [3.0, 4.0]), (np.float32(2) + t, [3.0, 4.0]),
                   (np.float64(2) * t, [2.0, 4.0]), (np.int64(3) - t, [2.0, 1.0]), (t / np.int32(2), [0.5, 1.0])):
    assert isinstance(out, Tensor) and out.dtype == dtypes.float32
    assert out.tolist() == ref
  with pytest.raises(TypeError):  # an array is not silently iterated into 0-d tensors
    np.ones(2) + t


def test_pow():
  base, e = B.astype(np.float64), A.astype(np.float64)
  close(Tensor(B) ** Tensor(A), base**e, rtol=1e-5)
  close(Tensor(B) ** 2, base**2, rtol=1e-6)
  close(Tensor(B) ** 0.5, base**0.5, rtol=1e-6)
  close(2 ** Tensor(A), 2.0**e, rtol=1e-6)  # __rpow__
  # a negative base with an integral exponent is defined
  close(Tensor([-2.0, -3.0, 0.0]) ** 3, np.array([-8.0, -27.0, 0.0]))
  close(Tensor([-2.0, 4.0]) ** -1, np.array([-0.5, 0.25]))


INT_A = np.array([[-7, -3, 0], [5, 8, 13]], dtype=np.int32)
INT_B = np.array([3, -2, 4], dtype=np.int32)
INT_OPS = [
    ("add", lambda x, y: x + y),
    ("sub", lambda x, y: x - y),
    ("mul", lambda x, y: x * y),
    ("floordiv", lambda x, y: x // y),
    ("mod", lambda x, y: x % y),
    ("and", lambda x, y: x & y),
    ("or", lambda x, y: x | y),
    ("xor", lambda x, y: x ^ y),
    ("lt", lambda x, y: x < y),
    ("eq", lambda x, y: x == y),
    ("maximum", lambda x, y: x.maximum(y) if isinstance(x, Tensor) else np.maximum(x, y)),
    ("minimum", lambda x, y: x.minimum(y) if isinstance(x, Tensor) else np.minimum(x, y)),
]


@pytest.mark.parametrize("name,op", INT_OPS, ids=[n for n, _ in INT_OPS])
def test_int_binary_ops(name, op):
  # // and % round toward negative infinity, as Python and numpy
  out = op(Tensor(INT_A), Tensor(INT_B))
  ref = op(INT_A.astype(np.int64), INT_B.astype(np.int64))
  assert out.dtype == (dtypes.bool if ref.dtype == np.bool_ else dtypes.int32)
  np.testing.assert_array_equal(out.numpy(), ref)
  # an int scalar keeps the int dtype, on either side
  out = op(Tensor(INT_A), 3)
  assert out.dtype in (dtypes.int32, dtypes.bool)
  np.testing.assert_array_equal(out.numpy(), op(INT_A.astype(np.int64), 3))


@pytest.mark.parametrize("np_dtype", [np.int8, np.int16, np.int64, np.uint8, np.uint16, np.uint32, np.uint64],
                         ids=lambda d: d.__name__)
def test_int_ops_in_every_int_dtype(np_dtype):
  signed = np.issubdtype(np_dtype, np.signedinteger)
  a = np.array([[-7, -3, 0], [5, 8, 13]] if signed else [[7, 3, 0], [5, 8, 13]], dtype=np_dtype)
  b = np.array([3, -2, 4] if signed else [3, 2, 4], dtype=np_dtype)
  for name, op in INT_OPS:
    out = op(Tensor(a), Tensor(b))
    ref = op(a, b)
    assert out.dtype == ref.dtype, name
    np.testing.assert_array_equal(out.numpy(), ref, err_msg=name)


def test_integer_overflow_wraps_as_numpy():
  u8 = np.array([200, 255, 3], dtype=np.uint8)
  np.testing.assert_array_equal((Tensor(u8) + 100).numpy(), u8 + np.uint8(100))
  np.testing.assert_array_equal((Tensor(u8) - 10).numpy(), u8 - np.uint8(10))
  i8 = np.array([100, -100], dtype=np.int8)
  np.testing.assert_array_equal((Tensor(i8) * 2).numpy(), i8 * np.int8(2))


def test_float64_keeps_its_precision_and_float16_rounds():
  d = Tensor(np.array([1.0, 2.0])) + 1e-12
  assert d.dtype == dtypes.float64 and d.numpy()[0] == 1.0 + 1e-12
  h = Tensor(np.array([1.0, 2048.0], dtype=np.float16)) + 1
  assert h.dtype == dtypes.float16
  np.testing.assert_array_equal(h.numpy(), np.array([1.0, 2048.0], dtype=np.float16) + np.float16(1))


@pytest.mark.parametrize("name,op", INT_OPS[:8], ids=[n for n, _ in INT_OPS[:8]])
def test_int_reflected_ops(name, op):
  out = op(5, Tensor(INT_B))
  assert out.dtype == dtypes.int32
  np.testing.assert_array_equal(out.numpy(), op(5, INT_B.astype(np.int64)))


def test_int_true_division_is_float():
  out = Tensor(INT_A) / Tensor(INT_B)
  assert out.dtype == dtypes.float32
  close(out, INT_A / INT_B.astype(np.float64), rtol=1e-6)
  out = 7 / Tensor([2, 4])
  assert out.dtype == dtypes.float32 and out.tolist() == [3.5, 1.75]


def test_shifts_and_invert():
  u = np.array([1, 6, 255, 1024], dtype=np.uint32)
  np.testing.assert_array_equal((Tensor(u) << 3).numpy(), u << 3)
  np.testing.assert_array_equal((Tensor(u) >> 2).numpy(), u >> 2)
  assert (Tensor(u) << 3).dtype == dtypes.uint32
  np.testing.assert_array_equal((~Tensor(INT_A)).numpy(), ~INT_A)
  np.testing.assert_array_equal((~Tensor([True, False])).numpy(), [False, True])
  u8 = np.array([0, 15, 240], dtype=np.uint8)
  np.testing.assert_array_equal((~Tensor(u8)).numpy(), ~u8)


def test_reflected_shifts():
  u = np.array([1, 2, 3], dtype=np.uint32)
  out = 1 << Tensor(u)
  assert out.dtype == dtypes.uint32
  np.testing.assert_array_equal(out.numpy(), np.left_shift(np.uint32(1), u))
  np.testing.assert_array_equal((256 >> Tensor(u)).numpy(), np.right_shift(np.uint32(256), u))
  np.testing.assert_array_equal((Tensor(u) << Tensor(u)).numpy(), u << u)


def test_bool_ops():
  p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
  for op in (lambda x, y: x & y, lambda x, y: x | y, lambda x, y: x ^ y, lambda x, y: x == y, lambda x, y: x != y):
    out = op(Tensor(p), Tensor(q))
    assert out.dtype == dtypes.bool
    np.testing.assert_array_equal(out.numpy(), op(p, q))


def test_unary_operators():
  close(-Tensor(A), -A.astype(np.float64))
  close(+Tensor(A), A)
  close(abs(Tensor(A)), np.abs(A.astype(np.float64)))
  np.testing.assert_array_equal((-Tensor(INT_A)).numpy(), -INT_A)
  assert (-Tensor(INT_A)).dtype == dtypes.int32


@pytest.mark.parametrize("a_shape,b_shape", [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,)),
                                             ((2, 2, 3), (3, 4)), ((2, 2, 3), (2, 3, 4)), ((1, 2, 3), (4, 3, 2))])
def test_matmul(a_shape, b_shape):
  a, b = rand(*a_shape), rand(*b_shape)
  ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
  close(Tensor(a) @ Tensor(b), ref, atol=1e-5)
  close(Tensor(a).matmul(Tensor(b)), ref, atol=1e-5)
  close(Tensor(b).__rmatmul__(Tensor(a)), ref, atol=1e-5)


def test_int_matmul():
  a, b = INT_A, INT_B.reshape(3, 1)
  out = Tensor(a) @ Tensor(b)
  assert out.dtype == dtypes.int32
  np.testing.assert_array_equal(out.numpy(), a @ b)


def test_in_place_operators_keep_the_object_and_dtype():
  t = Tensor([1.0, 2.0, 4.0])
  same = t
  t += 1
  t -= Tensor([0.5, 0.5, 0.5])
  t *= 2
  t /= 4
  t **= 2
  assert t is same
  assert t.dtype == dtypes.float32
  close(t, ((np.array([1.0, 2.0, 4.0]) + 1 - 0.5) * 2 / 4) ** 2)
  i = Tensor([13, -7, 6])
  same = i
  i //= 4
  i &= Tensor([7, 7, 7])
  i |= 8
  i ^= 1
  i <<= 0
  assert i is same and i.dtype == dtypes.int32
  ref = np.array([13, -7, 6]) // 4
  np.testing.assert_array_equal(i.numpy(), ((ref & 7) | 8) ^ 1)
  u = Tensor(np.array([1, 16], dtype=np.uint8))
  u <<= 2
  u >>= 1
  assert u.tolist() == [2, 32]
  m = Tensor(np.eye(2, dtype=np.float32))
  m @= Tensor([[1.0, 2.0], [3.0, 4.0]])
  assert m.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_assign_converts_and_broadcasts_python_data():
  t = Tensor([1, 2])
  assert t.assign(5) is t and t.tolist() == [5, 5] and t.dtype == dtypes.int32
  f = Tensor([1.0, 2.0])
  f.assign([3, 4])  # Python data takes the tensor's dtype
  assert f.dtype == dtypes.float32 and f.tolist() == [3.0, 4.0]
  m = Tensor([[1.0, 2.0], [3.0, 4.0]])
  m.assign(Tensor([5.0, 6.0]))
  assert m.tolist() == [[5.0, 6.0], [5.0, 6.0]]
  r = Tensor([1.0])
  assert r.realize() is r


def test_in_place_mod_computes_the_python_remainder():
  t = Tensor([5.0, -5.0])
  t %= 1.5
  close(t, np.mod([5.0, -5.0], 1.5))


def test_in_place_update_is_seen_by_other_handles():
  t = Tensor([1, 2, 3])
  before = t * 1  # a graph built on the old value
  t += 10
  assert t.tolist() == [11, 12, 13]
  assert before.tolist() == [1, 2, 3]


# (a dtype, b dtype, tinygrad's least upper dtype). Values are small, so every result is exact.
PROMOTIONS = [
    ("bool", "int8", "int8"), ("bool", "uint8", "uint8"), ("bool", "float32", "float32"),
    ("int8", "int16", "int16"), ("int8", "uint8", "int16"), ("uint8", "uint16", "uint16"),
    ("uint16", "int16", "int32"), ("int32", "uint32", "int64"), ("uint8", "int32", "int32"),
    ("int32", "float16", "float16"), ("int64", "float32", "float32"), ("float16", "float32", "float32"),
    ("float16", "bfloat16", "float32"), ("float32", "float64", "float64"), ("uint64", "float16", "float16"),
    ("int64", "uint64", "float16"),
]


@pytest.mark.parametrize("da,db,expected", PROMOTIONS)
def test_binary_dtype_promotion(da, db, expected):
  a = Tensor(sample(np.float32, (4,)), dtype=da)  # 1, 2, 3, 4 (all True as bools)
  b = Tensor(sample(np.float32, (4,)), dtype=db)
  for out in (a + b, b + a, a * b):
    assert out.dtype == expected, f"{da} op {db}"
  ref = sample(np.float32, (4,)).astype(np.float64)
  ref_a = a.numpy().astype(np.float64)
  close(a + b, ref_a + ref)
  close(a * b, ref_a * ref)
  assert (a < b).dtype == dtypes.bool


@pytest.mark.parametrize("tensor_dtype,scalar,expected", [
    ("int8", 3, "int8"), ("uint8", 3, "uint8"), ("int8", 2.5, "float32"), ("int64", 2.5, "float32"),
    ("float16", 2.5, "float16"), ("float16", 3, "float16"), ("float64", 3, "float64"),
    ("bool", 3, "int32"), ("bool", 2.5, "float32"), ("bool", True, "bool"), ("uint8", True, "uint8"),
])
def test_scalar_dtype_rules(tensor_dtype, scalar, expected):
  t = Tensor([1, 0, 1], dtype=tensor_dtype)
  out = t * scalar
  assert out.dtype == expected
  assert (scalar * t).dtype == expected
  close(out, np.array([1, 0, 1], dtype=np.float64) * float(scalar))


# ---------------------------------------------------------------- elementwise math

@pytest.mark.parametrize("name,ref", [
    ("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("sin", np.sin), ("cos", np.cos), ("tanh", np.tanh),
    ("relu", lambda x: np.maximum(x, 0)), ("sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    ("reciprocal", lambda x: 1 / x), ("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc),
    ("square", np.square), ("sign", np.sign), ("abs", np.abs),
])
def test_unary_math(name, ref):
  x = rand(3, 4, low=0.1, high=3.0) if name in ("log", "sqrt", "reciprocal") else rand(3, 4)
  close(getattr(Tensor(x), name)(), ref(x.astype(np.float64)), atol=1e-5, rtol=1e-5)


def test_where_clip_and_cast():
  x = rand(2, 3)
  close((Tensor(x) > 0).where(Tensor(x), 0.5), np.where(x > 0, x, 0.5))
  close((Tensor(x) > 0).where(1.0, -1.0), np.where(x > 0, 1.0, -1.0))
  close(Tensor(x).clip(-0.5, 0.5), np.clip(x, -0.5, 0.5))
  c = Tensor([1.7, -1.7, 300.0]).cast(dtypes.int32)
  assert c.dtype == dtypes.int32 and c.tolist() == [1, -1, 300]
  assert Tensor([0, 2]).cast("bool").tolist() == [False, True]
  assert Tensor([1.5]).half().dtype == dtypes.float16
  assert Tensor([1]).float().dtype == dtypes.float32
  assert Tensor([1.0]).int().dtype == dtypes.int32


# ---------------------------------------------------------------- indexing

X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
INDICES = [
    1, -1, (0, 2), (-1, -2, -3), slice(1, None), slice(None, None, 2), slice(None, None, -1), slice(-3, -1),
    (slice(None), 1), (Ellipsis, 0), (Ellipsis, slice(1, 3)), (None, 0), (0, None, slice(None, None, -2)),
    (slice(0, 3, 2), slice(1, 4), slice(None, None, 3)), (1, Ellipsis, None), (slice(5, 1),),
]


@pytest.mark.parametrize("idx", INDICES, ids=[repr(i) for i in INDICES])
def test_basic_indexing(idx):
  out = Tensor(X)[idx]
  np.testing.assert_array_equal(out.numpy(), X[idx])


def test_advanced_indexing():
  t = Tensor(X)
  np.testing.assert_array_equal(t[[0, 2]].numpy(), X[[0, 2]])
  np.testing.assert_array_equal(t[Tensor([2, 0, -1])].numpy(), X[[2, 0, -1]])
  np.testing.assert_array_equal(t[:, [3, 1]].numpy(), X[:, [3, 1]])
  np.testing.assert_array_equal(t[Tensor([0, 1]), Tensor([2, 3])].numpy(), X[[0, 1], [2, 3]])
  np.testing.assert_array_equal(t[1, Tensor([[0], [3]]), 1:3].numpy(), X[1, [[0], [3]], 1:3])


def test_setitem():
  x = X.copy()
  t = Tensor(x)
  t[0] = 1.5
  x[0] = 1.5
  t[1, :, 2] = Tensor([9.0, 8.0, 7.0, 6.0])
  x[1, :, 2] = [9.0, 8.0, 7.0, 6.0]
  t[2, 1:3] = [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]]
  x[2, 1:3] = [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]]
  t[..., -1] = -1
  x[..., -1] = -1
  np.testing.assert_array_equal(t.numpy(), x)
  assert t.dtype == dtypes.float32


def test_gather_and_one_hot():
  x = rand(3, 4)
  idx = np.array([[0, 3], [1, 1], [2, 0]])
  close(Tensor(x).gather(1, Tensor(idx)), np.take_along_axis(x, idx, 1))
  np.testing.assert_array_equal(Tensor([0, 2, 1]).one_hot(3).numpy(), np.eye(3)[[0, 2, 1]])


# ---------------------------------------------------------------- reductions

R = rand(2, 3, 4)


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (1,)])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("name,ref", [
    ("sum", np.sum), ("max", np.max), ("min", np.min), ("mean", np.mean), ("prod", np.prod),
    ("std", lambda x, axis, keepdims: np.std(x, axis=axis, keepdims=keepdims, ddof=1)),
    ("var", lambda x, axis, keepdims: np.var(x, axis=axis, keepdims=keepdims, ddof=1)),
])
def test_float_reductions(name, ref, axis, keepdim):
  out = getattr(Tensor(R), name)(axis=axis, keepdim=keepdim)
  assert out.dtype == dtypes.float32
  close(out, ref(R.astype(np.float64), axis=axis, keepdims=keepdim), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("dtype,sum_dtype", [("bool", "int32"), ("int8", "int32"), ("int16", "int32"),
                                             ("uint8", "uint32"), ("int64", "int64"), ("float16", "float16")])
def test_sum_accumulates_in_a_wide_dtype(dtype, sum_dtype):
  a = np.ones((50, 4)) * (3 if dtype != "bool" else 1)  # 150 does not fit in int8
  out = Tensor(a, dtype=dtype).sum(axis=0)
  assert out.dtype == sum_dtype
  close(out, a.astype(np.dtype(dtype)).astype(np.float64).sum(axis=0))


def test_int_reductions_and_args():
  a = np.array([[3, -1, 7], [7, 2, -5]], dtype=np.int32)
  t = Tensor(a)
  assert t.max().item() == 7 and t.min().item() == -5 and t.sum().item() == 13
  assert t.max(axis=1).tolist() == [7, 7]
  assert t.mean().dtype == dtypes.float32 and t.mean().item() == pytest.approx(13 / 6)
  np.testing.assert_array_equal(t.argmax(axis=1).numpy(), np.argmax(a, axis=1))
  np.testing.assert_array_equal(t.argmin(axis=0).numpy(), np.argmin(a, axis=0))
  assert t.argmax().item() == 2  # the first of equal maxima, in flat order
  assert (t > 0).any().item() is True and (t > -6).all().item() is True
  assert (t > 0).all(axis=1).tolist() == [False, False]


def test_softmax_logsumexp_cumsum():
  x = rand(3, 5).astype(np.float64)
  e = np.exp(x - x.max(axis=-1, keepdims=True))
  close(Tensor(x.astype(np.float32)).softmax(), e / e.sum(axis=-1, keepdims=True), atol=1e-6)
  close(Tensor(x.astype(np.float32)).log_softmax(axis=0),
        x - np.log(np.exp(x).sum(axis=0, keepdims=True)), atol=1e-5)
  close(Tensor(x.astype(np.float32)).logsumexp(axis=1), np.log(np.exp(x).sum(axis=1)), atol=1e-5)
  close(Tensor(x.astype(np.float32)).cumsum(axis=1), np.cumsum(x, axis=1), atol=1e-5)


# ---------------------------------------------------------------- movement

M = np.arange(24, dtype=np.int32).reshape(2, 3, 4)


@pytest.mark.parametrize("name,op,ref", [
    ("reshape *shape", lambda t: t.reshape(4, 6), lambda a: a.reshape(4, 6)),
    ("reshape tuple", lambda t: t.reshape((6, -1)), lambda a: a.reshape(6, -1)),
    ("reshape None", lambda t: t.reshape(None, 12), lambda a: a.reshape(2, 12)),
    ("view", lambda t: t.view(24), lambda a: a.reshape(24)),
    ("permute *order", lambda t: t.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    ("permute tuple", lambda t: t.permute((1, 2, 0)), lambda a: a.transpose(1, 2, 0)),
    ("transpose", lambda t: t.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    ("T", lambda t: t[0].T, lambda a: a[0].T),
    ("expand", lambda t: t[:, :1].expand(2, 5, 4), lambda a: np.broadcast_to(a[:, :1], (2, 5, 4))),
    ("expand -1", lambda t: t[None].expand((3, -1, -1, -1)), lambda a: np.broadcast_to(a, (3, 2, 3, 4))),
    ("flip", lambda t: t.flip(0, 2), lambda a: a[::-1, :, ::-1]),
    ("shrink", lambda t: t.shrink(((0, 1), None, (1, 3))), lambda a: a[0:1, :, 1:3]),
    ("pad pairs", lambda t: t.pad(((1, 0), None, (0, 2))), lambda a: np.pad(a, ((1, 0), (0, 0), (0, 2)))),
    ("pad flat", lambda t: t.pad((1, 2)), lambda a: np.pad(a, ((0, 0), (0, 0), (1, 2)))),
    ("pad value", lambda t: t.pad(((0, 0), (1, 1), (0, 0)), value=-1), lambda a: np.pad(a, ((0, 0), (1, 1), (0, 0)), constant_values=-1)),
    ("flatten", lambda t: t.flatten(), lambda a: a.reshape(-1)),
    ("flatten 1", lambda t: t.flatten(1), lambda a: a.reshape(2, 12)),
    ("unsqueeze", lambda t: t.unsqueeze(1), lambda a: a[:, None]),
    ("squeeze", lambda t: t[:, :1].squeeze(1), lambda a: a[:, 0]),
    ("squeeze all", lambda t: t[None, :1, :, None].squeeze(), lambda a: a[0]),
    ("repeat", lambda t: t.repeat(2, 1, 2), lambda a: np.tile(a, (2, 1, 2))),
    ("cat", lambda t: t.cat(t * 2, dim=1), lambda a: np.concatenate([a, a * 2], axis=1)),
    ("cat static", lambda t: Tensor.cat(t, t, dim=-1), lambda a: np.concatenate([a, a], axis=-1)),
    ("stack", lambda t: Tensor.stack(t, t + 1, dim=1), lambda a: np.stack([a, a + 1], axis=1)),
    ("roll", lambda t: t.roll(1, 2), lambda a: np.roll(a, 1, 2)),
    ("triu", lambda t: t[0].triu(), lambda a: np.triu(a[0])),
    ("tril", lambda t: t[0].tril(-1), lambda a: np.tril(a[0], -1)),
])
def test_movement(name, op, ref):
  out = op(Tensor(M))
  assert out.dtype == dtypes.int32
  np.testing.assert_array_equal(out.numpy(), ref(M))


def test_split_and_chunk():
  parts = Tensor(M).split(2, dim=2)
  assert len(parts) == 2
  for got, want in zip(parts, np.split(M, 2, axis=2)): np.testing.assert_array_equal(got.numpy(), want)
  parts = Tensor(M).split([1, 3], dim=2)
  np.testing.assert_array_equal(parts[1].numpy(), M[:, :, 1:])
  chunks = Tensor(M).chunk(3, dim=1)
  assert [c.shape for c in chunks] == [(2, 1, 4)] * 3


# ---------------------------------------------------------------- creation

@pytest.mark.parametrize("make", [lambda f: f(2, 3), lambda f: f((2, 3)), lambda f: f([2, 3])])
def test_zeros_ones_shape_forms(make):
  for f, v in ((Tensor.zeros, 0.0), (Tensor.ones, 1.0)):
    t = make(f)
    assert t.shape == (2, 3) and t.dtype == dtypes.float32
    assert t.tolist() == [[v] * 3] * 2


def test_creation_keywords():
  t = Tensor.zeros(2, dtype=dtypes.int8, device="CPU", requires_grad=False)
  assert t.dtype == dtypes.int8 and t.device == "CPU" and t.tolist() == [0, 0]
  assert Tensor.ones(3, dtype="float16").dtype == dtypes.float16
  assert Tensor.ones(2, 2, requires_grad=True).requires_grad is True
  assert Tensor.zeros().shape == () and Tensor.ones(()).shape == ()
  f = Tensor.full((2, 2), 7)
  assert f.dtype == dtypes.int32 and f.tolist() == [[7, 7], [7, 7]]
  assert Tensor.full((1,), 2.5).dtype == dtypes.float32
  assert Tensor.full(3, True).tolist() == [True] * 3
  assert Tensor.full((2,), 3, dtype=dtypes.float64).dtype == dtypes.float64
  e = Tensor.empty(4, 5, dtype=dtypes.uint8)
  assert e.shape == (4, 5) and e.dtype == dtypes.uint8


def test_like_constructors():
  base = Tensor([[1, 2, 3]], dtype=dtypes.int16)
  for t, v in ((base.zeros_like(), 0), (base.ones_like(), 1), (base.full_like(9), 9)):
    assert t.shape == (1, 3) and t.dtype == dtypes.int16 and t.tolist() == [[v] * 3]
  assert base.zeros_like(dtype=dtypes.float32).dtype == dtypes.float32
  assert base.empty_like().shape == (1, 3)


@pytest.mark.parametrize("args,kwargs,ref,dtype", [
    ((5,), {}, np.arange(5), dtypes.int32),
    ((2, 8, 3), {}, np.arange(2, 8, 3), dtypes.int32),
    ((5, 0, -2), {}, np.arange(5, 0, -2), dtypes.int32),
    ((0.0, 1.0, 0.25), {}, np.arange(0, 1, 0.25), dtypes.float32),
    ((4,), {"dtype": dtypes.float16}, np.arange(4), dtypes.float16),
    ((3, 3), {}, np.arange(0), dtypes.int32),
])
def test_arange(args, kwargs, ref, dtype):
  t = Tensor.arange(*args, **kwargs)
  assert t.dtype == dtype
  close(t, ref)


def test_linspace_and_eye():
  close(Tensor.linspace(-1, 2, 7), np.linspace(-1, 2, 7), atol=1e-6)
  assert Tensor.linspace(0, 1, 3).dtype == dtypes.float32
  np.testing.assert_array_equal(Tensor.eye(3).numpy(), np.eye(3))
  np.testing.assert_array_equal(Tensor.eye(2, 4, dtype=dtypes.int32).numpy(), np.eye(2, 4, dtype=np.int32))


def test_random_creation_is_seeded_and_in_range():
  Tensor.manual_seed(42)
  a = Tensor.rand(1000).numpy()
  Tensor.manual_seed(42)
  b = Tensor.rand(1000).numpy()
  np.testing.assert_array_equal(a, b)
  assert a.dtype == np.float32 and 0 <= a.min() and a.max() < 1 and 0.45 < a.mean() < 0.55
  n = Tensor.randn(50, 40).numpy()
  assert n.shape == (50, 40) and abs(n.mean()) < 0.1 and 0.9 < n.std() < 1.1
  u = Tensor.uniform(2000, low=-3, high=-1).numpy()
  assert -3 <= u.min() and u.max() < -1
  r = Tensor.randint(500, low=2, high=5)
  assert r.dtype == dtypes.int32 and set(r.numpy().tolist()) == {2, 3, 4}
  p = Tensor.randperm(10).numpy()
  assert sorted(p.tolist()) == list(range(10))
  assert Tensor.rand(2, 3, dtype=dtypes.float16).dtype == dtypes.float16


# ---------------------------------------------------------------- autograd

def test_requires_grad_flags():
  assert not Tensor([1.0]).requires_grad
  t = Tensor([1.0])
  t.requires_grad = True
  assert t.requires_grad is True
  assert t.requires_grad_(False) is t and t.requires_grad is False
  assert t.grad is None


def test_backward_matches_analytic_gradients():
  x64, y64 = rand(2, 3).astype(np.float64), rand(3).astype(np.float64)
  x = Tensor(x64.astype(np.float32), requires_grad=True)
  y = Tensor(y64.astype(np.float32), requires_grad=True)
  loss = (x * y + x.exp() - (x / (y * y + 1))).sum()
  out = loss.backward()
  assert out is loss
  close(loss, (x64 * y64 + np.exp(x64) - x64 / (y64 * y64 + 1)).sum(), rtol=1e-5)
  close(x.grad, y64 + np.exp(x64) - 1 / (y64 * y64 + 1), rtol=1e-5, atol=1e-5)
  # y broadcasts over x's rows: its gradient is summed back to shape (3,)
  close(y.grad, (x64 + x64 * 2 * y64 / (y64 * y64 + 1) ** 2).sum(axis=0), rtol=1e-5, atol=1e-5)
  assert x.grad.shape == (2, 3) and y.grad.shape == (3,)


def test_matmul_and_relu_gradients():
  a64, w64 = rand(4, 3).astype(np.float64), rand(3, 2).astype(np.float64)
  a, w = Tensor(a64.astype(np.float32), requires_grad=True), Tensor(w64.astype(np.float32), requires_grad=True)
  (a @ w).relu().mean().backward()
  mask = (a64 @ w64 > 0) / 8.0
  close(w.grad, a64.T @ mask, atol=1e-6)
  close(a.grad, mask @ w64.T, atol=1e-6)


def test_gradients_accumulate_and_can_be_reset():
  x = Tensor([1.0, 2.0], requires_grad=True)
  (x * 3).sum().backward()
  (x * x).sum().backward()
  close(x.grad, np.array([3.0, 3.0]) + 2 * np.array([1.0, 2.0]))
  x.grad = None
  (x * 5).sum().backward()
  close(x.grad, [5.0, 5.0])


def test_backward_fills_every_live_tensor_the_loss_uses():
  # tinygrad's test_set_overlapping_backward: results of ops get a grad too (tinygrad's rule)
  z, x, y = Tensor.zeros(6), Tensor.ones(4).contiguous(), Tensor.ones(4) * 2
  z[:4] = x
  z[2:] = y
  (z * Tensor([1.0, 2, 3, 4, 5, 6])).sum().backward()
  np.testing.assert_array_equal(x.grad.numpy(), [1, 2, 0, 0])  # 2, 3 written over by y
  np.testing.assert_array_equal(y.grad.numpy(), [3, 4, 5, 6])
  frozen = Tensor([1.0, 2.0], requires_grad=False)
  (frozen * 3).sum().backward()
  assert frozen.grad is None


def test_backward_with_explicit_gradient():
  x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
  (x * x).backward(Tensor([1.0, 0.5, -1.0]))
  close(x.grad, np.array([2.0, 2.0, -6.0]))


def test_gradient_returns_gradients_without_touching_grad():
  x = Tensor([0.5, -1.0], requires_grad=True)
  y = Tensor([2.0, 3.0], requires_grad=True)
  gx, gy = (x * y + x.sin()).sum().gradient(x, y)
  close(gx, np.array([2.0, 3.0]) + np.cos([0.5, -1.0]), atol=1e-6)
  close(gy, [0.5, -1.0])
  assert x.grad is None and y.grad is None


def test_detach_stops_gradients():
  x = Tensor([2.0, 3.0], requires_grad=True)
  (x * x.detach()).sum().backward()
  close(x.grad, [2.0, 3.0])


# ---- numpy without copies where the layout allows (CPU buffers) ----

def test_asarray_and_data_view_the_buffer_without_copying():
  t = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4)) * 2
  a, b = np.asarray(t), np.asarray(t)
  assert np.shares_memory(a, b)  # both view the realized buffer
  assert not a.flags.writeable  # tinycore's memory is not written through numpy
  np.testing.assert_array_equal(a, np.arange(12).reshape(3, 4) * 2)
  mv = t.data()
  assert mv.shape == (3, 4) and mv.format == "f" and mv.readonly
  assert np.shares_memory(np.asarray(mv), a)
  c = t.numpy()  # numpy() is a copy the caller owns
  assert c.flags.writeable and not np.shares_memory(c, a)
  c[0, 0] = 100
  assert t[0, 0].item() == 0.0


def test_a_view_keeps_its_buffer_alive():
  t = Tensor(np.full(1000, 3, dtype=np.int32)) + 1
  a = np.asarray(t)
  del t
  import gc
  gc.collect()
  Tensor.zeros(1000, dtype=dtypes.int32).contiguous().realize()  # reuses freed memory, if any
  assert a.sum() == 4000


def test_asarray_of_bfloat16_is_a_float32_copy():
  t = Tensor([1.5, -2.0], dtype=dtypes.bfloat16)
  a = np.asarray(t)
  assert a.dtype == np.float32 and a.tolist() == [1.5, -2.0]


@pytest.mark.skipif("CL" not in Device.available(), reason="no CL device (PoCL not installed)")
def test_tensors_on_the_cl_device_compute_there_and_copy_back():
  a = Tensor([1.5, -2.0, 3.25], device="CL")
  assert a.device == "CL"
  b = (a * 2 + 1).to("CPU")
  assert b.device == "CPU"
  np.testing.assert_array_equal(b.numpy(), np.array([4.0, -3.0, 7.5], dtype=np.float32))
  np.testing.assert_array_equal(a.sum().numpy(), np.float32(2.75))
  with pytest.raises(RuntimeError, match="different devices"):
    (a + Tensor([1.0, 1.0, 1.0], device="CPU")).realize()


def test_shard_over_virtual_cpus_as_tinygrad():
    # tinygrad's multi-device forms: shard (split along an axis), to(tuple) (a copy on each)
    devs = ("CPU:0", "CPU:1")
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    w = np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)
    x = Tensor(a).shard(devs, axis=0)
    assert x.device == devs and x.shape == (4, 3)
    y = x @ Tensor(w).to(devs)
    np.testing.assert_allclose(y.numpy(), a @ w, rtol=1e-6)
    np.testing.assert_allclose(x.sum(0).numpy(), a.sum(0), rtol=1e-6)
    t = Tensor(a)
    assert t.shard_(devs, axis=1) is t and t.device == devs
    np.testing.assert_allclose((t * 2).numpy(), a * 2)
    # the split axis (tinygrad's uop.axis): of a computed value too; none when replicated
    assert x.shard_axis == 0 and (t * 2).sum(0).shard_axis == 0
    assert Tensor(a).to(devs).shard_axis is None and Tensor(a).shard_axis is None
    with pytest.raises(RuntimeError, match="split axis cannot be padded"):
        x.pad(((1, 0), (0, 0))).realize()


@pytest.mark.skipif("CL" not in Device.available(), reason="no CL device (PoCL not installed)")
def test_shard_over_the_cpu_and_cl_copies_between_them():
    devs = ("CPU", "CL")
    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    w = np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)
    x = Tensor(a).shard(devs, axis=0)
    assert x.device == devs
    y = x @ Tensor(w).to(devs)
    np.testing.assert_allclose(y.numpy(), a @ w, rtol=1e-6)
    np.testing.assert_allclose(x.sum(0).to("CL").numpy(), a.sum(0), rtol=1e-6)
    assert x.sum(0).to("CL").device == "CL"
