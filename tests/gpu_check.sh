#!/usr/bin/env bash
# The GPU checks, for a machine with an NVIDIA GPU (issue 9; under 8 minutes on an H200):
# builds the release configuration, runs the CUDA runtime suite (no test may skip), the op and
# JIT suites with every kernel on the GPU (DEVICE=CUDA), and bench on CUDA (GEMM fp32/fp16/bf16
# vs cuBLAS, the model suite). Prints one line per step and ends "gpu_check: N passed, N failed".
# Usage: tests/gpu_check.sh [--no-build]   (the driver must support CUDA 13: release 580+)
set -uo pipefail
cd "$(dirname "$0")/.."
nvidia-smi -L 2>/dev/null || echo "gpu_check: nvidia-smi not found"
if [[ ${1:-} != --no-build ]]; then
  bash tools/build.sh release || { echo "gpu_check: build failed"; exit 1; }
fi
out=out/release
TC_CACHE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tinycore-gpu-cache.XXXXXX")
export TC_CACHE_DIR
trap 'rm -rf "$TC_CACHE_DIR"' EXIT
passed=0
failed=0
step() {  # step NAME COMMAND...: runs it, counts it
  local name=$1
  shift
  echo "=== $name"
  local start=$SECONDS
  if "$@"; then
    passed=$((passed + 1))
    echo "--- $name: ok ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1))
    echo "--- $name: FAILED ($((SECONDS - start)) s)"
  fi
}
# a gtest suite that must pass with nothing skipped
no_skips() {
  local log
  log=$(mktemp)
  "$@" --gtest_brief=1 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  if grep -q "SKIPPED" "$log"; then
    echo "gpu_check: tests skipped on a GPU machine"
    rc=1
  fi
  rm -f "$log"
  return "$rc"
}
step "CUDA runtime (cuda_test)" no_skips "$out/tests/cuda_test"
for suite in tensor_test index_test math_test dtype_test conv_test gradient_test random_test \
  jit_test nn_layers_test; do
  step "DEVICE=CUDA $suite" env DEVICE=CUDA "$out/tests/$suite" --gtest_brief=1
done
step "bench --device CUDA" "$out/bench" --device CUDA --suite gemm,elementwise,reduce,softmax,model \
  --json gpu_bench.json --markdown gpu_bench.md --plot gpu_bench.png
echo "gpu_check: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
