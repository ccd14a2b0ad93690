#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a bounded time.
# Usage: tools/fuzz.sh [seconds per target, default 60]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
out=out/fuzz
mkdir -p "$out/corpus/safetensors"
cp tests/fixtures/torch_state.safetensors "$out/corpus/safetensors/" 2>/dev/null || true
clang++ -std=c++20 -O1 -g -I. -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  nn/safetensors.cc tests/fuzz/safetensors_fuzz.cc -o "$out/safetensors_fuzz"
"$out/safetensors_fuzz" -max_total_time="$secs" -max_len=4096 -timeout=10 \
  -print_final_stats=1 "$out/corpus/safetensors" 2>&1 | tail -n 12
