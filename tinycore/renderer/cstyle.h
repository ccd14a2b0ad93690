// Renders a linearized kernel as C for a GPU language: CUDA C, OpenCL C or HIP. One renderer
// walks the program; the languages differ only in a small table each (kernel and buffer
// qualifiers, how a thread finds its indices, type names, math functions, float16 support,
// grid limits), as tinygrad's cstyle.py does. The C computes what llvmir.cc's IR computes, bit
// for bit where the CPU is exact: integers wrap, a tensor's integer division by 0 gives 0,
// float -> int casts saturate (NaN gives 0), float max propagates NaN, bfloat16 is its bits
// (rounded to nearest even), float16 rounds once per op (OpenCL without cl_khr_fp16 holds it
// as a float, rounded through vstore_half_rte).
//
// The launch (which loops are grid dimensions, which reductions a work-group shares) comes
// planned (codegen/gpudims.h). Index math is 32-bit when every index value fits, else 64-bit.
// The program must have no SIMD lanes (GPU kernels are lowered with opts that use none).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tinycore/renderer/gpu_launch.h"
#include "tinycore/runtime/device.h"
#include "tinycore/uop/uop.h"

namespace tc::renderer {

struct RenderedKernel {
  std::string source;
  runtime::LaunchSpec launch;
};

// `language` is CUDA, OpenCL or HIP (a GPU Device's language()); throws tc::Error for LLVM.
RenderedKernel render_cstyle(runtime::Language language, const std::string& name,
                             const std::vector<UOpRef>& program, const GpuLaunch& launch);

// The languages render_cstyle knows.
const std::vector<runtime::Language>& cstyle_languages();

}  // namespace tc::renderer
