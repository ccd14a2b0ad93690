"""Environment knobs (getenv, Context), Device and GlobalCounters, as in tinygrad.helpers."""
import contextlib
import os

from tinycore import _C


def getenv(key: str, default=0):
  """An environment variable converted to the type of `default` (tinygrad's getenv)."""
  return type(default)(os.environ.get(key, default))


class Context(contextlib.ContextDecorator):
  """Sets env knobs (DEBUG=2, BEAM=1, JIT=0, NOOPT=1 ...) for a `with` block; tinycore reads
  them when it uses them, so a Context applies to everything realized inside it."""

  def __init__(self, **kwargs):
    self.kwargs = kwargs

  def __enter__(self):
    self.old = {k: os.environ.get(k) for k in self.kwargs}
    for k, v in self.kwargs.items():
      os.environ[k] = str(int(v) if isinstance(v, bool) else v)
    return self

  def __exit__(self, *exc):
    for k, v in self.old.items():
      if v is None: os.environ.pop(k, None)
      else: os.environ[k] = v
    return False


class _Renderer:
  """What a device's code generator supports (tinygrad's Device[d].renderer)."""

  def __init__(self, device: str):
    self.device = device

  def supported_dtypes(self):
    return list(_C.dtypes.all)


class _DeviceInfo:
  def __init__(self, name: str):
    self.name = name
    self.renderer = _Renderer(name)
    self.graph = None  # no graph executor: TinyJit replays its launches itself


class _DeviceMeta(type):
  @property
  def DEFAULT(cls) -> str:
    return _C.default_device()

  def __getitem__(cls, name: str) -> _DeviceInfo:
    name = Device.canonicalize(name)
    if name not in _C.available_devices():
      raise KeyError(f"device {name} is not available (available: {', '.join(_C.available_devices())})")
    return _DeviceInfo(name)


class Device(metaclass=_DeviceMeta):
  """Device.DEFAULT: the device tensors are made on (DEVICE= env, else the fastest available)."""

  @staticmethod
  def canonicalize(device) -> str:
    if device is None: return _C.default_device()
    return str(device).split(":")[0].upper()

  @staticmethod
  def available():
    return list(_C.available_devices())


class _CountersMeta(type):
  kernel_count = property(lambda cls: _C._counters.kernel_count())
  global_ops = property(lambda cls: _C._counters.global_ops())
  global_mem = property(lambda cls: _C._counters.global_mem())
  time_sum_s = property(lambda cls: _C._counters.time_sum_s())


class GlobalCounters(metaclass=_CountersMeta):
  """Totals since the last reset(): kernel_count, global_ops, global_mem, time_sum_s."""

  @staticmethod
  def reset():
    _C._counters.reset()
