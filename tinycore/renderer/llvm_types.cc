#include "tinycore/renderer/llvm_types.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tc::renderer {

std::string scalar_type(DType d) {
  switch (d.scalar) {
    case Scalar::Bool:
      return "i1";
    case Scalar::Int8:
    case Scalar::UInt8:
      return "i8";
    case Scalar::Int16:
    case Scalar::UInt16:
    case Scalar::BFloat16:
      return "i16";
    case Scalar::Int32:
    case Scalar::UInt32:
      return "i32";
    case Scalar::Int64:
    case Scalar::UInt64:
    case Scalar::Index:
      return "i64";
    case Scalar::Float16:
      return "half";
    case Scalar::Float32:
      return "float";
    case Scalar::Float64:
      return "double";
    case Scalar::Void:
      return "void";
  }
  return "?";
}
std::string memory_type(DType d) { return dtypes::is_bool(d) ? "i8" : scalar_type(d.base()); }
bool is_llvm_float(DType d) {
  return d.scalar == Scalar::Float16 || d.scalar == Scalar::Float32 || d.scalar == Scalar::Float64;
}
int bits(DType d) { return dtypes::is_bool(d) ? 1 : d.itemsize() * 8; }
std::string type_suffix(DType d) {
  if (d.scalar == Scalar::Float16) return "f16";
  if (d.scalar == Scalar::Float32) return "f32";
  if (d.scalar == Scalar::Float64) return "f64";
  return absl::StrCat("i", bits(d));
}

namespace {

uint16_t half_bits(double v) {
  _Float16 h = static_cast<_Float16>(v);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
uint16_t bf16_bits(double v) {
  float f = static_cast<float>(v);  // already rounded to bfloat16 by UOp::const_
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return static_cast<uint16_t>(b >> 16);
}

}  // namespace

std::string scalar_literal(const UOp& c) {
  DType d = c.dtype;
  if (dtypes::is_bool(d)) return c.arg_int() ? "true" : "false";
  if (d.scalar == Scalar::BFloat16) return absl::StrCat(bf16_bits(c.const_value()));
  if (d.scalar == Scalar::Float16) return absl::StrFormat("0xH%04X", half_bits(c.const_value()));
  if (is_llvm_float(d)) {
    double v = c.const_value();
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return absl::StrFormat("0x%016X", b);
  }
  return absl::StrCat(c.arg_int());
}

}  // namespace tc::renderer
