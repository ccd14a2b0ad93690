"""tinygrad.engine.jit: TinyJit and the error it raises for a step it cannot replay."""
from tinycore.jit import TinyJit, JitError  # noqa: F401
