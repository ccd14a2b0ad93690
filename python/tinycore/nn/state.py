"""State dicts and safetensors files with tinygrad's API (tinygrad.nn.state): get_state_dict and
get_parameters walk a model's attributes, lists and dicts into dotted names ("layers.0.weight");
load_state_dict, safe_save and safe_load are nn/state.h's."""
import os
from collections import OrderedDict

from tinycore import _C
from tinycore._C import Tensor
from tinycore.nn import optim

_native = _C.nn


def get_state_dict(obj, prefix: str = "", tensor_type=Tensor) -> dict:
  """Every tensor reachable from `obj` by its dotted name: attributes of objects, list and tuple
  items by index, dict entries by key; a layer contributes its own names (its parameters and
  buffers, such as "running_mean"), an optimizer its params, buffers and state."""
  if isinstance(obj, tensor_type): return {prefix.strip("."): obj}
  if isinstance(obj, _native.Module):
    out = {}
    for name, t, trainable in obj._named_tensors():
      if not trainable: t._nn_buffer = True  # the optimizers realize it but do not train it
      out[prefix + name] = t
    out.update(get_state_dict(obj.__dict__, prefix, tensor_type))  # attributes set from Python
    return out
  if isinstance(obj, optim.Optimizer):
    out = get_state_dict({"params": obj.params, "buffers": obj.buffers}, prefix, tensor_type)
    out.update({prefix + k: v for k, v in obj.state_dict().items()})
    return out
  if hasattr(obj, "_asdict"): return get_state_dict(obj._asdict(), prefix, tensor_type)  # namedtuple
  if isinstance(obj, OrderedDict): return get_state_dict(dict(obj), prefix, tensor_type)
  if hasattr(obj, "__dict__"): return get_state_dict(obj.__dict__, prefix, tensor_type)
  state_dict = {}
  if isinstance(obj, (list, tuple)):
    for i, x in enumerate(obj): state_dict.update(get_state_dict(x, f"{prefix}{i}.", tensor_type))
  elif isinstance(obj, dict):
    for k, v in obj.items(): state_dict.update(get_state_dict(v, f"{prefix}{k}.", tensor_type))
  return state_dict


def get_parameters(obj) -> list:
  """The tensors of get_state_dict(obj), for an optimizer (which trains the parameters and
  realizes the buffers with each step)."""
  return list(get_state_dict(obj).values())


def load_state_dict(model, state_dict: dict, strict: bool = True, verbose: bool = True, consume: bool = False,
                    realize: bool = True) -> list:
  """Assigns state_dict's tensors into the model's tensors of the same name (and realizes them);
  returns the tensors loaded. strict: a name missing from either side or a shape or dtype that
  differs is an error naming them all, and nothing is loaded; otherwise those are skipped (and
  listed when verbose). realize is always done (the values are copied in)."""
  del realize  # loading always realizes: the file's buffers are not kept
  model_state = get_state_dict(model)
  missing, unexpected, mismatched = _native.load_state_dict(model_state, dict(state_dict), strict)
  if verbose and (missing or unexpected or mismatched):
    print(f"load_state_dict: not loaded: missing {missing}, unexpected {unexpected}, mismatched {mismatched}")
  skipped = set(missing) | {m.split(":")[0] for m in mismatched}
  loaded = [k for k in model_state if k not in skipped]
  if consume:
    for k in loaded: state_dict.pop(k, None)
  return [model_state[k] for k in loaded]


def _path(fn) -> str:
  if isinstance(fn, Tensor): raise TypeError("safetensors from a Tensor are not supported; pass a file path")
  return os.fspath(fn)


def safe_save(tensors: dict, fn, metadata: dict | None = None):
  """Writes tensors (name -> Tensor) to a .safetensors file, replacing it atomically; metadata
  (str -> str) goes in the header's "__metadata__"."""
  metadata = dict(metadata or {})
  for k, v in metadata.items():
    if not isinstance(k, str) or not isinstance(v, str):
      raise TypeError(f"safe_save: safetensors metadata maps str to str, got {k!r}: {v!r}")
  _native.safe_save(dict(tensors), _path(fn), metadata)


def safe_load(fn) -> dict:
  """The tensors of a .safetensors file by name, on the default device. A truncated or corrupt
  file is an error saying what is wrong."""
  return _native.safe_load(_path(fn))


def safe_load_metadata(fn):
  """(the file as a uint8 Tensor, where its data starts, its JSON header as a dict), as tinygrad's."""
  path = _path(fn)
  with open(path, "rb") as f: data = f.read()
  data_start, header = _native.safetensors_header(data, path)
  return Tensor(data), data_start, header
