// Prefetches (PREFETCH(index, v): v, with index's line fetched into the cache ahead of its use),
// where a kernel's loads would otherwise wait on memory with nothing to overlap them.
#pragma once

#include "tinycore/codegen/lower.h"
#include "tinycore/codegen/opts.h"

namespace tc::codegen {

// v with the lines that the next row (`row` one step on) reads in v's loads along the reduce's
// loop `inner`, and the line of `at`, v's stash, fetched ahead as v is computed (stash.h): each
// row's first read of memory, and each stash's first store of a line (which reads it), would wait
// with nothing to overlap them. The last row's next lies past the buffers: a prefetch never
// faults.
UOpRef prefetch_next_row(const UOpRef& v, const UOpRef& at, const UOp* row, const UOp* inner);

// Where `opts.prefetch` asks for it: each load in a reduce that reads its own part of a buffer
// for every output (a matvec's weight rows, not the vector they share, which stays in cache) also
// prefetches kPrefetchBytes ahead along the reduce's loops. The hardware's prefetchers stop at
// each 4 KB page, and a matvec streams many: a Llama decode's F16 2048 x 8192 weight went from
// 1.63 to 1.13 ms (20.6 to 29.6 GB/s; 1 KB ahead: 1.37 ms, 16 KB: 1.29).
inline constexpr int64_t kPrefetchBytes = 4096;
LoweredKernel prefetch_streams(const LoweredKernel& plain, const KernelOpts& opts);

}  // namespace tc::codegen
