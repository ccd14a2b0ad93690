"""bench's PyTorch anchors, run by Debian's /usr/bin/python3 as ../shared/reference sets.
Inference runs the same weights tinycore saved; training runs the same model, batch and optimizer
from PyTorch's own initialization (a step's time does not depend on the values).

  torch_anchors.py --serve --threads N
      the worker bench drives step by step (apps/bench/torch_worker.h), so that its steps run in
      turns with tinycore's: with N threads (torch.set_num_threads, once), it says hello
      ({"ok": true, "torch": VERSION, "threads": N}, or {"error": WHY} without PyTorch), then
      answers each JSON line on stdin with one on stdout:
        {"setup": NAME, ...params}  builds the model, optimizer and data of NAME (freeing the
            ones before) and warms it up (2 steps): {"ok": true, "first_s": the first step's
            seconds, ...}
        {"run": NAME}  one step of what the last setup built, finished when answered:
            {"ms": its milliseconds (time.perf_counter around it), ...}
      and {"error": WHY} to a line it cannot do. It ends at the end of stdin. The setups
      (SETUPS below):
        mnist_train     batch: tinygrad's beautiful_mnist convnet (Adam, lr 1e-3) on random
                        images, as ../shared/reference/torch_mnist.py runs it
        gpt_train       shape [vocab, context, layers, width, heads], batch: the GPT (AdamW, lr
                        3e-4) on fixed tokens
        resnet50_train  batch, side: torchvision's resnet50, SGD (lr 0.01, momentum 0.9, weight
                        decay 5e-5), batchnorm in training mode
        resnet50_infer  batch, side: its forward in eval mode
        resnet18_infer  weights (a safetensors file), side: torchvision's resnet18 with those
                        weights at batch 1; setup answers "logits", the first 8 of a fixed input
                        (tinycore checks them)
        gpt_decode      weights, shape, tokens_per_run: greedy decoding at batch 1 on a KV
                        cache from token 0 (the warm-up is tokens 0 and 1); a run decodes the next
                        tokens_per_run, after the context's last from token 0 again, and answers
                        "tokens", those of the first pass so far (tinycore checks it made the
                        same ones)
        onnx_infer      model, dir, batch: the forward of bench's onnx suite, torchvision's model
                        with the weights in DIR/MODEL.pt at 224x224; setup answers "onnx_logits",
                        the first 8 of a fixed input (tinycore checks them)
  torch_anchors.py --onnx-export DIR
      torchvision's resnet50 and mobilenet_v2 (random weights and batchnorm statistics, seed 0)
      into DIR as NAME.onnx
      (opset 10, input "input", output "output", the batch axis dynamic) and NAME.pt (the state
      dict), unless there already: the models of bench's onnx suite; prints one JSON object
"""
import argparse
import json
import os
import struct
import sys
import time

try:  # the worker says why it has no PyTorch rather than dying
  import torch
  sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  "../../tests/fixtures"))
  from torch_fixture import random_batchnorm  # noqa: E402
  from torch_gpt import GPT  # noqa: E402
  NO_TORCH = None
except ImportError as e:
  NO_TORCH = str(e)


def load_safetensors(path):
  dtypes = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
            "I32": torch.int32, "I64": torch.int64}
  with open(path, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    data = f.read()
  out = {}
  for name, t in header.items():
    if name == "__metadata__":
      continue
    a, b = t["data_offsets"]
    out[name] = torch.frombuffer(bytearray(data[a:b]), dtype=dtypes[t["dtype"]]).reshape(t["shape"])
  return out


def images(batch, side):
  """torch.linspace(-1, 1) as a batch of images: the fixed input whose logits tinycore checks."""
  return torch.linspace(-1, 1, batch * 3 * side * side).reshape(batch, 3, side, side)


def forward_step(model, x):
  """A step: the forward of `model` in eval mode on x, without autograd; returns the logits."""
  model.eval()

  def step():
    with torch.inference_mode():
      return model(x)

  return step


def train_step(model, opt, x, loss):
  """A step: loss(model(x)) backward, then opt's step; reads the loss (the step has finished)."""
  model.train()

  def step():
    opt.zero_grad()
    value = loss(model(x))
    value.backward()
    opt.step()
    value.item()

  return step


def labels(n, classes):
  return torch.arange(n) * 7919 % classes  # bench's labels() in model_suite.cc


# Each setup: the step of a {"setup": NAME, ...} command and what the setup answers besides "ok"
# and "first_s".


def mnist_train(c):
  nn, batch = torch.nn, c["batch"]
  model = nn.Sequential(nn.Conv2d(1, 32, 5), nn.ReLU(), nn.Conv2d(32, 32, 5), nn.ReLU(),
                        nn.BatchNorm2d(32), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                        nn.Conv2d(64, 64, 3), nn.ReLU(), nn.BatchNorm2d(64), nn.MaxPool2d(2),
                        nn.Flatten(1), nn.Linear(576, 10))
  opt = torch.optim.Adam(model.parameters(), lr=1e-3)
  x, y = torch.rand(batch, 1, 28, 28) * 2 - 1, torch.arange(batch) * 7 % 10
  return train_step(model, opt, x, lambda out: torch.nn.functional.cross_entropy(out, y)), {}


def gpt_train(c):
  vocab, context, layers, width, heads = c["shape"]
  model = GPT(vocab, context, layers, width, heads)
  opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
  n = torch.arange(c["batch"] * context).reshape(c["batch"], context)
  tokens, targets = n * 7919 % vocab, n * 7919 % (vocab - 1)
  loss = lambda logits: torch.nn.functional.cross_entropy(logits.reshape(-1, vocab),
                                                          targets.reshape(-1))
  return train_step(model, opt, tokens, loss), {}


def resnet50_train(c):
  import torchvision
  model = torchvision.models.resnet50()
  opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-5)
  x, y = torch.rand(c["batch"], 3, c["side"], c["side"]) - 0.5, labels(c["batch"], 1000)
  return train_step(model, opt, x, lambda out: torch.nn.functional.cross_entropy(out, y)), {}


