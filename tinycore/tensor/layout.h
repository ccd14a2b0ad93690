// Layout copies for the products: a tensor read through a contiguous copy in which one axis is
// cut into blocks that are innermost in memory, so a kernel's SIMD lanes along that axis read
// one stream of memory per block (not one element every row), and the view back keeps the
// tensor's shape and values. Conv weights (blocks of output channels), matmul right-hand sides
// (blocks of columns) and channels-last activations are all this one copy.
#pragma once

#include <cstdint>

#include "tinycore/tensor.h"

namespace tc {

// `t` read from a contiguous copy laid out as (size/block, the other axes in order, block) for
// axis `axis` of length `size` (block must divide it; block == size moves the axis last).
Tensor blocked_copy(const Tensor& t, int axis, int64_t block);

}  // namespace tc
