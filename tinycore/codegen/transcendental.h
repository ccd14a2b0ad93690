// Transcendental functions as ALU UOps, as tinygrad's codegen/transcendental.py: EXP2, EXP, LOG2
// and SIN of float32 are rewritten (by decompose) into integer bit manipulation and polynomial
// arithmetic, so the renderer needs no libm intrinsic for them. All stay within 1 ulp or so, and
// are robust to the renderer's fast-math flags:
//   exp2: 2^x = 2^k * 2^r with k = round(x), r = x - k exact; 2^r by a degree-7 polynomial in
//         float32 itself, 2^k in two factors built from exponent bits (IEEE overflow to inf and
//         gradual underflow to denormals and 0).
//   exp:  the same with k = round(x / ln 2) and r = x - k ln 2 by Cody-Waite (ln 2 in two parts,
//         subtracted by fused multiply-adds), so e^x is not 2^(x log2 e) with x log2 e rounded.
//   log2: x = m * 2^e with m in [sqrt(1/2), sqrt(2)) from the float64 bits (float32 denormals are
//         normal in float64); log(m) = 2 atanh((m-1)/(m+1)) by an odd series, in float64.
//   sin:  x * 2/pi mod 4 by Payne-Hanek reduction in 64-bit integer arithmetic (a 96-bit window of
//         the bits of 2/pi chosen by the exponent), for every |x| >= 0.5, then sin/cos polynomials
//         on |r| <= pi/4.
// float64 EXP2, EXP and LOG2 use the same reductions with float64 polynomials of higher degree;
// float64 SIN (which needs a double-double reduction) keeps the renderer's intrinsic.
// float16/bfloat16 are computed in float32 (decompose widens them first).
#pragma once

#include "tinycore/uop/pattern_matcher.h"

namespace tc::codegen {

// Rules rewriting float32 EXP2, EXP, LOG2 and SIN and float64 EXP2, EXP and LOG2 into ALU UOps.
// Empty when the environment variable TRANSCENDENTAL=0 (read once): then the renderer's intrinsics
// compute them.
const PatternMatcher& transcendental_rules();

// The float32 expansions themselves (x must be a float32 node).
UOpRef xexp2(const UOpRef& x);
UOpRef xlog2(const UOpRef& x);
UOpRef xsin(const UOpRef& x);

}  // namespace tc::codegen
