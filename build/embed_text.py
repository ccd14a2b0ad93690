"""Writes a C++ header holding a text file as a string constant (a config built into a program).

Usage: embed_text.py INPUT OUTPUT NAME  ->  inline constexpr const char* NAME = R"...(...)...";
"""
import sys

src, out, name = sys.argv[1:4]
text = open(src, encoding="utf-8").read()
delim = "tcembed"
if f'){delim}"' in text:
  sys.exit(f"embed_text.py: {src} contains the raw-string delimiter ){delim}\"")
with open(out, "w", encoding="utf-8") as f:
  f.write(f"// Generated from {src} by build/embed_text.py; do not edit.\n#pragma once\n\n")
  f.write(f'inline constexpr const char* {name} = R"{delim}({text}){delim}";\n')
