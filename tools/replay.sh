#!/usr/bin/env bash
# Kernel replay check: builds BASE and this work tree, runs the same workloads on both with
# KERNEL_LOG (every kernel's AST hash, name and source) and lists the kernels that differ.
# A refactor lands with none; a change meant to change kernels lists them in its commit.
# Usage: tools/replay.sh BASE        (a commit; REPLAY_DIR: where BASE's tree and logs go)
#   Workloads: every test binary both trees have (the op suites), bench's suites (--small), and
#   a few steps of training MNIST, ResNet and GPT; on CPU, and the op suites on CL where PoCL is.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: tools/replay.sh BASE}
base_sha=$(git rev-parse --verify "$base^{commit}")
dir=${REPLAY_DIR:-${TMPDIR:-/tmp}/tinycore-replay}
mkdir -p "$dir"

# BASE's tree, with the KERNEL_LOG knob added where BASE predates it
if [[ ! -d $dir/base ]] || [[ $(cat "$dir/base.sha" 2>/dev/null) != "$base_sha" ]]; then
  git worktree remove --force "$dir/base" 2>/dev/null || rm -rf "$dir/base"
  git worktree prune
  git worktree add --detach "$dir/base" "$base_sha" >/dev/null
  if ! grep -q KERNEL_LOG "$dir/base/tinycore/codegen/kernel.cc"; then
    knob=$(git log --reverse --format=%H -S KERNEL_LOG -- tinycore/codegen/kernel.cc | head -1)
    git -C "$dir/base" cherry-pick --no-commit "$knob" >/dev/null ||
      { echo "replay.sh: cannot add the KERNEL_LOG knob ($knob) to $base" >&2; exit 1; }
    git -C "$dir/base" commit -q -m "replay: KERNEL_LOG" --no-verify
  fi
  echo "$base_sha" >"$dir/base.sha"  # a second check against BASE reuses its tree and build
fi

failed() { echo "replay: $1 failed in $PWD (its kernels up to the failure are compared)" >&2; }

# run_workloads TREE LOG: every workload of TREE's release build, its kernels appended to LOG
run_workloads() {
  local tree=$1 log=$2 work
  work=$(mktemp -d)
  rm -f "$log"
  (
    cd "$tree"
    # an empty disk cache: every kernel is built (and logged) once
    export KERNEL_LOG=$log CHECK_RENDER= TC_CACHE_DIR=$work/cache
    for t in $suites; do
      echo "replay: $t" >&2
      # BEAM's searches build what their timings pick: not the same twice
      env DEVICE=CPU "out/release/tests/$t" --gtest_brief=1 --gtest_filter='-*Beam*:*Search*' \
        >/dev/null 2>&1 || failed "$t"
      if [[ " $cl_suites " == *" $t "* ]]; then
        env DEVICE=CL "out/release/tests/$t" --gtest_brief=1 >/dev/null 2>&1 || failed "CL $t"
      fi
    done
    echo "replay: bench" >&2
    DEVICE=CPU out/release/bench --small --no-table \
      --suite gemm,conv,elementwise,reduce,softmax,jit,model >/dev/null 2>&1 || failed bench
    for config in mnist resnet gpt; do
      echo "replay: train $config" >&2
      out/release/train --config "configs/$config.yaml" --device CPU --quiet train.max_steps=3 \
        train.eval_every=3 data.limit=1024 log.dir="$work/runs" >/dev/null 2>&1 || failed "train $config"
    done
  )
  rm -rf "$work"
}

echo "replay.sh: building $base ($base_sha) in $dir/base and this tree" >&2
bash "$dir/base/tools/build.sh" release >/dev/null
bash tools/build.sh release >/dev/null
# the same workloads on both: test binaries both trees have
suites=$(comm -12 <(ls "$dir/base/out/release/tests" | grep '_test$' | sort) \
  <(ls out/release/tests | grep '_test$' | sort) | tr '\n' ' ')
cl_suites="index_test math_test jit_test"
run_workloads "$dir/base" "$dir/base.log"
run_workloads "$PWD" "$dir/head.log"
/usr/bin/python3 tools/replay_diff.py "$dir/base.log" "$dir/head.log"
