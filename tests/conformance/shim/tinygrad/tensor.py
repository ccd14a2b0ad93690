"""tinygrad.tensor: the Tensor and the numpy dtype helper the tests import."""
from tinycore import Tensor  # noqa: F401
from tinycore._C import _to_np_dtype, _from_np_dtype  # noqa: F401
