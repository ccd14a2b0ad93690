"""Mistakes from Python raise tinygrad's exception types, with messages that name the operation and
the shapes or values that were wrong; nothing crashes the interpreter."""
import re

import numpy as np
import pytest

from tinycore import Tensor, dtypes


def raises(exc, fn, *fragments):
  """fn() raises exactly `exc` (not a subclass of it standing in), and the message holds every
  fragment."""
  with pytest.raises(Exception) as info:
    fn()
  assert type(info.value) is exc, f"raised {type(info.value).__name__}: {info.value}"
  msg = str(info.value)
  for f in fragments:
    assert f in msg, f"{f!r} not in {msg!r}"
  return msg


A = Tensor.ones(2, 3)


# ---------------------------------------------------------------- shapes

@pytest.mark.parametrize("name,fn,exc,fragments", [
    ("add", lambda: A + Tensor.ones(4), RuntimeError, ["add", "(2, 3)", "(4,)"]),
    ("mul", lambda: A * Tensor.ones(3, 3), RuntimeError, ["mul", "(2, 3)", "(3, 3)"]),
    ("sub", lambda: A - Tensor.ones(2, 2), RuntimeError, ["sub", "(2, 3)", "(2, 2)"]),
    ("lt", lambda: A < Tensor.ones(5), RuntimeError, ["lt", "(2, 3)", "(5,)"]),
    ("where", lambda: (A > 0).where(A, Tensor.ones(4)), RuntimeError, ["where", "(2, 3)", "(4,)"]),
    ("iadd", lambda: A.__iadd__(Tensor.ones(3, 3)), RuntimeError, ["add", "(2, 3)", "(3, 3)"]),
    ("reshape", lambda: A.reshape(4, 4), ValueError, ["reshape", "(2, 3)", "(4, 4)"]),
    ("reshape two -1", lambda: A.reshape(-1, -1), RuntimeError, ["reshape", "-1"]),
    ("expand", lambda: A.expand(3, 3), RuntimeError, ["expand", "(2, 3)", "(3, 3)"]),
    ("permute repeated", lambda: A.permute(0, 0), RuntimeError, ["permute", "(2, 3)"]),
    ("permute length", lambda: A.permute(0), RuntimeError, ["permute", "(2, 3)"]),
    ("matmul", lambda: A @ Tensor.ones(2, 3), RuntimeError, ["dot", "(2, 3)"]),
    ("matmul 1-D", lambda: Tensor.ones(3) @ Tensor.ones(4), RuntimeError, ["dot", "(3,)", "(4,)"]),
    ("matmul 0-D", lambda: Tensor(1.0) @ Tensor(2.0), RuntimeError, ["dot", "1-D"]),
    ("cat", lambda: A.cat(Tensor.ones(2, 4)), RuntimeError, ["cat", "(2, 3)", "(2, 4)"]),
    ("cat 0-D", lambda: Tensor(1).cat(Tensor(2)), IndexError, ["cat", "zero-dimensional"]),
    ("stack", lambda: Tensor.stack(A, Tensor.ones(3, 2)), RuntimeError, ["stack", "(2, 3)", "(3, 2)"]),
    ("split", lambda: A.split([1, 1], dim=1), RuntimeError, ["split", "(2, 3)"]),
    ("pad", lambda: A.pad(((0, 0), (-5, 0))), RuntimeError, ["pad", "(2, 3)"]),
    ("gather", lambda: A.gather(0, Tensor([[[0]]])), RuntimeError, ["gather", "(1, 1, 1)", "(2, 3)"]),
    ("assign", lambda: Tensor([1.0, 2.0]).assign(Tensor([1.0, 2.0, 3.0])), RuntimeError, ["assign", "(3,)", "(2,)"]),
    ("setitem", lambda: A.__setitem__(0, Tensor.ones(5)), RuntimeError, ["setitem", "(5,)", "(3,)"]),
    ("conv2d", lambda: Tensor.ones(1, 1, 4, 4).conv2d(Tensor.ones(1, 2, 3, 3)), RuntimeError, ["conv2d", "(1, 1, 4, 4)", "(1, 2, 3, 3)"]),
    ("einsum", lambda: Tensor.einsum("ij,jk->ik", A, A), RuntimeError, ["einsum", "(2, 3)"]),
    ("backward non-scalar", lambda: (Tensor.ones(2, requires_grad=True) * 2).backward(), RuntimeError, ["backward", "scalar", "(2,)"]),
    ("gradient non-scalar", lambda: (Tensor.ones(2, requires_grad=True) * 2).gradient(Tensor.ones(2)), RuntimeError, ["gradient", "(2,)"]),
    ("index broadcast", lambda: A[Tensor([0, 1]), Tensor([0, 1, 2])], IndexError, ["getitem", "(2,)", "(3,)"]),
])
def test_shape_mistakes(name, fn, exc, fragments):
  # tinygrad's types: RuntimeError, except a reshape's size (ValueError) and bad indices
  raises(exc, fn, *fragments)


