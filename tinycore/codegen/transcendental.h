// Transcendental functions as ALU UOps, as tinygrad's codegen/transcendental.py: EXP2, LOG2 and
// SIN of float32 are rewritten (by decompose) into integer bit manipulation and polynomial
// arithmetic, so the renderer needs no libm intrinsic for them.
//
// The float32 functions do their arithmetic in float64 (as glibc's expf/logf/sinf do), which makes
// them faithful to about 0.5 ulp and robust to the fast-math flags of the renderer:
//   exp2: 2^x = 2^k * 2^r with k = trunc(x), r in (-1, 1); 2^r by a degree-11 polynomial, 2^k by
//         building the float64 exponent bits; the final float64 -> float32 rounding gives IEEE
//         overflow to inf and gradual underflow to denormals and 0.
//   log2: x = m * 2^e with m in [sqrt(1/2), sqrt(2)) from the float64 bits (float32 denormals are
//         normal in float64); log(m) = 2 atanh((m-1)/(m+1)) by an odd series.
//   sin:  x * 2/pi mod 4 by Payne-Hanek reduction in 64-bit integer arithmetic (a 96-bit window of
//         the bits of 2/pi chosen by the exponent), for every |x| >= 0.5, then sin/cos polynomials
//         on |r| <= pi/4.
// float64 EXP2 and LOG2 use the same reductions with float64 polynomials of higher degree (2^k
// applied in two steps so that float64 denormals come out right); float64 SIN (which needs a
// double-double reduction) keeps the renderer's intrinsic. float16/bfloat16 are computed in
// float32 (decompose widens them first).
#pragma once

#include "tinycore/uop/pattern_matcher.h"

namespace tc::codegen {

// Rules rewriting float32 EXP2, LOG2 and SIN and float64 EXP2 and LOG2 into ALU UOps. Empty when
// the environment variable TRANSCENDENTAL=0 (read once): then the renderer's intrinsics compute
// them.
const PatternMatcher& transcendental_rules();

// The float32 expansions themselves (x must be a float32 node).
UOpRef xexp2(const UOpRef& x);
UOpRef xlog2(const UOpRef& x);
UOpRef xsin(const UOpRef& x);

}  // namespace tc::codegen
