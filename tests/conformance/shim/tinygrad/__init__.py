"""The conformance shim: `import tinygrad` resolves to tinycore (nothing else lives here but
the few module paths tinygrad's tests import from)."""
from tinycore import *  # noqa: F401,F403
from tinycore import Tensor, Device, dtypes, TinyJit, Variable, Context, GlobalCounters, nn  # noqa: F401
