"""Small training loops written with plain Tensor ops and manual SGD on synthetic numpy data:
logistic regression (checked step by step against the same SGD in numpy, double precision) and a
two-layer MLP on XOR-like data (not linearly separable), trained inside a TinyJit."""
import numpy as np

from tinycore import Tensor, TinyJit


def blobs(n, rng):
  """Two Gaussian blobs in 2-D, labels 0 and 1."""
  y = (np.arange(n) % 2).astype(np.float32)
  x = rng.normal(0, 1.0, (n, 2)) + np.where(y[:, None] == 1, 2.0, -2.0)
  return x.astype(np.float32), y.reshape(n, 1)


def numpy_logistic_sgd(x, y, w, b, lr, steps):
  x, y = x.astype(np.float64), y.astype(np.float64)
  losses = []
  for _ in range(steps):
    p = 1 / (1 + np.exp(-(x @ w + b)))
    losses.append(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())
    g = (p - y) / len(x)
    w, b = w - lr * (x.T @ g), b - lr * g.sum(axis=0)
  return w, b, losses


def test_logistic_regression_matches_numpy_sgd():
  rng = np.random.default_rng(1)
  x, y = blobs(200, rng)
  w0 = rng.normal(0, 0.1, (2, 1)).astype(np.float32)
  b0 = np.zeros(1, dtype=np.float32)
  lr, steps = 0.5, 40

  X, Y = Tensor(x), Tensor(y)
  w, b = Tensor(w0, requires_grad=True), Tensor(b0, requires_grad=True)
  losses = []
  for _ in range(steps):
    p = (X @ w + b).sigmoid()
    loss = -(Y * p.log() + (1 - Y) * (1 - p).log()).mean()
    loss.backward()
    losses.append(loss.item())
    w.assign(w - lr * w.grad)
    b.assign(b - lr * b.grad)
    w.grad, b.grad = None, None

  w_ref, b_ref, losses_ref = numpy_logistic_sgd(x, y, w0.astype(np.float64), b0.astype(np.float64), lr, steps)
  np.testing.assert_allclose(losses, losses_ref, rtol=1e-4, atol=1e-6)
  np.testing.assert_allclose(w.numpy(), w_ref, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(b.numpy(), b_ref, rtol=1e-4, atol=1e-5)
  assert losses[-1] < 0.2 * losses[0]
  accuracy = (((X @ w + b) > 0).numpy() == (y > 0.5)).mean()
  assert accuracy > 0.97


def test_two_layer_mlp_learns_xor_in_a_jit():
  rng = np.random.default_rng(2)
  n, hidden, lr = 256, 32, 0.5
  x = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
  labels = ((x[:, 0] > 0) != (x[:, 1] > 0)).astype(np.int32)  # XOR of the signs
  w1 = Tensor(rng.normal(0, 1.0, (2, hidden)).astype(np.float32), requires_grad=True)
  b1 = Tensor(np.zeros(hidden, dtype=np.float32), requires_grad=True)
  w2 = Tensor(rng.normal(0, 1.0 / np.sqrt(hidden), (hidden, 2)).astype(np.float32), requires_grad=True)
  b2 = Tensor(np.zeros(2, dtype=np.float32), requires_grad=True)
  params = [w1, b1, w2, b2]

  def forward(xb):
    return ((xb @ w1 + b1).relu() @ w2 + b2).log_softmax()

  @TinyJit
  def train_step(xb, yb):
    loss = -(forward(xb) * yb.one_hot(2)).sum(axis=1).mean()
    loss.backward()
    for p in params:
      p.assign(p - lr * p.grad)
    Tensor.realize(*params)
    for p in params: p.grad = None
    return loss.realize()

  X, Y = Tensor(x), Tensor(labels)
  losses = [train_step(X, Y).item() for _ in range(300)]
  assert train_step.captured
  assert all(np.isfinite(losses))
  assert losses[-1] < 0.25 * losses[0], f"loss {losses[0]:.3f} -> {losses[-1]:.3f}"
  # the weights the replays updated are the ones evaluation sees
  predicted = forward(X).argmax(axis=1).numpy()
  assert (predicted == labels).mean() > 0.93
  # and they generalize to fresh points of the same rule
  xt = rng.uniform(-1, 1, (200, 2)).astype(np.float32)
  lt = (xt[:, 0] > 0) != (xt[:, 1] > 0)
  assert (forward(Tensor(xt)).argmax(axis=1).numpy() == lt).mean() > 0.85
