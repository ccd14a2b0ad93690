"""Prints true when every path given is a file, else false (a GN boolean)."""
import os
import sys

print("true" if all(os.path.isfile(p) for p in sys.argv[1:]) else "false")
