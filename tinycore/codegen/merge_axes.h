// Merging a reduce's adjacent axes that every access walks as one: a batchnorm's sum over each
// 20x20 feature map becomes one loop of 400, not two of 20. Fewer, longer loops, and an innermost
// axis long enough for full SIMD lanes (20 takes only 4 float lanes; 400 takes 16).
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
