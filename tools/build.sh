#!/usr/bin/env bash
# Builds one output folder: release (-O2), debug (-O0 -g) or asan (ASan + UBSan).
# Usage: tools/build.sh [release|debug|asan] [ninja targets...]
set -euo pipefail
cd "$(dirname "$0")/.."
cfg="${1:-release}"
shift || true
case "$cfg" in
  release) args='is_debug=false' ;;
  debug) args='is_debug=true' ;;
  asan) args='use_sanitizers=true' ;;
  *) echo "build.sh: unknown config '$cfg' (release, debug or asan)" >&2; exit 2 ;;
esac
[[ -f "out/$cfg/build.ninja" ]] || gn gen "out/$cfg" --args="$args"
ninja -C "out/$cfg" "$@"
