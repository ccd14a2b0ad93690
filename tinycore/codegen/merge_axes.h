// Merging adjacent loops that every access walks as one. A reduce's: a batchnorm's sum over each
// 20x20 feature map becomes one loop of 400, not two of 20. An elementwise kernel's short innermost
// output loops: an optimizer's update of a 3x3 conv weight is one loop, not a nest ending in 3.
// Fewer, longer loops (less for LLVM to compile), and an innermost loop long enough for full SIMD
// lanes. A rewrite of the lowered kernel, as tinygrad merges adjacent ranges after rangeify.
#pragma once

#include "tinycore/codegen/lower.h"

namespace tc::codegen {

// The lowered kernel with loops merged wherever, once simplified, the merged loop needs no
// division or remainder to index anything (else the pair stays as it was): each reduce's
// innermost loops, from the inside out; an elementwise kernel's innermost output loops while the
// innermost is short. Loops are numbered as lower() numbers them.
LoweredKernel merge_axes(const LoweredKernel& plain);

}  // namespace tc::codegen