def resnet50_infer(c):
  import torchvision
  return forward_step(torchvision.models.resnet50(), images(c["batch"], c["side"])), {}


def resnet18_infer(c):
  import torchvision
  model = torchvision.models.resnet18()
  model.load_state_dict(load_safetensors(c["weights"]), strict=False)  # no num_batches_tracked
  step = forward_step(model, images(1, c["side"]))
  return step, {"logits": step()[0, :8].tolist()}


def gpt_decode(c):
  vocab, context, layers, width, heads = c["shape"]
  model = GPT(vocab, context, layers, width, heads).eval()
  model.load_state_dict(load_safetensors(c["weights"]))
  cache, made, pos = model.new_cache(1), [], 0
  token = torch.zeros(1, 1, dtype=torch.long)

  def decode(n):
    nonlocal token, pos
    with torch.inference_mode():
      for _ in range(n):
        if pos == context:  # again from token 0: the cache's slots past pos are not read
          pos, token = 0, torch.zeros(1, 1, dtype=torch.long)
        token = model.decode(token, pos, cache)[:, -1].argmax(-1, keepdim=True)
        pos += 1
        if len(made) < context:
          made.append(int(token))
    return {"tokens": made}

  # the warm-up's 2 steps (serve) are tokens 0 and 1, as tinycore's first call and capture
  return (lambda: decode(1 if len(made) < 2 else c["tokens_per_run"])), {}


def onnx_infer(c):
  import torchvision
  model = getattr(torchvision.models, c["model"])()
  model.load_state_dict(torch.load(os.path.join(c["dir"], c["model"] + ".pt")))
  step = forward_step(model, images(c["batch"], 224))
  return step, {"onnx_logits": step()[0, :8].tolist()}


SETUPS = {f.__name__: f for f in (mnist_train, gpt_train, resnet50_train, resnet50_infer,
                                  resnet18_infer, gpt_decode, onnx_infer)}


def serve(threads):
  """The worker: see the module's docstring."""
  def say(answer):
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()

  if NO_TORCH:
    return say({"error": "no PyTorch: " + NO_TORCH})
  torch.set_num_threads(threads)
  say({"ok": True, "torch": torch.__version__, "threads": torch.get_num_threads()})
  name, step = None, None
  for line in sys.stdin:
    try:
      c = json.loads(line)
      if "setup" in c:
        name, step = None, None  # the models before are freed before the next is built
        if c["setup"] not in SETUPS:
          raise ValueError(f"no setup {c['setup']!r}")
        step, answer = SETUPS[c["setup"]](c)
        t0 = time.perf_counter()
        step()
        answer.update(ok=True, first_s=time.perf_counter() - t0)
        step()
        name = c["setup"]
        say(answer)
      elif "run" in c:
        if c["run"] != name:
          raise ValueError(f"{c['run']} was not set up (the last setup: {name})")
        t0 = time.perf_counter()
        out = step()
        ms = (time.perf_counter() - t0) * 1e3
        say({"ms": ms, **(out if isinstance(out, dict) else {})})
      else:
        raise ValueError("neither setup nor run")
    except Exception as e:  # noqa: BLE001 (any failure is an answer: bench goes on without it)
      say({"error": f"{type(e).__name__}: {e}"})


ONNX_MODELS = ("resnet50", "mobilenet_v2")


def onnx_export(folder):
  import torchvision
  os.makedirs(folder, exist_ok=True)
  for name in ONNX_MODELS:
    path = os.path.join(folder, name + ".onnx")
    if os.path.exists(path):
      continue
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    # random batchnorm statistics and affines: with the initial ones every folded conv bias is 0,
    # the export shares them through Identity nodes, and OpenCV 4.6 cannot read those
    random_batchnorm(model)
    torch.save(model.state_dict(), os.path.join(folder, name + ".pt"))
    # written beside, then renamed: an interrupted export leaves no half model in the cache
    # opset 10: OpenCV 4.6 reads Clip (MobileNetV2's ReLU6) only with its bounds as attributes,
    # which opset 11 made inputs
    torch.onnx.export(model, torch.zeros(1, 3, 224, 224), path + ".part", opset_version=10,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    os.replace(path + ".part", path)
  return {"onnx_models": [os.path.join(folder, n + ".onnx") for n in ONNX_MODELS]}


def main():
  p = argparse.ArgumentParser()
  p.add_argument("--serve", action="store_true")
  p.add_argument("--threads", type=int, default=int(os.environ.get("TORCH_THREADS", "2")))
  p.add_argument("--onnx-export", metavar="DIR")
  a = p.parse_args()
  if a.serve:
    return serve(a.threads)
  torch.set_num_threads(a.threads)
  out = {"torch": torch.__version__}
  if a.onnx_export:
    out.update(onnx_export(a.onnx_export))
  print(json.dumps(out))


if __name__ == "__main__":
  main()
