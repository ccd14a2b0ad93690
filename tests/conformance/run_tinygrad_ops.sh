#!/usr/bin/env bash
# Runs tinygrad's own op tests (test/backend/test_ops.py, each op's forward and backward compared
# against PyTorch) against tinycore's Python module, through the alias package in shim/.
# Usage: tests/conformance/run_tinygrad_ops.sh /path/to/tinygrad [pytest args, e.g. -k conv]
# Needs Debian's python3-torch, python3-numpy, python3-pytest, and a built module (tools/build.sh
# release builds out/release/python; TC_PYTHON_DIR points elsewhere). Nothing is downloaded.
# Prints the passed/failed/skipped counts, the failing tests, the tests that crashed the
# interpreter (each is left out and the run continues), and the tests out of scope.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tinygrad=${1:?usage: run_tinygrad_ops.sh /path/to/tinygrad-checkout [pytest args]}
shift
src="$tinygrad/test/backend/test_ops.py"
[[ -f $src ]] || { echo "run_tinygrad_ops: $src not found (is $tinygrad a tinygrad checkout?)" >&2; exit 2; }
module_dir=${TC_PYTHON_DIR:-$repo/out/release/python}
[[ -f $module_dir/tinycore/_C.so ]] || { echo "run_tinygrad_ops: no module in $module_dir (run tools/build.sh release)" >&2; exit 2; }

# The test file runs from a scratch folder, so neither tinygrad's package nor its pytest
# configuration (conftest.py, which Debian's pytest 7.2 cannot load) is picked up.
work=$(mktemp -d "${TMPDIR:-/tmp}/tinycore-conformance.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$src" "$work/test_ops.py"
cd "$work"
log="$work/pytest.log"
deselect=()
crashed=()
while true; do
  PYTHONPATH="$here/shim:$module_dir" PYTHONDONTWRITEBYTECODE=1 \
    /usr/bin/python3 -m pytest --noconftest -p no:cacheprovider -v -rfEs "${deselect[@]}" "$@" test_ops.py >"$log" 2>&1
  rc=$?
  # a test that kills the interpreter (an internal check) is named on the last line that
  # started a test without a result; leave it out and run the rest again
  if grep -qE "^=+ .*(passed|failed|skipped|error).* in [0-9.]+s" "$log" || [[ $rc -eq 5 ]]; then break; fi
  last=$(grep -oE "^test_ops.py::[A-Za-z0-9_:]+" "$log" | tail -1)
  if [[ -z $last ]] || [[ " ${deselect[*]} " == *" --deselect=$last "* ]]; then
    cat "$log"
    echo "run_tinygrad_ops: pytest stopped (rc $rc) and no crashing test could be named" >&2
    exit 1
  fi
  crashed+=("${last#test_ops.py::}: $(grep -m1 -E "internal check failed|Fatal Python error" "$log" | cut -c1-160)")
  deselect+=("--deselect=$last")
done
grep -E "^test_ops.py::.* (PASSED|FAILED|SKIPPED|ERROR)" "$log" | sed -E 's/ +\[ *[0-9]+%\]$//'
echo
echo "=== tinygrad test_ops.py against tinycore"
grep -E "^=+ .* in [0-9.]+s" "$log" | tail -1
echo "crashed: ${#crashed[@]}"
echo "--- failing tests:"
grep -E "^(FAILED|ERROR) " "$log" | sed -E 's/^(FAILED|ERROR) test_ops.py::/  /' | cut -c1-220
echo "--- crashed tests (left out of the run):"
for c in "${crashed[@]}"; do echo "  $c"; done
echo "--- out of scope (tests/conformance/out_of_scope.txt):"
grep -vE "^\s*(#|$)" "$here/out_of_scope.txt" | sed 's/^/  /' || echo "  (none)"
# a failure is expected only when Debian's torch fails the test before comparing (torch_failures.txt)
unexpected=0
while read -r t; do
  if ! grep -q "^$t:" "$here/torch_failures.txt"; then
    echo "  unexpected failure: $t"
    unexpected=$((unexpected + 1))
  fi
done < <(grep -oE "^(FAILED|ERROR) test_ops.py::[A-Za-z0-9_:]+" "$log" | sed 's/^[A-Z]* test_ops.py:://')
echo "unexpected failures (not explained by torch 1.13, tests/conformance/torch_failures.txt): $((unexpected + ${#crashed[@]}))"
[[ $unexpected -eq 0 && ${#crashed[@]} -eq 0 ]]
