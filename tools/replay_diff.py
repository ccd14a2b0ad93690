#!/usr/bin/env python3
"""Compares two KERNEL_LOG files (tools/replay.sh): for every AST both runs built on a device, the
kernels' names and sources must be the same. Prints each kernel that differs (with the start of a
diff) and a summary; exits 1 when any differs. An AST only one run built (a test the other tree
lacks, a workload that failed, or a change of what the log's AST is) is looked for by its kernel:
HEAD's kernels that BASE built under another AST are the same kernels; the others are listed as
new, each against a BASE kernel of its name where there is one."""
import difflib
import sys
from collections import defaultdict


def read(path):
    """{(ast hash, device): {(name, source)}} of one log."""
    kernels = defaultdict(set)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for record in text.split("@@ kernel ")[1:]:
        head, _, rest = record.partition("\n")
        source = rest.rsplit("\n@@ end\n", 1)[0]
        ast, device, name = head.split(" ", 2)
        kernels[(ast, device)].add((name, source))
    return kernels


def show_diff(old, new):
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), "base", "head", lineterm="", n=1)
    for line in list(diff)[:20]:
        print("   ", line)


def new_kernels(base, head):
    """HEAD's kernels of ASTs BASE did not build that BASE did not build under any AST either."""
    built = {(device, name, source) for (ast, device), ks in base.items() for name, source in ks}
    by_name = {(device, name): source for device, name, source in built}
    new = sorted({(device, name, source) for (ast, device) in head.keys() - base.keys()
                  for name, source in head[(ast, device)]} - built)
    for device, name, source in new:
        print(f"new: {device} {name}" + ("" if (device, name) in by_name else " (no base kernel of its name)"))
        if (device, name) in by_name:
            show_diff(by_name[(device, name)], source)
    return new


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: replay_diff.py BASE_LOG HEAD_LOG")
    base, head = read(sys.argv[1]), read(sys.argv[2])
    both = sorted(base.keys() & head.keys())
    # an AST built with several opts (the opts and BEAM suites) may be built with more of them in
    # one tree (a test the other lacks): that is no difference, unless a kernel changed
    differ = [k for k in both if not (base[k] <= head[k] or head[k] <= base[k])]
    for ast, device in differ:
        old, new = sorted(base[(ast, device)]), sorted(head[(ast, device)])
        names = " ".join(sorted({n for n, _ in new}))
        print(f"differs: {device} {names} (AST {ast}; base: {' '.join(sorted({n for n, _ in old}))})")
        changed_old, changed_new = sorted(set(old) - set(new)), sorted(set(new) - set(old))
        show_diff(changed_old[0][1], changed_new[0][1])
    new = new_kernels(base, head)
    print(f"replay: {len(both)} ASTs built by both, {len(differ)} differ; "
          f"{len(base.keys() - head.keys())} only in base, {len(head.keys() - base.keys())} only in head, "
          f"whose kernels are {len(new)} new, the rest built by base under another AST")
    sys.exit(1 if differ or new else 0)


if __name__ == "__main__":
    main()
