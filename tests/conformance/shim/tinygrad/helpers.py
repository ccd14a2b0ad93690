"""tinygrad.helpers as the tests use it: env knobs, and DEV (the device's interface and renderer)."""
from types import SimpleNamespace

from tinycore.helpers import Context, getenv  # noqa: F401
from tinycore import Device

DEBUG = getenv("DEBUG", 0)
IMAGE = getenv("IMAGE", 0)
CI = getenv("CI", "") != ""
JIT = getenv("JIT", 1)
DEV = SimpleNamespace(device=Device.DEFAULT, interface="", renderer="LLVM")
