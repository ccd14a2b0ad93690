// A decode step's attention through a KV cache: one token a row, at a position each row reads
// from a tensor when the step runs.
#pragma once

#include "tinycore/tensor.h"

namespace tc::nn {

// Writes row b's key and value into slot positions[b] of the caches (B, kv_heads, slots,
// head_dim: a head's keys one run of memory), then attends row b's query to slots 0 .. positions[b]. q (B, 1, heads, head_dim),
// k and v (B, 1, kv_heads, head_dim), heads a multiple of kv_heads (grouped-query attention);
// returns (B, heads, 1, head_dim). Every term over the slots is gated by `slot <= position`, so
// the kernels' loops over slots stop at the position (codegen/narrow.h): one TinyJit capture
// serves every position, at a cost that follows it rather than the cache's length.
Tensor attend_cached(Tensor& cache_k, Tensor& cache_v, const Tensor& q, const Tensor& k,
                     const Tensor& v, const Tensor& positions);

}  // namespace tc::nn
