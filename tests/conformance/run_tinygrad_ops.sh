#!/usr/bin/env bash
# Runs tinygrad's own op tests (test/backend/test_ops.py, each op's forward and backward compared
# against PyTorch) against tinycore's Python module, through the alias package in shim/.
# Usage: tests/conformance/run_tinygrad_ops.sh [/path/to/tinygrad] [pytest args, e.g. -k conv]
# The path defaults to ../shared/conformance/tinygrad beside the repository; TC_CONFORMANCE_TEST
# names another test file in it (test/backend/test_setitem.py, which needs no PyTorch).
# Needs Debian's python3-torch, python3-numpy, python3-pytest, and a built module (tools/build.sh
# release builds out/release/python; TC_PYTHON_DIR points elsewhere). Nothing is downloaded.
# Prints the passed/failed/skipped counts, the failing tests, the tests that crashed the
# interpreter (each is left out and the run continues), and the tests out of scope.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tinygrad=${1:-$repo/../shared/conformance/tinygrad}
shift || true
src="$tinygrad/${TC_CONFORMANCE_TEST:-test/backend/test_ops.py}"
name=$(basename "$src")
[[ -f $src ]] || { echo "run_tinygrad_ops: $src not found (is $tinygrad a tinygrad checkout?)" >&2; exit 2; }
module_dir=${TC_PYTHON_DIR:-$repo/out/release/python}
[[ -f $module_dir/tinycore/_C.so ]] || { echo "run_tinygrad_ops: no module in $module_dir (run tools/build.sh release)" >&2; exit 2; }

# The test file runs from a scratch folder, so neither tinygrad's package nor its pytest
# configuration (conftest.py, which Debian's pytest 7.2 cannot load) is picked up.
work=$(mktemp -d "${TMPDIR:-/tmp}/tinycore-conformance.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$src" "$work/$name"
cd "$work"
log="$work/pytest.log"
deselect=()
crashed=()
while true; do
  PYTHONPATH="$here/shim:$module_dir" PYTHONDONTWRITEBYTECODE=1 \
    /usr/bin/python3 -m pytest --noconftest -p no:cacheprovider -v -rfEs "${deselect[@]}" "$@" "$name" >"$log" 2>&1
  rc=$?
  # a test that kills the interpreter (an internal check) is named on the last line that
  # started a test without a result; leave it out and run the rest again
  if grep -qE "^=+ .*(passed|failed|skipped|error).* in [0-9.]+s" "$log" || [[ $rc -eq 5 ]]; then break; fi
  last=$(grep -oE "^$name::[A-Za-z0-9_:]+" "$log" | tail -1)
  if [[ -z $last ]] || [[ " ${deselect[*]} " == *" --deselect=$last "* ]]; then
    cat "$log"
    echo "run_tinygrad_ops: pytest stopped (rc $rc) and no crashing test could be named" >&2
    exit 1
  fi
  crashed+=("${last#"$name"::}: $(grep -m1 -E "internal check failed|Fatal Python error" "$log" | cut -c1-160)")
  deselect+=("--deselect=$last")
done
grep -E "^$name::.* (PASSED|FAILED|SKIPPED|ERROR)" "$log" | sed -E 's/ +\[ *[0-9]+%\]$//'
echo
echo "=== tinygrad $name against tinycore"
grep -E "^=+ .* in [0-9.]+s" "$log" | tail -1
echo "crashed: ${#crashed[@]}"
echo "--- failing tests:"
grep -E "^(FAILED|ERROR) " "$log" | sed -E "s/^(FAILED|ERROR) $name::/  /" | cut -c1-220
echo "--- crashed tests (left out of the run):"
for c in "${crashed[@]}"; do echo "  $c"; done
echo "--- out of scope (tests/conformance/out_of_scope.txt):"
grep -vE "^\s*(#|$)" "$here/out_of_scope.txt" | sed 's/^/  /' || echo "  (none)"
echo "--- known open defects (tests/conformance/open.txt):"
grep -vE "^\s*(#|$)" "$here/open.txt" | sed 's/^/  /' || echo "  (none)"
# a failure is expected only when Debian's torch fails the test before comparing
# (torch_failures.txt), when the test is out of scope, or when it is a known open defect (open.txt)
echo "--- tinygrad limitations tinycore does not have (tests/conformance/better.txt):"
grep -vE "^\s*(#|$)" "$here/better.txt" | sed 's/^/  /' || echo "  (none)"
# The traceback pytest printed for test `Class::name` (its section of the FAILURES report).
failure_of() {
  awk -v head="${1/::/.}" '/^___+ .* ___+$/ { on = (index($0, " " head " ") > 0) } on' "$log"
}
unexpected=0
while read -r t; do
  # (grep reads the files itself: behind a pipe, grep -q exiting early fails cat under pipefail)
  if better=$(grep -m1 "^$t |" "$here/better.txt"); then
    # it must fail at the limitation's assertion, not anywhere else
    want=$(echo "$better" | awk -F' [|] ' '{print $2}')
    if ! failure_of "$t" | sed -E 's/^E +/E /' | grep -qF "E ${want}"; then
      echo "  unexpected failure: $t (better.txt says it fails with: $want)"
      unexpected=$((unexpected + 1))
    fi
  elif ! grep -q "^$t:" "$here/torch_failures.txt" "$here/out_of_scope.txt" "$here/open.txt"; then
    echo "  unexpected failure: $t"
    unexpected=$((unexpected + 1))
  fi
done < <(grep -oE "^(FAILED|ERROR) $name::[A-Za-z0-9_:]+" "$log" | sed "s/^[A-Z]* $name:://")
# a file that fails to import or collect runs no test at all
if grep -qE "^ERROR $name( |$)" "$log"; then
  echo "  unexpected failure: $name could not be collected"
  unexpected=$((unexpected + 1))
fi
# an open defect that passes now is done: its line must go (a strict expected failure)
while read -r t; do
  if grep -q "^$t:" "$here/open.txt"; then
    echo "  passes now, remove it from tests/conformance/open.txt: $t"
    unexpected=$((unexpected + 1))
  fi
  # a test of better.txt passes only where tinycore has tinygrad's limitation again
  if grep -q "^$t |" "$here/better.txt"; then
    echo "  passes, so tinycore has tinygrad's limitation again (tests/conformance/better.txt): $t"
    unexpected=$((unexpected + 1))
  fi
done < <(grep -oE "^$name::[A-Za-z0-9_:]+ PASSED" "$log" | sed -E "s/^$name::([A-Za-z0-9_:]+) PASSED/\1/")
echo "unexpected results (not explained by torch 1.13, tests/conformance/torch_failures.txt): $((unexpected + ${#crashed[@]}))"
[[ $unexpected -eq 0 && ${#crashed[@]} -eq 0 ]]
