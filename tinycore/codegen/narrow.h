// Narrowing loops to where their work counts. A reduce's, to where its terms can be nonzero: a
// sum of products, one factor a load gated by `lo <= r + e` and `r + e < hi` (a padded input read
// through a window, as a transposed conv reads its gradient), runs its loop `r` from
// max(0, lo - e) to min(n, hi - e) and loses those conditions, which then always hold. A
// transposed 5x5 conv over a 4-padded input computes 10.5 GFLOP rather than 15.1 for the MNIST
// step, and loads ungated. A store's, to the one position an in-place write changes (a KV cache's
// slot).
#pragma once

#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "tinycore/uop/uop.h"

namespace tc::codegen {

// Whether `n` reads any of `any` (loops, loads).
bool depends_on(const UOpRef& n, const absl::flat_hash_set<const UOp*>& any);

// The lowered kernel `sink` (simplified) with every such loop narrowed: RANGE r becomes
// lo + RANGE(hi - lo), the conditions it satisfies become true. A loop is narrowed only when
// every reduce over it is an ADD whose terms are zero outside the same bounds (a term whose
// other factor is infinite or NaN there, NaN before, is left out: as PyTorch's transposed conv
// never multiplies the padding).
UOpRef narrow_reduce_loops(const UOpRef& sink);

// An output loop r narrowed where every store's value is a number past a bound on r: each
// value, with a condition `a·r + e < k` false (k free of the kernel's inner loops and lanes), is
// a constant once the reduces that condition gates in all their terms are their identity (a
// decode step's attention scores over the slots of its KV cache past the position it is at). r
// then runs to that bound, and a loop after it stores the numbers in the rest: the kernel writes
// what it wrote before, at a cost that follows the bound. For CPU kernels, whose output loops
// are loops (not a GPU's grid); the kernel unchanged when no loop narrows so. The loop after r is
// numbered renderer::kRestLoop + r's number: when the cores split r, they split it too.
UOpRef narrow_output_loops(const UOpRef& sink);

// A write in place at one position of an output loop r: STORE(out[i], where(c, v, out[i])) with
// c holding at r + e == k alone (a KV cache's slot for the new token, k a loaded position). Every
// other r writes back what it read, so r goes: it becomes k - e clamped into its range, where c
// then holds exactly when k - e is in range (out of range, the store writes back what it read).
// The loop's number and the kernel without it; nullopt for any other kernel.
std::optional<std::pair<int64_t, UOpRef>> narrow_selected_store(const UOpRef& sink);

// A load gated by where its block of SIMD lanes lies along the lane axis (a cat's piece, a pad's
// edge: lanes 16r + lane inside [256, 512)), with every edge a multiple of the lanes, so that the
// gate holds for all lanes of a block or for none, r in [lo, hi): its index simplified under that,
// as lo + r' with r' >= 0, where the clamps a pad put around the index of a reshaped source, and
// the divisions by its rows, fold (r' = r - lo put back). The lanes then read consecutive
// elements: a cat of transposed heads (a q, k, v gradient) was copied element by element.
UOpRef narrow_gated_loads(const UOpRef& sink);
inline constexpr int64_t kScratchLoop = int64_t{1} << 40;  // a loop number no kernel has

// How many times the loop `range` runs on average over the outer loops its end reads (a narrowed
// loop's length varies with them); its end when that is a number. For counting a kernel's flops.
double mean_trips(const UOp& range);

}  // namespace tc::codegen
