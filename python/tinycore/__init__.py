"""tinycore from Python, with tinygrad's API: Tensor, dtypes, Device, TinyJit, Variable, nn."""
from tinycore._C import Tensor, DType, Variable, dtypes  # noqa: F401
from tinycore import tensor as _tensor  # noqa: F401  (adds the Python forms of Tensor's methods)
from tinycore import dynamic as _dynamic
_dynamic.install()  # after every method is defined: guards them for dynamic dimensions
from tinycore.helpers import Context, GlobalCounters, getenv, Device  # noqa: F401
from tinycore.jit import TinyJit  # noqa: F401
from tinycore import nn  # noqa: F401

__all__ = ["Tensor", "DType", "dtypes", "Device", "TinyJit", "Variable", "Context", "GlobalCounters", "getenv", "nn"]
