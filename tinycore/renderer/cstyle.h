// Renders a linearized kernel as C for a GPU language: CUDA C, OpenCL C or HIP. One renderer
// walks the program; the languages differ only in a small table each (kernel and buffer
// qualifiers, how a thread finds its indices, type names, math functions, float16 support,
// grid limits), as tinygrad's cstyle.py does. The C computes what llvmir.cc's IR computes, bit
// for bit where the CPU is exact: integers wrap, a tensor's integer division by 0 gives 0,
// float -> int casts saturate (NaN gives 0), float max propagates NaN, bfloat16 is its bits
// (rounded to nearest even), float16 rounds once per op (OpenCL without cl_khr_fp16 holds it
// as a float, rounded through vstore_half_rte).
//
// GPU codegen: the outermost output loops (numbered below `output_dims`, with constant trip
// counts, each enclosing all that follows it) become the launch grid, from the innermost: it
// is dimension x (neighbouring threads touch neighbouring elements), the next y, and the rest
// merge into z (their indices split by division). Work-groups hold at most 256 threads, in
// powers of two, x taking its share first; each thread checks its index against the loop's
// end where the grid is rounded up to whole work-groups. A loop that would need more
// work-groups than its dimension allows (CUDA's and HIP's y and z: 65535) stays a loop, as do
// all other loops. Index math is 32-bit when every index value fits, else 64-bit. The program
// must have no SIMD lanes (GPU kernels are lowered with opts that use none).
//
// Grouped reductions: where a kernel's reductions are long (256 iterations or more) or its
// outputs few (at most 2048, reductions of 16 or more), and at most 65536 outputs, a
// work-group of up to 256 threads shares each output: the output loops become work-group ids
// only, and each reduce nest (a top-level reduce loop and those directly nested in it) runs
// its innermost loop strided over the threads (thread i takes iterations i, i + G, ...: its
// neighbours read neighbouring elements). After the nest the partial results meet in shared
// memory and are combined in a tree with the reduce's own op, between barriers that every
// thread reaches (nothing around them depends on the thread); all threads read the total and
// only thread 0 stores. The launch's local size is then {G, 1, 1}. Other kernels (a reduction
// nested in another's loop, a store inside a loop) keep a thread per output.
#pragma once

#include <string>
#include <vector>

#include "tinycore/runtime/device.h"
#include "tinycore/uop/uop.h"

namespace tc::renderer {

struct RenderedKernel {
  std::string source;
  runtime::LaunchSpec launch;
};

// `language` is CUDA, OpenCL or HIP (a GPU Device's language()); throws tc::Error for LLVM.
RenderedKernel render_cstyle(runtime::Language language, const std::string& name,
                             const std::vector<UOpRef>& program, int output_dims);

// The languages render_cstyle knows.
const std::vector<runtime::Language>& cstyle_languages();

}  // namespace tc::renderer
