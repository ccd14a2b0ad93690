"""tinycore.nn with tinygrad's layout: the layers (the C++ ones of nn/, bound in tinycore._C.nn),
nn.optim and nn.state. A layer is called on a Tensor; its tensors are attributes that read the
layer's own handles (so they can be assigned into or replaced), and nn.state walks a model of
plain Python objects holding layers, lists and dicts into tinygrad's dotted names."""
from tinycore._C import nn as _native
from tinycore.nn import optim, state  # noqa: F401

Module = _native.Module
Linear = _native.Linear
Conv2d = _native.Conv2d
ConvTranspose2d = _native.ConvTranspose2d
BatchNorm = BatchNorm1d = BatchNorm2d = BatchNorm3d = _native.BatchNorm
LayerNorm = _native.LayerNorm
RMSNorm = _native.RMSNorm
GroupNorm = _native.GroupNorm
InstanceNorm = _native.InstanceNorm
Embedding = _native.Embedding
Dropout = _native.Dropout
LSTMCell = _native.LSTMCell
MultiHeadAttention = _native.MultiHeadAttention


def Conv1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True):
  """A Conv2d with a one-entry kernel: input (N, C, L), weight (out, in / groups, kernel_size)."""
  return Conv2d(in_channels, out_channels, (kernel_size,), stride, padding, dilation, groups, bias)


def ConvTranspose1d(in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, dilation=1,
                    groups=1, bias=True):
  """A ConvTranspose2d with a one-entry kernel: input (N, C, L)."""
  return ConvTranspose2d(in_channels, out_channels, (kernel_size,), stride, padding, output_padding, dilation, groups, bias)


class LayerNorm2d(LayerNorm):
  """LayerNorm over the channels of (N, C, H, W) (tinygrad's LayerNorm2d)."""

  def __call__(self, x):
    return super().__call__(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


__all__ = ["Module", "Linear", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "BatchNorm", "BatchNorm1d",
           "BatchNorm2d", "BatchNorm3d", "LayerNorm", "LayerNorm2d", "RMSNorm", "GroupNorm", "InstanceNorm", "Embedding",
           "Dropout", "LSTMCell", "MultiHeadAttention", "optim", "state"]