def test_batched_matmul_error_names_the_operands():
  raises(RuntimeError, lambda: Tensor.ones(2, 3, 4) @ Tensor.ones(3, 4, 5), "(2, 3, 4)", "(3, 4, 5)")


@pytest.mark.parametrize("name,fn,fragments", [
    ("sum axis", lambda: A.sum(axis=2), ["sum", "dim 2", "[-2, 1]", "(2, 3)"]),
    ("transpose", lambda: A.transpose(0, 3), ["transpose", "3", "(2, 3)"]),
    ("flip", lambda: A.flip(3), ["flip", "3", "(2, 3)"]),
    ("cat dim", lambda: A.cat(A, dim=5), ["cat", "5", "(2, 3)"]),
    ("unsqueeze", lambda: A.unsqueeze(5), ["unsqueeze", "5", "(2, 3)"]),
    ("softmax", lambda: A.softmax(5), ["softmax", "5", "(2, 3)"]),
    ("shrink", lambda: A.shrink(((0, 5), None)), ["shrink", "(0, 5)", "(2, 3)"]),
])
def test_axis_out_of_range_is_index_error(name, fn, fragments):
  raises(IndexError, fn, *fragments)


@pytest.mark.parametrize("name,fn,exc,fragments", [
    ("zeros negative", lambda: Tensor.zeros(-1, 2), ValueError, ["full", "(-1, 2)"]),
    ("rand negative", lambda: Tensor.rand(-3), ValueError, ["rand", "(-3,)"]),
    ("eye negative", lambda: Tensor.eye(-1), ValueError, ["eye", "-1"]),
    ("arange step 0", lambda: Tensor.arange(0, 5, 0), RuntimeError, ["arange", "step"]),
    ("randint low >= high", lambda: Tensor.randint(3, low=5, high=2), ValueError, ["randint", "low=5", "high=2"]),
    ("uniform low >= high", lambda: Tensor.uniform(3, low=2, high=1), ValueError, ["uniform", "low=2"]),
    ("normal std < 0", lambda: Tensor.normal(3, std=-1), ValueError, ["normal", "std=-1"]),
    ("dropout p", lambda: Tensor.ones(3).dropout(1.5), ValueError, ["dropout", "1.5"]),
    ("chunk 0", lambda: A.chunk(0), RuntimeError, ["chunk", "0"]),
    ("split 0", lambda: A.split(0), RuntimeError, ["split", "0"]),
    ("unknown keyword", lambda: Tensor.randn(3, foo=1), TypeError, ["randn", "foo"]),
    ("pad mode", lambda: A.pad(((0, 0), (1, 0)), mode="bogus"), NotImplementedError, ["pad", "bogus"]),
    ("pad pairs", lambda: A.pad(((1, 1),)), ValueError, ["pad", "(2, 3)"]),
    ("pad flat odd", lambda: A.pad((1,)), ValueError, ["pad", "[1]"]),
    ("div rounding mode", lambda: A.div(A, rounding_mode="bogus"), RuntimeError, ["div", "bogus"]),
    ("item of many", lambda: A.item(), ValueError, ["item", "(2, 3)"]),
    ("item of none", lambda: Tensor.ones(0).item(), ValueError, ["item", "(0,)"]),
    ("len of 0-d", lambda: len(Tensor(1)), TypeError, ["len", "0-d"]),
    ("bool", lambda: bool(A), TypeError, ["__bool__"]),
    ("device", lambda: Tensor([1], device="NOPE"), RuntimeError, ["NOPE", "CPU"]),
    ("to device", lambda: A.to("NOPE"), RuntimeError, ["NOPE"]),
])
def test_bad_arguments(name, fn, exc, fragments):
  raises(exc, fn, *fragments)


# ---------------------------------------------------------------- dtypes

