// LLVM IR's names for tinycore's types and constants, for the LLVM renderer (llvmir.h).
#pragma once

#include <string>

#include "tinycore/dtype.h"
#include "tinycore/uop/uop.h"

namespace tc::renderer {

// Scalar register types. bfloat16 lives as its i16 bits (its math was decomposed to float32).
std::string scalar_type(DType d);
// Memory types: bool is a byte.
std::string memory_type(DType d);
// float16, float32, float64 (bfloat16 is bits)
bool is_llvm_float(DType d);
int bits(DType d);  // 1 for bool
// The suffix of an intrinsic's name for `d` (f32, i64, ...).
std::string type_suffix(DType d);
// A CONST as an LLVM literal: floats by their bits, bfloat16 as its i16 bits.
std::string scalar_literal(const UOp& c);

}  // namespace tc::renderer
