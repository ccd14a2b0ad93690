"""tinygrad.renderer: tinycore renders LLVM IR on the CPU."""
