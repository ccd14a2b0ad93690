#!/usr/bin/env python3
"""Checks that no include in tinycore/ points up the pipeline: each part of the core is on a floor,
and a file may include its own floor and those below it. Prints each upward include and exits 1
when there is one (tools/test.sh runs it in CI)."""
import os
import re
import sys

# From the bottom: what each floor may build on is everything listed before it.
FLOORS = [
    ["dtype", "error", "helpers"],  # the vocabulary
    ["runtime"],  # devices, memory, compilers
    ["uop"],  # the IR
    ["schedule", "renderer"],  # graph -> kernels; linear program -> source
    ["codegen"],  # kernel AST -> compiled kernel
    ["engine"],  # running schedules
    ["gradient"],  # autograd rules on the graph
    ["tensor"],  # the lazy Tensor front-end
    ["variable", "jit", "dist"],  # on top of the Tensor
]
LEVEL = {part: level for level, parts in enumerate(FLOORS) for part in parts}

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def part_of(path):
    """The floor's part of a path under tinycore/: its folder, or its file name's stem."""
    first = path.split("/")[0]
    return os.path.splitext(first)[0]


def main():
    bad, unknown = [], set()
    core = os.path.join(root, "tinycore")
    for folder, _, files in os.walk(core):
        for name in sorted(files):
            if not name.endswith((".h", ".cc")):
                continue
            path = os.path.relpath(os.path.join(folder, name), core)
            me = part_of(path)
            for line in open(os.path.join(folder, name), encoding="utf-8"):
                m = re.match(r'#include "tinycore/([^"]+)"', line)
                if not m:
                    continue
                it = part_of(m.group(1))
                for p in (me, it):
                    if p not in LEVEL:
                        unknown.add(p)
                if me in LEVEL and it in LEVEL and LEVEL[it] > LEVEL[me]:
                    bad.append(f"  tinycore/{path} ({me}) includes tinycore/{m.group(1)} ({it})")
    if unknown:
        print("floors: parts of tinycore/ on no floor (add them to tools/floors.py):",
              ", ".join(sorted(unknown)))
    if bad:
        print("floors: includes that point up the pipeline:")
        print("\n".join(bad))
    else:
        print(f"floors: no upward include in tinycore/ ({len(FLOORS)} floors)")
    sys.exit(1 if bad or unknown else 0)


if __name__ == "__main__":
    main()
