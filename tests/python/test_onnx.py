"""tinycore.onnx.OnnxRunner, tinygrad's form: models PyTorch exported (tests/fixtures/onnx, made by
tests/fixtures/gen_onnx_models.py) loaded from a path, from bytes and from a ModelProto-like
object, run on the fixture's inputs and compared with PyTorch's outputs; bad input is an error
naming what is wrong."""
import os
import pathlib

import numpy as np
import pytest

from tinycore import Tensor, dtypes
from tinycore.onnx import OnnxRunner

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


def read_fixture(path):
  """The cases of a tests/fixtures/*.fixture file (format: tests/fixtures/torch_fixture.py) as
  {case: {label: numpy array}}."""
  cases, case = {}, None
  lines = path.read_text().split("\n")
  for i, line in enumerate(lines):
    if line.startswith("case "):
      case = cases.setdefault(line[5:], {})
    elif line.startswith("tensor "):
      _, label, dtype, _, *dims = line.split()
      parse = float if dtype.startswith("float") else int
      values = [parse(v) for v in lines[i + 1].split()]
      case[label] = np.array(values, dtype=dtype).reshape([int(d) for d in dims])
  return cases


CASES = read_fixture(FIXTURES / "onnx_models.fixture")


def model_path(case):
  name = "text_classifier" if case.startswith("text_classifier") else case
  return FIXTURES / "onnx" / (name + ".onnx")


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_pytorch(case):
  c = CASES[case]
  run = OnnxRunner(model_path(case))
  name = "tokens" if "tokens" in c else "x"
  assert run.input_names == [name] and run.output_names == ["out"]
  outs = run({name: Tensor(c[name])})
  assert list(outs) == ["out"] and isinstance(outs["out"], Tensor)
  got = outs["out"].numpy()
  assert got.shape == c["out"].shape
  np.testing.assert_allclose(got, c["out"], rtol=1e-4, atol=1e-4)


def test_tokens_are_int64_with_dynamic_axes():
  run = OnnxRunner(str(model_path("text_classifier")))
  for case in ("text_classifier_2x7", "text_classifier_3x4"):
    tokens = Tensor(CASES[case]["tokens"])
    assert tokens.dtype == dtypes.int64
    np.testing.assert_allclose(run({"tokens": tokens})["out"].numpy(), CASES[case]["out"], rtol=1e-4, atol=1e-4)


class _ModelProto:
  """Stands in for onnx.ModelProto (the onnx package is not a test dependency)."""

  def __init__(self, data):
    self.data = data

  def SerializeToString(self):
    return self.data


def test_bytes_and_model_objects():
  data = model_path("transformer").read_bytes()
  c = CASES["transformer"]
  for source in (data, bytearray(data), _ModelProto(data), os.fspath(model_path("transformer"))):
    out = OnnxRunner(source)({"x": Tensor(c["x"])})["out"].numpy()
    np.testing.assert_allclose(out, c["out"], rtol=1e-4, atol=1e-4)


def test_numpy_inputs_are_taken_as_tensors():
  c = CASES["transformer"]
  out = OnnxRunner(model_path("transformer"))({"x": c["x"]})["out"].numpy()
  np.testing.assert_allclose(out, c["out"], rtol=1e-4, atol=1e-4)


def test_missing_input_names_it():
  run = OnnxRunner(model_path("transformer"))
  with pytest.raises(RuntimeError, match="input 'x' is not given"):
    run({})
  with pytest.raises(RuntimeError, match="has no input 'y'"):
    run({"x": Tensor(CASES["transformer"]["x"]), "y": Tensor([1.0])})


def test_bad_models_name_what_is_wrong():
  with pytest.raises(FileNotFoundError, match="no_such_model.onnx"):
    OnnxRunner("/nonexistent/no_such_model.onnx")
  with pytest.raises(ValueError, match="not a valid ONNX model"):
    OnnxRunner(model_path("transformer").read_bytes()[:1000])
  with pytest.raises(TypeError, match="a path, bytes or an onnx.ModelProto, not int"):
    OnnxRunner(3)
  with pytest.raises(TypeError, match="must be a dict"):
    OnnxRunner(model_path("transformer"))([Tensor([1.0])])