@pytest.mark.parametrize("name,fn,exc,fragments", [
    ("invert float", lambda: ~A, RuntimeError, ["bitwise_not", "float"]),
    ("lshift float", lambda: A << 1, RuntimeError, ["lshift", "float"]),
    ("idiv float", lambda: A.idiv(A), RuntimeError, ["idiv", "float"]),
    ("mod bool", lambda: Tensor([True]) % Tensor([True]), RuntimeError, ["mod", "bool"]),
    ("int ** negative int", lambda: Tensor([2]) ** -1, RuntimeError, ["pow", "-1", "int"]),
    ("one_hot float", lambda: A.one_hot(3), RuntimeError, ["one_hot", "float"]),
    ("gather float index", lambda: A.gather(0, Tensor([[0.0]])), RuntimeError, ["gather", "float"]),
    ("float index tensor", lambda: A[Tensor([0.5])], IndexError, ["getitem", "float"]),
    ("masked_select float mask", lambda: A.masked_select(Tensor.ones(2, 3)), RuntimeError, ["masked_select", "bool"]),
    ("setitem dtype", lambda: Tensor([1, 2, 3]).__setitem__(0, Tensor(1.5)), RuntimeError, ["setitem", "float", "int"]),
    ("rand int dtype", lambda: Tensor.rand(3, dtype=dtypes.int32), ValueError, ["rand", "int"]),
    ("randint float dtype", lambda: Tensor.randint(3, dtype=dtypes.float32), TypeError, ["randint", "float"]),
    ("bitcast size", lambda: Tensor.ones(3).bitcast(dtypes.float64), RuntimeError, ["bitcast", "(3,)", "double"]),
    ("gradient of int", lambda: Tensor([1, 2]).sum().backward(), RuntimeError, ["backward", "float", "int"]),
    ("unknown dtype name", lambda: Tensor([1], dtype="float33"), AttributeError, ["float33"]),
    ("cast to unknown name", lambda: A.cast("nope"), AttributeError, ["nope"]),
    ("dtype not a dtype", lambda: Tensor([1], dtype=5), TypeError, ["dtype", "5"]),
])
def test_dtype_mistakes(name, fn, exc, fragments):
  raises(exc, fn, *fragments)


@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_ops_on_floats_raise(op):
  raises(RuntimeError, lambda: getattr(A, op)(A), op, "float")


# ---------------------------------------------------------------- indices

@pytest.mark.parametrize("name,fn,exc,fragments", [
    ("int too big", lambda: A[5], IndexError, ["getitem", "5", "(2, 3)"]),
    ("int too negative", lambda: A[-3], IndexError, ["getitem", "-3", "(2, 3)"]),
    ("second axis", lambda: A[0, 3], IndexError, ["getitem", "3", "(2, 3)"]),
    ("too many", lambda: A[0, 0, 0], IndexError, ["too many indices", "(2, 3)"]),
    ("float", lambda: A[1.5], IndexError, ["1.5"]),
    ("string", lambda: A["x"], IndexError, ["'x'"]),
    ("bool", lambda: A[True], IndexError, ["bool"]),
    ("slice of floats", lambda: A[0.5:1], TypeError, ["slice"]),
    ("two ellipses", lambda: A[..., ...], IndexError, ["getitem", "ellipsis"]),
    ("setitem out of range", lambda: A.__setitem__(5, 1.0), IndexError, ["setitem", "5", "(2, 3)"]),
    ("delete", lambda: A.__delitem__(0), TypeError, ["deleting"]),
])
def test_bad_indices(name, fn, exc, fragments):
  raises(exc, fn, *fragments)


def test_del_statement():
  t = Tensor([1, 2])
  with pytest.raises(TypeError):
    del t[0]


# ---------------------------------------------------------------- constructor data

@pytest.mark.parametrize("name,data,exc,fragments", [
    ("ragged", [[1, 2], [3]], ValueError, ["Tensor", "rectangular"]),
    ("ragged deep", [[[1, 2]], [[3]]], ValueError, ["Tensor", "rectangular"]),
    ("strings", ["a", "b"], ValueError, ["Tensor"]),
    ("None inside", [1, None], ValueError, ["Tensor"]),
    ("too big for 64 bits", 2**70, ValueError, [str(2**70)]),
    ("object", object(), TypeError, ["Tensor", "object"]),
    ("dict", {"a": 1}, TypeError, ["Tensor", "dict"]),
    ("set", {1, 2}, TypeError, ["Tensor", "set"]),
    ("str", "abc", TypeError, ["Tensor", "str"]),
    ("numpy object array", np.array([1, None], dtype=object), TypeError, ["object"]),
    ("numpy strings", np.array(["a"]), TypeError, ["str"]),
    ("numpy complex", np.array([1j]), TypeError, ["complex128"]),
])
def test_bad_constructor_data(name, data, exc, fragments):
  raises(exc, lambda: Tensor(data), *fragments)


def test_operand_of_the_wrong_type():
  for other, typ in (("x", "str"), (None, "NoneType"), ([1, 2, 3], "list")):
    raises(TypeError, lambda: A + other, "add", typ)
  raises(TypeError, lambda: A * object(), "mul", "object")


def test_errors_leave_the_tensor_usable():
  t = Tensor([1.0, 2.0])
  with pytest.raises(RuntimeError):
    t.assign(Tensor([1.0, 2.0, 3.0]))
  with pytest.raises(IndexError):
    t[7] = 1.0
  assert t.tolist() == [1.0, 2.0]
  t += 1
  assert t.tolist() == [2.0, 3.0]


def test_messages_are_one_line_without_internal_markers():
  msg = raises(RuntimeError, lambda: A + Tensor.ones(4))
  assert "\n" not in msg and not re.search(r"\.cc:\d+", msg)
