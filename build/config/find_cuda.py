"""Prints the CUDA toolkit's root when its NVRTC and driver API headers are there, else nothing."""
import os
import sys


def main(argv):
    candidates = argv[1:] or [os.environ.get("CUDA_PATH", ""), "/usr/local/cuda"]
    for root in candidates:
        if root and all(os.path.isfile(os.path.join(root, "include", h))
                        for h in ("cuda.h", "nvrtc.h")):
            print(os.path.normpath(root))
            return


if __name__ == "__main__":
    main(sys.argv)
