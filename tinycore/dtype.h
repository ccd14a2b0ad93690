// Scalar, vector and pointer dtypes; tinygrad's promotion lattice and casting rules.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace tc {

enum class Scalar : uint8_t {
  Void,
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Index,  // the integer type of index arithmetic in generated code (64-bit)
};

struct DType {
  Scalar scalar = Scalar::Void;
  uint8_t count = 1;  // vector width, for codegen
  bool ptr = false;   // a pointer to `scalar` (kernel arguments)

  constexpr bool operator==(const DType&) const = default;
  constexpr DType base() const { return DType{scalar, 1, false}; }
  constexpr DType vec(int n) const { return DType{scalar, static_cast<uint8_t>(n), ptr}; }
  constexpr DType as_ptr() const { return DType{scalar, count, true}; }

  int itemsize() const;  // bytes of one scalar element
  std::string name() const;
  int priority() const;  // tie-break of least_upper_dtype, as in tinygrad
};

template <typename H>
H AbslHashValue(H h, const DType& d) {
  return H::combine(std::move(h), d.scalar, d.count, d.ptr);
}

namespace dtypes {
inline constexpr DType void_{Scalar::Void};
inline constexpr DType bool_{Scalar::Bool};
inline constexpr DType int8{Scalar::Int8};
inline constexpr DType int16{Scalar::Int16};
inline constexpr DType int32{Scalar::Int32};
inline constexpr DType int64{Scalar::Int64};
inline constexpr DType uint8{Scalar::UInt8};
inline constexpr DType uint16{Scalar::UInt16};
inline constexpr DType uint32{Scalar::UInt32};
inline constexpr DType uint64{Scalar::UInt64};
inline constexpr DType float16{Scalar::Float16};
inline constexpr DType bfloat16{Scalar::BFloat16};
inline constexpr DType float32{Scalar::Float32};
inline constexpr DType float64{Scalar::Float64};
inline constexpr DType index{Scalar::Index};
inline constexpr DType default_float = float32;
inline constexpr DType default_int = int32;

// Every dtype a Tensor can hold, in tinygrad's order.
const std::vector<DType>& all();

bool is_float(DType d);
bool is_int(DType d);  // signed or unsigned integers, and index
bool is_unsigned(DType d);
inline bool is_bool(DType d) { return d.scalar == Scalar::Bool; }

double min(DType d);  // smallest finite value
double max(DType d);  // largest finite value

DType from_name(const std::string& name);  // "float32", "half", "int", ... ; throws tc::Error
}  // namespace dtypes

// The smallest dtype every argument converts to without loss (tinygrad's promotion lattice).
DType least_upper_dtype(std::initializer_list<DType> ds);
// The float a value of `d` becomes in a float op (exp, sqrt, true division ...).
DType least_upper_float(DType d);
// The dtype a sum of `d` accumulates in.
DType sum_acc_dtype(DType d);

// Casting rules on host values, used for constants: truncation toward zero for float->int,
// wrap-around for int->int, `!= 0` for ->bool, rounding for the small floats.
double cast_value(double v, DType to);
int64_t cast_int(int64_t v, DType to);  // wrap an integer to `to`'s width and signedness

}  // namespace tc
