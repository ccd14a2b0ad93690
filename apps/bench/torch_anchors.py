"""bench's PyTorch anchor for the infer suite: the same weights tinycore saved, run by PyTorch
(Debian's /usr/bin/python3, 2 threads as ../shared/reference sets). Prints one JSON object.

  torch_infer.py --gpt FILE --gpt-shape vocab,context,layers,width,heads --tokens N
      greedy decoding at batch 1 on a KV cache from token 0: tokens/s after the first 2 tokens,
      and the tokens (tinycore checks it made the same ones)
  torch_infer.py --resnet FILE --side S --reps N
      torchvision's resnet18 with those weights, batch 1, SxS: ms per image (median), and the
      logits of a fixed input (tinycore checks them)
"""
import argparse
import json
import os
import struct
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/fixtures"))
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
  x = torch.linspace(-1, 1, 3 * side * side).reshape(1, 3, side, side)
  times = []
  with torch.inference_mode():
    for _ in range(reps + 2):
      t0 = time.perf_counter()
      logits = model(x)
      times.append(time.perf_counter() - t0)
  times = sorted(times[2:])
  return {"resnet_ms": times[len(times) // 2] * 1e3, "resnet_logits": logits[0, :8].tolist()}


def main():
  p = argparse.ArgumentParser()
  p.add_argument("--gpt")
  p.add_argument("--gpt-shape")
  p.add_argument("--tokens", type=int, default=128)
  p.add_argument("--resnet")
  p.add_argument("--side", type=int, default=224)
  p.add_argument("--reps", type=int, default=10)
  a = p.parse_args()
  torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "2")))
  out = {"torch": torch.__version__}
  if a.gpt:
    out.update(gpt(a.gpt, [int(v) for v in a.gpt_shape.split(",")], a.tokens))
  if a.resnet:
    out.update(resnet(a.resnet, a.side, a.reps))
  print(json.dumps(out))


if __name__ == "__main__":
  main()
