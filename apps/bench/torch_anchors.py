"""bench's PyTorch anchors, run by Debian's /usr/bin/python3 with 2 threads as ../shared/reference
sets. Inference runs the same weights tinycore saved; training runs the same model, batch and
optimizer from PyTorch's own initialization (a step's time does not depend on the values). Prints
one JSON object.

  torch_anchors.py --gpt FILE --gpt-shape vocab,context,layers,width,heads --tokens N
      greedy decoding at batch 1 on a KV cache from token 0: tokens/s after the first 2 tokens,
      and the tokens (tinycore checks it made the same ones)
  torch_anchors.py --resnet FILE --side S --reps N
      torchvision's resnet18 with those weights, batch 1, SxS: ms per image (median), and the
      logits of a fixed input (tinycore checks them)
  torch_anchors.py --onnx-export DIR
      torchvision's resnet50 and mobilenet_v2 (random weights and batchnorm statistics, seed 0)
      into DIR as NAME.onnx
      (opset 10, input "input", output "output", the batch axis dynamic) and NAME.pt (the state
      dict), unless there already: the models of bench's onnx suite
  torch_anchors.py --onnx-model NAME --dir DIR --batch B --reps N
      that model with the weights in DIR/NAME.pt, batch B, 224x224: ms per batch (median), and
      the logits of a fixed input (tinycore checks them)
  torch_anchors.py --mnist-train BATCH --steps N
      training steps of tinygrad's beautiful_mnist convnet (Adam, lr 1e-3) on random images, as
      ../shared/reference/torch_mnist.py runs it: the first step's seconds and the median step's
  torch_anchors.py --gpt-train vocab,context,layers,width,heads --batch B --steps N
      training steps of the GPT (AdamW, lr 3e-4) on fixed tokens: the median step's seconds
"""
import argparse
import json
import os
import struct
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/fixtures"))
from torch_fixture import random_batchnorm  # noqa: E402
from torch_gpt import GPT  # noqa: E402

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "I32": torch.int32,
          "I64": torch.int64}


def load_safetensors(path):
  with open(path, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    data = f.read()
  out = {}
  for name, t in header.items():
    if name == "__metadata__":
      continue
    a, b = t["data_offsets"]
    out[name] = torch.frombuffer(bytearray(data[a:b]), dtype=DTYPES[t["dtype"]]).reshape(t["shape"])
  return out


def gpt(path, shape, tokens):
  vocab, context, layers, width, heads = shape
  model = GPT(vocab, context, layers, width, heads).eval()
  model.load_state_dict(load_safetensors(path))
  cache = model.new_cache(1)
  made, token = [], torch.zeros(1, 1, dtype=torch.long)
  with torch.inference_mode():
    for pos in range(tokens):
      if pos == 2:
        t0 = time.perf_counter()
      token = model.decode(token, pos, cache)[:, -1].argmax(-1, keepdim=True)
      made.append(int(token))
    per = (time.perf_counter() - t0) / (tokens - 2)
  return {"gpt_tokens_per_s": 1 / per, "gpt_tokens": made}


def resnet(path, side, reps):
  import torchvision
  model = torchvision.models.resnet18().eval()
  model.load_state_dict(load_safetensors(path), strict=False)  # no num_batches_tracked in ours
  ms, logits = inference(model, 1, side, reps)
  return {"resnet_ms": ms, "resnet_logits": logits}


def inference(model, batch, side, reps):
  """The median ms of `reps` runs of `model` after 2, on torch.linspace(-1, 1) as a batch of
  images, and the first image's first 8 logits."""
  x = torch.linspace(-1, 1, batch * 3 * side * side).reshape(batch, 3, side, side)
  times = []
  with torch.inference_mode():
    for _ in range(reps + 2):
      t0 = time.perf_counter()
      logits = model(x)
      times.append(time.perf_counter() - t0)
  times = sorted(times[2:])
  return times[len(times) // 2] * 1e3, logits[0, :8].tolist()


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


def onnx_model(name, folder, batch, reps):
  import torchvision
  model = getattr(torchvision.models, name)().eval()
  model.load_state_dict(torch.load(os.path.join(folder, name + ".pt")))
  ms, logits = inference(model, batch, 224, reps)
  return {"onnx_ms": ms, "onnx_logits": logits}


def median_step_s(step, steps):
  """The first step's seconds, and the median of the `steps` after it."""
  times = []
  for _ in range(steps + 1):
    t0 = time.perf_counter()
    step()
    times.append(time.perf_counter() - t0)
  rest = sorted(times[1:])
  return times[0], rest[len(rest) // 2]


def mnist_train(batch, steps):
  nn = torch.nn
  model = nn.Sequential(nn.Conv2d(1, 32, 5), nn.ReLU(), nn.Conv2d(32, 32, 5), nn.ReLU(),
                        nn.BatchNorm2d(32), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                        nn.Conv2d(64, 64, 3), nn.ReLU(), nn.BatchNorm2d(64), nn.MaxPool2d(2),
                        nn.Flatten(1), nn.Linear(576, 10))
  opt = torch.optim.Adam(model.parameters(), lr=1e-3)
  x = torch.rand(batch, 1, 28, 28) * 2 - 1
  y = torch.arange(batch) * 7 % 10

  def step():
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    loss.item()

  first, median = median_step_s(step, steps)
  return {"mnist_first_step_s": first, "mnist_step_s": median}


def gpt_train(shape, batch, steps):
  vocab, context, layers, width, heads = shape
  model = GPT(vocab, context, layers, width, heads).train()
  opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
  n = torch.arange(batch * context).reshape(batch, context)
  tokens, targets = n * 7919 % vocab, n * 7919 % (vocab - 1)

  def step():
    opt.zero_grad()
    logits = model(tokens)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))
    loss.backward()
    opt.step()
    loss.item()

  first, median = median_step_s(step, steps)
  return {"gpt_first_step_s": first, "gpt_step_s": median}


def main():
  p = argparse.ArgumentParser()
  p.add_argument("--gpt")
  p.add_argument("--gpt-shape")
  p.add_argument("--tokens", type=int, default=128)
  p.add_argument("--resnet")
  p.add_argument("--side", type=int, default=224)
  p.add_argument("--reps", type=int, default=10)
  p.add_argument("--onnx-export", metavar="DIR")
  p.add_argument("--onnx-model", choices=ONNX_MODELS)
  p.add_argument("--dir")
  p.add_argument("--mnist-train", type=int, metavar="BATCH")
  p.add_argument("--gpt-train", metavar="SHAPE")
  p.add_argument("--batch", type=int, default=8)
  p.add_argument("--steps", type=int, default=5)
  a = p.parse_args()
  torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "2")))
  out = {"torch": torch.__version__}
  if a.gpt:
    out.update(gpt(a.gpt, [int(v) for v in a.gpt_shape.split(",")], a.tokens))
  if a.resnet:
    out.update(resnet(a.resnet, a.side, a.reps))
  if a.onnx_export:
    out.update(onnx_export(a.onnx_export))
  if a.onnx_model:
    out.update(onnx_model(a.onnx_model, a.dir, a.batch, a.reps))
  if a.mnist_train:
    out.update(mnist_train(a.mnist_train, a.steps))
  if a.gpt_train:
    out.update(gpt_train([int(v) for v in a.gpt_train.split(",")], a.batch, a.steps))
  print(json.dumps(out))


if __name__ == "__main__":
  main()
