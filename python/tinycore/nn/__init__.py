"""tinycore.nn: layers (filled in by the native module), optim and state."""
from tinycore.nn import optim, state  # noqa: F401
