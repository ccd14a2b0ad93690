"""tinycore.nn from Python, with tinygrad's API: each layer's output against a numpy computation in
double precision, optimizer steps against the update rules written out in numpy, state dict
names, safetensors files (round trip, metadata, corrupt files), and a small training loop."""
import numpy as np
import pytest

from tinycore import Tensor, TinyJit, dtypes, nn
from tinycore.nn.optim import SGD, Adam, AdamW, LAMB, LARS, Muon, OptimizerGroup
from tinycore.nn.state import get_parameters, get_state_dict, load_state_dict, safe_load, safe_load_metadata, safe_save

RNG = np.random.default_rng(0)


def rand(*shape, low=-1.0, high=1.0):
  return RNG.uniform(low, high, shape).astype(np.float32)


def close(t: Tensor, ref, atol=1e-5, rtol=1e-5):
  got, ref = t.numpy(), np.asarray(ref)
  assert got.shape == ref.shape, f"shape {got.shape}, expected {ref.shape}"
  np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), atol=atol, rtol=rtol)


def np64(t: Tensor) -> np.ndarray:
  return t.numpy().astype(np.float64)


# ---------------------------------------------------------------- references (numpy, float64)

def conv_ref(x, w, b, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
  """Direct N-d convolution (1-D or 2-D); padding as (left, right, top, bottom) for 2-D or
  (left, right) for 1-D (the last dimension first)."""
  x, w = x.astype(np.float64), w.astype(np.float64)
  nd = w.ndim - 2
  pads = [(padding[2 * (nd - 1 - i)], padding[2 * (nd - 1 - i) + 1]) for i in range(nd)]
  x = np.pad(x, [(0, 0), (0, 0)] + pads)
  n, cin = x.shape[:2]
  cout, cpg = w.shape[:2]
  k = w.shape[2:]
  out_sz = [(x.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
  out = np.zeros((n, cout, *out_sz))
  opg = cout // groups
  for o in range(cout):
    g = o // opg
    for pos in np.ndindex(*out_sz):
      acc = np.zeros(n)
      for c in range(cpg):
        for kk in np.ndindex(*k):
          idx = tuple(pos[i] * stride[i] + kk[i] * dilation[i] for i in range(nd))
          acc += x[(slice(None), g * cpg + c, *idx)] * w[(o, c, *kk)]
      out[(slice(None), o, *pos)] = acc + (0 if b is None else b[o])
  return out


def conv_transpose_ref(x, w, b, stride, padding, output_padding):
  """2-D transposed convolution as a scatter: each input pixel adds w * x into the output."""
  x, w = x.astype(np.float64), w.astype(np.float64)
  n, cin, h, wd = x.shape
  cout, kh, kw = w.shape[1], w.shape[2], w.shape[3]
  full = np.zeros((n, cout, (h - 1) * stride + kh + output_padding, (wd - 1) * stride + kw + output_padding))
  for i in range(h):
    for j in range(wd):
      full[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] += np.einsum("nc,cokl->nokl", x[:, :, i, j], w)
  out = full[:, :, padding:full.shape[2] - padding, padding:full.shape[3] - padding]
  return out + b.reshape(1, -1, 1, 1)


def norm_ref(x, axes, eps):
  x = x.astype(np.float64)
  mean = x.mean(axis=axes, keepdims=True)
  var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
  return (x - mean) / np.sqrt(var + eps)


def sigmoid(x): return 1 / (1 + np.exp(-x))


# ---------------------------------------------------------------- layers

def test_linear_matches_numpy_and_exposes_its_tensors():
  lin = nn.Linear(3, 4)
  assert lin.weight.shape == (4, 3) and lin.bias.shape == (4,)
  assert lin.weight.requires_grad and lin.bias.requires_grad
  bound = 1 / np.sqrt(3)  # tinygrad's (and PyTorch's) initialization range
  assert np.all(np.abs(lin.weight.numpy()) <= bound) and np.all(np.abs(lin.bias.numpy()) <= bound)
  x = rand(5, 3)
  close(lin(Tensor(x)), x.astype(np.float64) @ np64(lin.weight).T + np64(lin.bias))

  # assigning the attribute replaces the tensor the layer uses (and trains)
  w, b = rand(4, 3), rand(4)
  lin.weight, lin.bias = Tensor(w), Tensor(b)
  assert lin.weight.requires_grad
  close(lin(Tensor(x)), x.astype(np.float64) @ w.T.astype(np.float64) + b)
  # assigning into it changes the layer's own tensor
  lin.weight.assign(Tensor(np.zeros((4, 3), np.float32))).realize()
  close(lin(Tensor(x)), np.broadcast_to(b.astype(np.float64), (5, 4)))


def test_linear_without_bias():
  lin = nn.Linear(3, 2, bias=False)
  assert lin.bias is None
  x = rand(2, 3)
  close(lin(Tensor(x)), x.astype(np.float64) @ np64(lin.weight).T)
  assert sorted(get_state_dict(lin)) == ["weight"]
  with pytest.raises(ValueError, match="Linear.bias: this layer was built without it"):
    lin.bias = Tensor.zeros(2)
  with pytest.raises(ValueError, match="Linear.bias cannot be removed"):
    nn.Linear(3, 2).bias = None


@pytest.mark.parametrize("stride,padding,dilation,groups", [(1, 0, 1, 1), (2, 1, 1, 2), (1, (1, 2), 2, 1)])
def test_conv2d_matches_numpy(stride, padding, dilation, groups):
  conv = nn.Conv2d(4, 2, (3, 2), stride=stride, padding=padding, dilation=dilation, groups=groups)
  assert conv.weight.shape == (2, 4 // groups, 3, 2) and conv.bias.shape == (2,)
  x = rand(2, 4, 6, 5)
  pad = (padding[1], padding[1], padding[0], padding[0]) if isinstance(padding, tuple) else (padding,) * 4
  ref = conv_ref(x, conv.weight.numpy(), np64(conv.bias), (stride, stride), pad, (dilation, dilation), groups)
  close(conv(Tensor(x)), ref, atol=1e-4)


def test_conv2d_same_padding_keeps_the_size():
  conv = nn.Conv2d(2, 3, 4, padding="same", bias=False)
  assert conv.bias is None and conv.weight.shape == (3, 2, 4, 4)
  x = rand(1, 2, 5, 6)
  close(conv(Tensor(x)), conv_ref(x, conv.weight.numpy(), None, padding=(1, 2, 1, 2)), atol=1e-4)
  with pytest.raises(ValueError, match="only 'same' is supported"):
    nn.Conv2d(2, 3, 3, padding="valid")
  with pytest.raises(ValueError, match="not supported for strided convolutions"):
    nn.Conv2d(2, 3, 3, stride=2, padding="same")


def test_conv1d_matches_numpy():
  conv = nn.Conv1d(3, 2, 3, stride=2, padding=1)
  assert conv.weight.shape == (2, 3, 3)
  x = rand(2, 3, 7)
  close(conv(Tensor(x)), conv_ref(x, conv.weight.numpy(), np64(conv.bias), (2,), (1, 1), (1,)), atol=1e-4)


def test_conv_transpose2d_matches_numpy():
  conv = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1)
  assert conv.weight.shape == (3, 2, 3, 3)
  x = rand(1, 3, 3, 4)
  ref = conv_transpose_ref(x, conv.weight.numpy(), np64(conv.bias), 2, 1, 1)
  close(conv(Tensor(x)), ref, atol=1e-4)


def test_conv_errors_name_the_layer_and_shapes():
  with pytest.raises(RuntimeError, match=r"Conv2d: input of shape \(1, 3, 5, 5\) does not have 2 channels"):
    nn.Conv2d(2, 4, 3)(Tensor.ones(1, 3, 5, 5))
  with pytest.raises(RuntimeError, match="do not split into 2 groups"):
    nn.Conv2d(3, 4, 3, groups=2)


def test_batchnorm_training_and_eval():
  bn = nn.BatchNorm2d(3, eps=1e-3, momentum=0.2)
  bn.weight, bn.bias = Tensor(rand(3)), Tensor(rand(3))
  x = rand(4, 3, 2, 2, low=0, high=3)
  gamma, beta = np64(bn.weight).reshape(1, 3, 1, 1), np64(bn.bias).reshape(1, 3, 1, 1)
  with Tensor.train():
    y = bn(Tensor(x))
    close(y, norm_ref(x, (0, 2, 3), 1e-3) * gamma + beta, atol=1e-4)
    Tensor.realize(bn.running_mean, bn.running_var, bn.num_batches_tracked)
  x64 = x.astype(np.float64)
  mean, var = x64.mean(axis=(0, 2, 3)), x64.var(axis=(0, 2, 3), ddof=1)  # running var is unbiased
  close(bn.running_mean, 0.8 * 0 + 0.2 * mean, atol=1e-5)
  close(bn.running_var, 0.8 * 1 + 0.2 * var, atol=1e-5)
  assert bn.num_batches_tracked.item() == 1
  # evaluation normalizes with the running statistics
  xe = rand(2, 3, 2, 2)
  ref = (xe - bn.running_mean.numpy().reshape(1, 3, 1, 1)) / np.sqrt(bn.running_var.numpy().reshape(1, 3, 1, 1) + 1e-3)
  close(bn(Tensor(xe)), ref * gamma + beta, atol=1e-4)
  assert sorted(get_state_dict(bn)) == ["bias", "num_batches_tracked", "running_mean", "running_var", "weight"]


def test_layernorm_and_layernorm2d():
  ln = nn.LayerNorm((2, 3), eps=1e-5)
  ln.weight, ln.bias = Tensor(rand(2, 3)), Tensor(rand(2, 3))
  x = rand(4, 2, 3)
  close(ln(Tensor(x)), norm_ref(x, (1, 2), 1e-5) * np64(ln.weight) + np64(ln.bias), atol=1e-4)
  with pytest.raises(RuntimeError, match=r"LayerNorm: input of shape \(4, 3\) does not end in \(2, 3\)"):
    ln(Tensor(rand(4, 3)))

  ln2 = nn.LayerNorm2d(3)
  x = rand(2, 3, 2, 2)
  close(ln2(Tensor(x)), norm_ref(x, (1,), 1e-5), atol=1e-4)


def test_rmsnorm():
  rms = nn.RMSNorm(4)
  rms.weight = Tensor(rand(4))
  x = rand(3, 4).astype(np.float64)
  close(rms(Tensor(x.astype(np.float32))), x / np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-6) * np64(rms.weight), atol=1e-5)
  assert nn.RMSNorm(4, elementwise_affine=False).weight is None


def test_groupnorm_and_instancenorm():
  gn = nn.GroupNorm(2, 4)
  gn.weight, gn.bias = Tensor(rand(4)), Tensor(rand(4))
  x = rand(2, 4, 3)
  ref = norm_ref(x.reshape(2, 2, 6), (2,), 1e-5).reshape(2, 4, 3)
  close(gn(Tensor(x)), ref * np64(gn.weight).reshape(1, 4, 1) + np64(gn.bias).reshape(1, 4, 1), atol=1e-4)

  inorm = nn.InstanceNorm(4)  # tinygrad's default: affine
  assert inorm.weight.shape == (4,) and inorm.running_mean is None
  inorm.weight, inorm.bias = Tensor(rand(4)), Tensor(rand(4))
  x = rand(2, 4, 2, 3)
  ref = norm_ref(x, (2, 3), 1e-5) * np64(inorm.weight).reshape(1, 4, 1, 1) + np64(inorm.bias).reshape(1, 4, 1, 1)
  close(inorm(Tensor(x)), ref, atol=1e-4)
  with pytest.raises(RuntimeError, match="GroupNorm: 5 channels do not split into 2 groups"):
    nn.GroupNorm(2, 5)


def test_embedding():
  emb = nn.Embedding(5, 3)
  idx = np.array([[0, 4], [2, 2]], dtype=np.int32)
  close(emb(Tensor(idx)), emb.weight.numpy()[idx])
  with pytest.raises(RuntimeError, match="Embedding: indices must be integers, got float"):
    emb(Tensor([0.0, 1.0]))


def test_lstm_cell_matches_numpy():
  cell = nn.LSTMCell(3, 2)
  assert cell.weight_ih.shape == (8, 3) and cell.weight_hh.shape == (8, 2) and cell.bias_ih.shape == (8,)
  x, h, c = rand(4, 3), rand(4, 2), rand(4, 2)
  wih, whh, bih, bhh = (np64(t) for t in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh))

  def step(h, c):
    gates = x @ wih.T + bih + h @ whh.T + bhh
    i, f, g, o = np.split(gates, 4, axis=1)
    c2 = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return sigmoid(o) * np.tanh(c2), c2

  h2, c2 = cell(Tensor(x), (Tensor(h), Tensor(c)))
  rh, rc = step(h.astype(np.float64), c.astype(np.float64))
  close(h2, rh, atol=1e-5)
  close(c2, rc, atol=1e-5)
  h0, c0 = cell(Tensor(x))  # from the zero state
  rh, rc = step(np.zeros((4, 2)), np.zeros((4, 2)))
  close(h0, rh, atol=1e-5)
  close(c0, rc, atol=1e-5)


def test_multihead_attention_matches_numpy():
  mha = nn.MultiHeadAttention(4, 2)
  x = rand(1, 3, 4).astype(np.float64)
  w, b = np64(mha.in_proj_weight), np64(mha.in_proj_bias)
  q, k, v = np.split(x @ w.T + b, 3, axis=-1)
  heads = []
  for hd in range(2):
    s = slice(2 * hd, 2 * hd + 2)
    scores = q[..., s] @ k[..., s].transpose(0, 2, 1) / np.sqrt(2)
    scores = scores + np.triu(np.full((3, 3), -np.inf), 1)  # causal
    p = np.exp(scores - scores.max(-1, keepdims=True))
    heads.append(p / p.sum(-1, keepdims=True) @ v[..., s])
  ref = np.concatenate(heads, -1) @ np64(mha.out_proj.weight).T + np64(mha.out_proj.bias)
  close(mha(Tensor(x.astype(np.float32)), is_causal=True), ref, atol=1e-5)
  assert sorted(get_state_dict(mha)) == ["in_proj_bias", "in_proj_weight", "out_proj.bias", "out_proj.weight"]


# ---------------------------------------------------------------- state dicts

class Block:
  def __init__(self):
    self.conv = nn.Conv2d(1, 2, 3)
    self.bn = nn.BatchNorm(2)


class Net:
  def __init__(self):
    self.l1 = nn.Linear(4, 5)
    self.blocks = [Block(), Block()]
    self.heads = {"cls": nn.Linear(5, 2, bias=False)}
    self.scale = Tensor([1.0])
    self.name = "not a tensor"


def test_state_dict_names_follow_attributes_lists_and_dicts():
  net = Net()
  sd = get_state_dict(net)
  block = ["bn.bias", "bn.num_batches_tracked", "bn.running_mean", "bn.running_var", "bn.weight", "conv.bias", "conv.weight"]
  expected = ["l1.bias", "l1.weight", "heads.cls.weight", "scale"] + [f"blocks.{i}.{n}" for i in range(2) for n in block]
  assert sorted(sd) == sorted(expected)
  assert sd["blocks.1.conv.weight"].shape == (2, 1, 3, 3)
  assert len(get_parameters(net)) == len(expected)
  # the handles are the model's: assigning through the state dict changes the layer
  sd["l1.bias"].assign(Tensor.full((5,), 3.0)).realize()
  close(net.l1.bias, np.full(5, 3.0))


def test_optimizer_trains_parameters_and_realizes_buffers():
  net = Net()
  opt = SGD(get_parameters(net), lr=0.1)
  assert len(opt.params) == 2 + 1 + 1 + 2 * 4  # l1, heads.cls, the plain scale, each block's conv and bn
  assert len(opt.buffers) == 2 * 3  # each BatchNorm's running_mean, running_var, num_batches_tracked
  assert all(p.requires_grad for p in opt.params)

  # a step trains every parameter and realizes the running statistics the forward assigned
  blocks = net.blocks
  opt = SGD(get_parameters(blocks), lr=0.1)
  x = Tensor(rand(2, 1, 4, 4))
  conv_out = [b.conv(x).numpy().astype(np.float64) for b in blocks]
  before = [p.numpy() for p in opt.params]
  with Tensor.train():
    opt.zero_grad()
    sum(((b.bn(b.conv(x)) - 1) ** 2).mean() for b in blocks).backward()
    grads = [p.grad.numpy() for p in opt.params]
    opt.step()
  # each parameter took its SGD step (compared, not "changed": a conv's bias feeding batchnorm has
  # a zero gradient in exact arithmetic, its float32 residue too small to move the value)
  assert sum(np.abs(g).max() > 1e-5 for g in grads) == len(grads) - len(blocks)
  for p, q, g in zip(opt.params, before, grads):
    close(p, q - 0.1 * g, atol=1e-6, rtol=0)
  for b, y in zip(blocks, conv_out):
    assert b.bn.num_batches_tracked.item() == 1
    close(b.bn.running_mean, 0.1 * y.mean(axis=(0, 2, 3)), atol=1e-5)


def test_load_state_dict_strict_and_not():
  src, dst = Net(), Net()
  loaded = load_state_dict(dst, get_state_dict(src), verbose=False)
  assert len(loaded) == len(get_state_dict(dst))
  close(dst.blocks[1].conv.weight, src.blocks[1].conv.weight.numpy())
  close(dst.heads["cls"].weight, src.heads["cls"].weight.numpy())

  bad = get_state_dict(Net())
  del bad["l1.bias"]
  bad["extra"] = Tensor([1.0])
  bad["scale"] = Tensor([1.0, 2.0])
  before = dst.l1.weight.numpy()
  with pytest.raises(RuntimeError, match=r"load_state_dict: missing \[l1.bias\], unexpected \[extra\], mismatched "
                                         r"\[scale: file \(2,\) float, model \(1,\) float\]"):
    load_state_dict(dst, bad)
  close(dst.l1.weight, before)  # strict: nothing assigned
  loaded = load_state_dict(dst, bad, strict=False, verbose=False)
  assert len(loaded) == len(get_state_dict(dst)) - 2
  close(dst.l1.weight, bad["l1.weight"].numpy())


# ---------------------------------------------------------------- safetensors

def test_safetensors_round_trip(tmp_path):
  tensors = {"a": Tensor(rand(2, 3)), "b.int": Tensor(np.arange(5, dtype=np.int64)), "c": Tensor([True, False]),
             "h": Tensor(rand(3)).cast(dtypes.float16)}
  path = tmp_path / "m.safetensors"
  safe_save(tensors, path, metadata={"format": "pt"})
  back = safe_load(str(path))
  assert sorted(back) == sorted(tensors)
  for k, t in tensors.items():
    assert back[k].dtype == t.dtype and back[k].shape == t.shape
    np.testing.assert_array_equal(back[k].numpy(), t.numpy())
  t, data_start, header = safe_load_metadata(path)
  assert header["__metadata__"] == {"format": "pt"}
  assert header["a"]["dtype"] == "F32" and header["a"]["shape"] == [2, 3]
  begin, end = header["a"]["data_offsets"]
  assert end - begin == 24 and t.dtype == dtypes.uint8
  assert t.shape == (data_start + sum(v["data_offsets"][1] - v["data_offsets"][0] for k, v in header.items() if k != "__metadata__"),)
  with pytest.raises(TypeError, match="metadata maps str to str"):
    safe_save(tensors, path, metadata={"epoch": 3})


def test_model_checkpoint_round_trip(tmp_path):
  src, dst = Net(), Net()
  safe_save(get_state_dict(src), tmp_path / "net.safetensors")
  load_state_dict(dst, safe_load(tmp_path / "net.safetensors"), verbose=False)
  for k, v in get_state_dict(dst).items():
    np.testing.assert_array_equal(v.numpy(), get_state_dict(src)[k].numpy())


def test_corrupt_safetensors_files_are_errors(tmp_path):
  path = tmp_path / "m.safetensors"
  safe_save({"w": Tensor(rand(4, 4))}, path)
  data = path.read_bytes()
  (tmp_path / "cut.safetensors").write_bytes(data[:-10])
  with pytest.raises(RuntimeError, match=r"safe_load: .*cut.safetensors: .*"):
    safe_load(tmp_path / "cut.safetensors")
  (tmp_path / "junk.safetensors").write_bytes((20).to_bytes(8, "little") + b"{not json at all!!!}")
  with pytest.raises(RuntimeError, match=r"safe_load: .*junk.safetensors"):
    safe_load(tmp_path / "junk.safetensors")
  with pytest.raises(RuntimeError, match=r"safe_load_metadata: .*junk.safetensors"):
    safe_load_metadata(tmp_path / "junk.safetensors")
  with pytest.raises(RuntimeError, match="safe_load: cannot open .*missing.safetensors"):
    safe_load(tmp_path / "missing.safetensors")


# ---------------------------------------------------------------- optimizers

TARGET = rand(3, 2)
W0 = rand(3, 2)


def run_steps(make_opt, steps=3):
  """Minimizes sum((w - TARGET)^2 * scale) from W0; returns w after each step (the gradient,
  2 (w - TARGET) scale, varies per element and step)."""
  w = Tensor(W0.copy(), requires_grad=True)
  opt = make_opt([w])
  scale = Tensor(np.arange(1, 7, dtype=np.float32).reshape(3, 2))
  out = []
  with Tensor.train():
    for _ in range(steps):
      opt.zero_grad()
      (((w - Tensor(TARGET)) ** 2) * scale).sum().backward()
      opt.step()
      out.append(w.numpy().astype(np.float64))
  return out


def grad_of(w):
  return 2 * (w - TARGET.astype(np.float64)) * np.arange(1, 7).reshape(3, 2)


def sgd_ref(lr, momentum=0.0, weight_decay=0.0, nesterov=False, steps=3):
  w, b, out = W0.astype(np.float64), np.zeros((3, 2)), []
  for _ in range(steps):
    g = grad_of(w) + weight_decay * w
    if momentum:
      b = momentum * b + g
      g = g + momentum * b if nesterov else b
    w = w - lr * g
    out.append(w)
  return out


def lamb_ref(lr, b1, b2, eps, weight_decay, adam, steps=3):
  w, m, v, out = W0.astype(np.float64), np.zeros((3, 2)), np.zeros((3, 2)), []
  for t in range(1, steps + 1):
    g = grad_of(w)
    m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
    up = (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps) + weight_decay * w
    r = 1.0 if adam else np.linalg.norm(w) / np.linalg.norm(up)
    w = w - lr * r * up
    out.append(w)
  return out


def newton_schulz_ref(g, steps=5, coefs=(3.4445, -4.775, 2.0315), eps=1e-7):
  a, b, c = coefs
  x = g / (np.linalg.norm(g) + eps)
  tall = x.shape[0] > x.shape[1]
  if tall: x = x.T
  for _ in range(steps):
    A = x @ x.T
    x = a * x + (b * A + c * A @ A) @ x
  return x.T if tall else x


def muon_ref(lr, momentum, steps=3):
  w, b, out = W0.astype(np.float64), np.zeros((3, 2)), []
  for _ in range(steps):
    g = grad_of(w)
    b = momentum * b + g
    g = newton_schulz_ref(g + momentum * b)
    w = w - lr * g
    out.append(w)
  return out


@pytest.mark.parametrize("name,make,ref", [
    ("sgd", lambda p: SGD(p, lr=0.01), lambda: sgd_ref(0.01)),
    ("sgd_momentum_wd", lambda p: SGD(p, lr=0.01, momentum=0.9, weight_decay=0.1), lambda: sgd_ref(0.01, 0.9, 0.1)),
    ("sgd_nesterov", lambda p: SGD(p, 0.01, 0.8, nesterov=True), lambda: sgd_ref(0.01, 0.8, nesterov=True)),
    ("adam", lambda p: Adam(p, lr=0.05), lambda: lamb_ref(0.05, 0.9, 0.999, 1e-8, 0.0, True)),
    ("adamw", lambda p: AdamW(p, lr=0.05, b1=0.8, weight_decay=0.1), lambda: lamb_ref(0.05, 0.8, 0.999, 1e-8, 0.1, True)),
    ("lamb", lambda p: LAMB(p, lr=0.05, weight_decay=0.01), lambda: lamb_ref(0.05, 0.9, 0.999, 1e-6, 0.01, False)),
    ("muon", lambda p: Muon(p, lr=0.02), lambda: muon_ref(0.02, 0.95)),
], ids=lambda x: x if isinstance(x, str) else "")
def test_optimizer_steps_match_numpy(name, make, ref):
  for got, want in zip(run_steps(make), ref()):
    np.testing.assert_allclose(got, want, atol=2e-5, rtol=1e-4)


def test_lr_can_be_changed_between_steps():
  w = Tensor([1.0, 2.0], requires_grad=True)
  opt = SGD([w], lr=0.1)
  assert opt.lr.shape == (1,)
  np.testing.assert_allclose(opt.lr.numpy(), [0.1], rtol=1e-6)
  for lr in (0.1, 0.5):
    opt.lr = lr
    opt.zero_grad()
    (w * Tensor([1.0, 3.0])).sum().backward()
    opt.step()
  np.testing.assert_allclose(w.numpy(), [1 - 0.6, 2 - 1.8], rtol=1e-6)
  opt.lr.assign(Tensor([0.0])).realize()  # through the handle, as tinygrad's schedulers do
  opt.zero_grad()
  (w * Tensor([1.0, 3.0])).sum().backward()
  opt.step()
  np.testing.assert_allclose(w.numpy(), [1 - 0.6, 2 - 1.8], rtol=1e-6)


def test_optimizer_errors():
  w = Tensor([1.0], requires_grad=True)
  with pytest.raises(RuntimeError, match=r"Optimizer.step: parameter 0 \(shape \(1,\)\) has no gradient"):
    SGD([w]).step()
  with pytest.raises(RuntimeError, match="Optimizer: no parameters to optimize"):
    Adam([])
  with pytest.raises(RuntimeError, match="Optimizer: parameter 0 has dtype int; parameters must be float"):
    Adam([Tensor([1, 2])])
  with pytest.raises(NotImplementedError, match="decoupled weight decay"):
    Muon([w], weight_decay=0.1)
  with pytest.raises(ValueError, match="fused"):
    Adam([w], fused=True)


def test_optimizer_state_dict_and_group():
  a, b = Tensor([1.0, 2.0], requires_grad=True), Tensor([3.0], requires_grad=True)
  opt = OptimizerGroup(Adam([a], lr=0.1), SGD([b], lr=0.1, momentum=0.9))
  assert len(opt.params) == 2
  with Tensor.train():
    opt.zero_grad()
    ((a * a).sum() + (b * b).sum()).backward()
    opt.step()
  np.testing.assert_allclose(b.numpy(), [3.0 - 0.1 * 6.0], rtol=1e-6)
  np.testing.assert_allclose(a.numpy(), [1.0 - 0.1, 2.0 - 0.1], rtol=1e-5)  # Adam's first step is lr * sign
  names = sorted(get_state_dict(opt.optimizers[0]))
  assert names == ["b1_t", "b2_t", "lr", "m.0", "params.0", "v.0"]
  np.testing.assert_allclose(get_state_dict(opt.optimizers[0])["m.0"].numpy(), [0.2, 0.4], rtol=1e-5)
  assert "1.momentum.0" in opt.state_dict()


# ---------------------------------------------------------------- training

class MLP:
  def __init__(self):
    self.layers = [nn.Linear(2, 16), nn.Linear(16, 2)]

  def __call__(self, x: Tensor) -> Tensor:
    return self.layers[1](self.layers[0](x).relu())


def test_training_an_mlp_separates_the_classes():
  Tensor.manual_seed(1)
  rng = np.random.default_rng(1)
  x = rng.normal(size=(128, 2)).astype(np.float32)
  y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(np.int32)  # linearly separable
  model = MLP()
  opt = Adam(get_parameters(model), lr=0.05)
  X, Y = Tensor(x), Tensor(y)

  @TinyJit
  def train_step():
    opt.zero_grad()
    loss = model(X).sparse_categorical_crossentropy(Y).backward()
    opt.step()
    return loss.realize()

  with Tensor.train():
    losses = [train_step().item() for _ in range(60)]
  acc = (model(X).argmax(axis=1).numpy() == y).mean()
  assert losses[-1] < 0.15 < losses[0], losses
  assert acc > 0.95, acc
