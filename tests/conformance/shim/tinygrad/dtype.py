"""tinygrad.dtype."""
from tinycore import dtypes, DType  # noqa: F401
from tinycore._C import _to_np_dtype, _from_np_dtype  # noqa: F401
