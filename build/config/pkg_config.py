"""Prints a GN scope {cflags, ldflags, libs} for system packages, from pkg-config or llvm-config."""
import shlex
import subprocess
import sys


def run(cmd):
    return shlex.split(subprocess.check_output(cmd, text=True))


def main(argv):
    tool, names = argv[1], argv[2:]
    if tool == "llvm-config":
        cflags = ["-isystem" + f[2:] for f in run([names[0], "--cxxflags"]) if f.startswith("-I")]
        ldflags = run([names[0], "--ldflags"])
        libs = run([names[0], "--link-shared", "--libs"])
    else:
        cflags = [("-isystem" + f[2:]) if f.startswith("-I") else f
                  for f in run(["pkg-config", "--cflags"] + names)]
        ldflags = run(["pkg-config", "--libs-only-L", "--libs-only-other"] + names)
        libs = run(["pkg-config", "--libs-only-l"] + names)
    libs = [l[2:] for l in libs if l.startswith("-l")]
    q = lambda xs: "[" + ", ".join('"%s"' % x for x in xs) + "]"
    print("cflags = %s\nldflags = %s\nlibs = %s" % (q(cflags), q(ldflags), q(libs)))


if __name__ == "__main__":
    main(sys.argv)
