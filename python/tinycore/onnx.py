"""tinygrad's OnnxRunner: an ONNX model as a lazy Tensor graph (frontends/onnx).

    from tinycore.onnx import OnnxRunner
    run = OnnxRunner("model.onnx")        # a path, the model's bytes, or an onnx.ModelProto
    outs = run({"x": Tensor(...)})        # {output name: Tensor}, realized when read

Every node's operator is checked when the model is loaded: an unsupported one raises, naming the
node, its op type and opset. A missing or unknown input name raises RuntimeError naming it.
"""
import os

from tinycore._C import Tensor, _OnnxRunner


class OnnxRunner:

  def __init__(self, model):
    if isinstance(model, (str, os.PathLike)):
      self._runner = _OnnxRunner(os.fspath(model))
    elif isinstance(model, (bytes, bytearray, memoryview)):
      self._runner = _OnnxRunner(bytes(model))
    elif hasattr(model, "SerializeToString"):  # onnx.ModelProto, without importing onnx
      self._runner = _OnnxRunner(model.SerializeToString())
    else:
      raise TypeError(f"OnnxRunner: expected a path, bytes or an onnx.ModelProto, not {type(model).__name__}")

  @property
  def input_names(self) -> list:
    return self._runner.input_names

  @property
  def output_names(self) -> list:
    return self._runner.output_names

  def __call__(self, inputs: dict, debug=False) -> dict[str, Tensor]:
    if not isinstance(inputs, dict):
      raise TypeError(f"OnnxRunner: inputs must be a dict of name to Tensor, not {type(inputs).__name__}")
    return self._runner(inputs)
