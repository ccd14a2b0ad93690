// gpudims: where a GPU kernel's loops go in its launch, as tinygrad's gpudims pass does. The
// C-style renderer reads the plan (renderer/gpu_launch.h).
//
// The outermost output loops (numbered below `output_dims`, with constant trip counts, each
// enclosing all that follows it) become the launch grid, from the innermost: it is dimension x
// (neighbouring threads touch neighbouring elements), the next y, and the rest merge into z
// (their indices split by division). Work-groups hold at most 256 threads, in powers of two, x
// taking its share first; each thread checks its index against the loop's end where the grid is
// rounded up to whole work-groups. A loop that would need more work-groups than its dimension
// allows (CUDA's and HIP's y and z: 65535) stays a loop, as do all other loops.
//
// Grouped reductions: where a kernel's reductions are long (256 iterations or more) or its
// outputs few (at most 2048, reductions of 16 or more), and at most 65536 outputs, a work-group
// of up to 256 threads shares each output: the output loops become work-group ids only, and each
// reduce nest (a top-level reduce loop and those directly nested in it) runs its innermost loop
// strided over the threads (thread i takes iterations i, i + G, ...: its neighbours read
// neighbouring elements). After the nest the partial results meet in shared memory and are
// combined in a tree with the reduce's own op, between barriers that every thread reaches
// (nothing around them depends on the thread); all threads read the total and only thread 0
// stores. The launch's local size is then {G, 1, 1}. Other kernels (a reduction nested in
// another's loop, a store inside a loop) keep a thread per output.
#pragma once

#include <string>
#include <vector>

#include "tinycore/renderer/cstyle.h"
#include "tinycore/renderer/gpu_launch.h"
#include "tinycore/runtime/device.h"
#include "tinycore/uop/uop.h"

namespace tc::codegen {

// The launch of a linear `program` (loops numbered below `output_dims` are output loops) in
// `language`, whose grid dimensions take at most its dialect's max_groups work-groups.
renderer::GpuLaunch plan_gpu_launch(const std::vector<UOpRef>& program, int output_dims,
                                    runtime::Language language);

// The program planned and rendered in a GPU language (what a GPU device's kernels go through).
renderer::RenderedKernel render_gpu(runtime::Language language, const std::string& name,
                                    const std::vector<UOpRef>& program, int output_dims);

}  // namespace tc::codegen
