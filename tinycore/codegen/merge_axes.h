// Merging adjacent axes that every access walks as one. A reduce's: a batchnorm's sum over each
// 20x20 feature map becomes one loop of 400, not two of 20. An elementwise kernel's short innermost
// output axes: an optimizer's update of a 3x3 conv weight is one loop, not a nest ending in 3.
// Fewer, longer loops (less for LLVM to compile), and an innermost axis long enough for full SIMD
// lanes.
#pragma once

#include "tinycore/uop/uop.h"

namespace tc::codegen {

// The kernel AST with each REDUCE_AXIS's adjacent reduced axes merged wherever the merged loop
// needs no division or remainder to index anything (else the pair stays as it was).
UOpRef merge_reduce_axes(const UOpRef& ast);

// An elementwise kernel AST with its adjacent output axes merged the same way (an optimizer's
// update of a 64x32x3x3 conv weight is one loop of 18432, with full SIMD lanes, not four loops
// whose innermost is 3 long); a reduce's is returned as is.
UOpRef merge_output_axes(const UOpRef& ast);

}  // namespace tc::codegen
