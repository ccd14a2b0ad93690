// visit_dtype: code that is a template over the element type, called with the host type of a
// dtype (in place of a switch over Scalar in each caller).
#pragma once

#include <cstdint>

#include "tinycore/dtype.h"
#include "tinycore/error.h"

namespace tc {

// A bfloat16 on the host: its 16 bits, the top half of a float32 (no C++ type holds it).
struct BFloat16Bits {
  uint16_t bits;
};

// f.template operator()<T>() with T the host type of `d`'s scalar: bool, int8_t .. int64_t,
// uint8_t .. uint64_t, _Float16, BFloat16Bits, float or double (int64_t for index); f returns
// one type for every T. Throws tc::Error for void.
template <class F>
decltype(auto) visit_dtype(DType d, F&& f) {
  // clang-format off
  switch (d.scalar) {
    case Scalar::Bool: return f.template operator()<bool>();
    case Scalar::Int8: return f.template operator()<int8_t>();
    case Scalar::Int16: return f.template operator()<int16_t>();
    case Scalar::Int32: return f.template operator()<int32_t>();
    case Scalar::Int64: case Scalar::Index: return f.template operator()<int64_t>();
    case Scalar::UInt8: return f.template operator()<uint8_t>();
    case Scalar::UInt16: return f.template operator()<uint16_t>();
    case Scalar::UInt32: return f.template operator()<uint32_t>();
    case Scalar::UInt64: return f.template operator()<uint64_t>();
    case Scalar::Float16: return f.template operator()<_Float16>();
    case Scalar::BFloat16: return f.template operator()<BFloat16Bits>();
    case Scalar::Float32: return f.template operator()<float>();
    case Scalar::Float64: return f.template operator()<double>();
    case Scalar::Void: break;
  }
  // clang-format on
  fail("visit_dtype: dtype %s has no host type", d.name());
}

}  // namespace tc
