// CHECK_RENDER=cuda,hip,opencl: every kernel tinycore builds, on any device, is also lowered as
// the GPU devices lower it, rendered in each listed language and compiled by that language's
// compiler: NVRTC for sm_90 (CUDA), hiprtc for gfx90a (HIP), the CL device's (OpenCL). None of
// them needs a GPU, so the test suite checks every kernel it makes in every GPU language on any
// machine. A kernel that does not render or compile throws tc::Error naming the kernel, the
// language and the compiler's message; a listed language whose compiler is missing throws
// saying what is missing.
#pragma once

#include <string>
#include <vector>

#include "tinycore/codegen/lower.h"
#include "tinycore/renderer/cstyle.h"
#include "tinycore/uop/uop.h"

namespace tc::codegen {

// The languages CHECK_RENDER lists (empty when unset); throws for an unknown one.
const std::vector<runtime::Language>& render_check_languages();

// Renders and compiles a lowered kernel in every listed language, once per AST. CUDA kernels are
// compiled in batches (NVRTC's cost is mostly per program): an error may surface at a later
// kernel's check, or at finish_render_checks, still naming the kernel that failed.
void check_render(const LoweredKernel& plain);

// Compiles the CUDA kernels check_render has not compiled yet; throws like check_render. The test
// suites' main calls it after the tests; a program that ends without it leaves its last batch
// (under 64 kernels) unchecked.
void finish_render_checks();

// Compiles kernel `name`, rendered in `language`, with that language's GPU-less compiler (what
// check_render does per language); returns the compiler's output.
std::string compile_offline(runtime::Language language, const std::string& name,
                            const renderer::RenderedKernel& kernel);

}  // namespace tc::codegen
