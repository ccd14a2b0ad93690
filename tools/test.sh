#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test suite; ends with "N passed, N failed".
# Usage: tools/test.sh [configs...]   (default: release asan)
set -uo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh || exit 1
configs=("$@")
((${#configs[@]})) || configs=(release asan)

export POCL_CACHE_DIR="${TMPDIR:-/tmp}/tinycore-pocl"
# A fresh kernel cache: the release suites compile every kernel cold, the ASan suites load them.
TC_CACHE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/tinycore-test-cache.XXXXXX")
export TC_CACHE_DIR
trap 'rm -rf "$TC_CACHE_DIR"' EXIT
# intercept_tls_get_addr=0: GCC 12's runtime misreads glibc 2.36's dynamic TLS vector once a
# runtime with TLS of its own is loaded (PoCL, NVRTC): LeakSanitizer's tracer then scanned "DTLS 13
# at 0x291-0x1800001393" and died at exit (ASan group_test, on most runs); static TLS, stacks and
# the heap are still scanned
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:intercept_tls_get_addr=0}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tools/lsan_suppressions.txt:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
passed=0
failed=0
# the run's time by stage, printed before the counts (CI's budget is the whole run's)
stage_times=()
stage_start=0
# end_stage NAME: the time since the last stage ended was NAME's
end_stage() {
  stage_times+=("$(printf '%6d s  %s' $((SECONDS - stage_start)) "$1")")
  stage_start=$SECONDS
}
end_stage "setup (packages)"
# the suites run again on the GPU languages (see below)
gpu_suites="index_test math_test jit_test"
hip_suites="jit_test"

# run_gtest LABEL COMMAND...: runs a GoogleTest binary, adds its counts to passed/failed
run_gtest() {
  local label=$1
  shift
  echo "=== $label"
  local log
  log=$(mktemp)
  "$@" --gtest_brief=1 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  # Should LeakSanitizer's own stop-the-world tracer still die at exit, after every test passed and
  # before any leak is looked for (see intercept_tls_get_addr above): that one signature, with
  # nothing else failed or reported, runs the suite once more without the leak check, ASan and
  # UBSan still on
  if [[ $rc -ne 0 ]] && grep -q '^Tracer caught signal 11' "$log" &&
    grep -q 'LeakSanitizer has encountered a fatal error' "$log" &&
    ! grep -q -e '^\[  FAILED  \]' -e 'ERROR: [A-Za-z]*Sanitizer' -e 'runtime error:' "$log"; then
    echo "test.sh: LeakSanitizer's tracer crashed at exit (not a leak report): running $label again without the leak check"
    ASAN_OPTIONS="${ASAN_OPTIONS//detect_leaks=1/detect_leaks=0}" "$@" --gtest_brief=1 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
  fi
  local p f
  p=$(grep -oP '^\[  PASSED  \] \K[0-9]+' "$log" | tail -1)
  f=$(grep -oP '^\[  FAILED  \] \K[0-9]+(?= tests?, listed below)' "$log" | tail -1)
  p=${p:-0}
  f=${f:-0}
  if [[ $rc -ne 0 && $f -eq 0 ]]; then
    echo "test.sh: $label exited with $rc without a gtest failure (crash or sanitizer report)"
    f=1
  fi
  passed=$((passed + p))
  failed=$((failed + f))
  rm -f "$log"
}

for cfg in "${configs[@]}"; do
  if ! bash tools/build.sh "$cfg"; then
    echo "test.sh: build of $cfg failed"
    failed=$((failed + 1))
    end_stage "$cfg: build (failed)"
    continue
  fi
  end_stage "$cfg: build"
  # release: every kernel the suites build is also rendered as CUDA C and compiled by NVRTC for
  # sm_90 (CHECK_RENDER), where the CUDA toolkit is
  check=
  if [[ $cfg == release ]]; then
    cuda=${CUDA_PATH:-/usr/local/cuda}
    if [[ -f $cuda/include/cuda.h && -f $cuda/include/nvrtc.h ]]; then
      check=cuda
    else
      echo "test.sh: CUDA toolkit not found: the NVRTC compile checks are skipped"
    fi
  fi
  for t in out/"$cfg"/tests/*_test; do
    # under the sanitizers, the JIT suite also fills planned memory with NaN before each replay
    poison=
    [[ $cfg == asan && $(basename "$t") == jit_test ]] && poison=1
    run_gtest "$cfg: $(basename "$t")${check:+ (CHECK_RENDER=$check)}${poison:+ (JIT_POISON=1)}" \
      env CHECK_RENDER=$check ${poison:+JIT_POISON=1} "$t"
  done
  # the differential Tensor fuzzer (tests/fuzz/tensor_fuzz.cc) under the sanitizers: its
  # findings, then random programs for FUZZ_SECONDS (a nightly run: FUZZ_SECONDS=1800)
  # The seeds start from the commit's hash: a commit's CI run is reproducible (a red one is not
  # luck of the clock), and each commit explores other programs. FUZZ_SEED overrides it.
  if [[ $cfg == asan ]]; then
    seed=${FUZZ_SEED:-$((0x$(git rev-parse --short=7 HEAD 2>/dev/null || echo 1)))}
    run_gtest "$cfg: tensor_fuzz for ${FUZZ_SECONDS:-60} s" \
      env FUZZ_SECONDS="${FUZZ_SECONDS:-60}" FUZZ_SEED="$seed" "out/$cfg/tests/tensor_fuzz"
  fi
  # GPU languages run without a GPU: op suites again with every kernel on the CL device (PoCL on
  # the CPU, checked against the suites' references); and rendered as HIP, compiled by hiprtc
  # for gfx90a, in processes of their own (ROCm's compiler and PoCL cannot share one)
  if [[ $cfg == release ]]; then
    for suite in $gpu_suites; do
      run_gtest "$cfg: DEVICE=CL $suite" env DEVICE=CL "out/$cfg/tests/$suite"
    done
    for suite in $hip_suites; do
      run_gtest "$cfg: CHECK_RENDER=hip $suite" env DEVICE=CPU CHECK_RENDER=hip "out/$cfg/tests/$suite"
    done
  fi
  # the Python bindings' tests, against the module this build made (not built with sanitizers),
  # every new UOp checked against the spec (SPEC=1)
  if [[ $cfg == release ]]; then
    echo "=== $cfg: pytest tests/python"
    log=$(mktemp)
    SPEC=1 PYTHONPATH="out/$cfg/python" PYTHONDONTWRITEBYTECODE=1 \
      /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    summary=$(tail -1 "$log")
    p=$(grep -oP '[0-9]+(?= passed)' <<<"$summary")
    p=${p:-0}
    f=0
    for n in $(grep -oP '[0-9]+(?= (failed|errors?))' <<<"$summary"); do f=$((f + n)); done
    if [[ $rc -ne 0 && $f -eq 0 ]]; then
      echo "test.sh: pytest exited with $rc without a test failure (a crash, or no tests collected)"
      f=1
    fi
    passed=$((passed + p))
    failed=$((failed + f))
    rm -f "$log"
  fi
  # tinygrad's own op tests (each op's forward and backward against PyTorch), setitem and TinyJit
  # footgun tests (from ../shared, where it is), through the conformance shim
  if [[ $cfg == release ]]; then
    for conformance in test/backend/test_ops.py test/backend/test_setitem.py \
      test/unit/test_jit_footguns.py; do
      echo "=== $cfg: tinygrad $(basename $conformance) (tests/conformance)"
      if [[ -f ../shared/conformance/tinygrad/$conformance ]]; then
        if TC_PYTHON_DIR="$PWD/out/$cfg/python" TC_CONFORMANCE_TEST=$conformance \
          bash tests/conformance/run_tinygrad_ops.sh; then
          passed=$((passed + 1))
        else
          echo "test.sh: tinygrad's $(basename $conformance) had unexpected failures (see above)"
          failed=$((failed + 1))
        fi
      else
        echo "test.sh: ../shared/conformance/tinygrad is absent: tinygrad's $(basename $conformance) is skipped"
      fi
    done
  fi
  # smoke tests of the programs: they run, check their own results, and write what they promise
  json=$(mktemp)
  for cmd in "out/$cfg/demo" "out/$cfg/bench --small --json $json"; do
    echo "=== $cfg: $cmd"
    if $cmd >/dev/null && { [[ $cmd != *bench* ]] || grep -q '"suite": "gemm"' "$json"; }; then
      passed=$((passed + 1))
    else
      echo "test.sh: '$cmd' failed"
      failed=$((failed + 1))
    fi
  done
  rm -f "$json"
  end_stage "$cfg: tests"
done
# the core's line budget (tools/sz.py)
echo "=== line budget of tinycore/ (tools/sz.py)"
if python3 tools/sz.py; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
# no include in the core points up the pipeline (tools/floors.py)
echo "=== floors of tinycore/ (tools/floors.py)"
if python3 tools/floors.py; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
# the fuzz targets, once (ASan + UBSan built in): a finding fails the run
echo "=== fuzz: safetensors header parser for ${FUZZ_SECONDS:-60} s, infer's request parsers, the ONNX importer and the GGUF parser for half that"
if bash tools/fuzz.sh "${FUZZ_SECONDS:-60}"; then
  passed=$((passed + 1))
else
  echo "test.sh: the fuzzer found a failing input (see above)"
  failed=$((failed + 1))
fi
end_stage "line budget, floors, fuzz targets"
echo "=== time by stage"
printf '%s\n' "${stage_times[@]}"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
