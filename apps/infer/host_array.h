// A tensor's values on the host: what .npy files and JSON requests hold before they become a
// Tensor, and what outputs become after they are read back. C order, little-endian.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tinycore/error.h"
#include "tinycore/tensor.h"

namespace tc::infer {

// NumPy's name of a dtype ("float32", "int64", "bool"; "bfloat16"), as .npy users know them.
inline std::string numpy_name(DType d) {
  static const std::pair<DType, const char*> kNames[] = {
      {dtypes::bool_, "bool"},      {dtypes::int8, "int8"},         {dtypes::int16, "int16"},
      {dtypes::int32, "int32"},     {dtypes::int64, "int64"},       {dtypes::uint8, "uint8"},
      {dtypes::uint16, "uint16"},   {dtypes::uint32, "uint32"},     {dtypes::uint64, "uint64"},
      {dtypes::float16, "float16"}, {dtypes::bfloat16, "bfloat16"}, {dtypes::float32, "float32"},
      {dtypes::float64, "float64"},
  };
  for (const auto& [dtype, name] : kNames)
    if (dtype == d) return name;
  return d.name();
}

struct HostArray {
  DType dtype = dtypes::float32;
  std::vector<int64_t> shape;
  std::string data;  // numel * itemsize bytes

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  Tensor to_tensor() const { return Tensor::from_blob(data.data(), shape, dtype); }
  static HostArray of(const Tensor& t) {
    std::vector<uint8_t> bytes = t.raw_bytes();
    return {t.dtype(), t.shape(), std::string(bytes.begin(), bytes.end())};
  }
};

// f(element i of `a`) with the element as its C++ type (bool, int8_t .. uint64_t, float, double);
// float16 and bfloat16 have none on the host: an error.
template <typename F>
decltype(auto) visit_element(const HostArray& a, int64_t i, F&& f) {
  auto at = [&]<typename T>(T v) {
    std::memcpy(&v, a.data.data() + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    return f(v);
  };
  switch (a.dtype.scalar) {
    case Scalar::Bool:
      return f(a.data[static_cast<size_t>(i)] != 0);
    case Scalar::Int8:
      return at(int8_t{});
    case Scalar::Int16:
      return at(int16_t{});
    case Scalar::Int32:
      return at(int32_t{});
    case Scalar::Int64:
      return at(int64_t{});
    case Scalar::UInt8:
      return at(uint8_t{});
    case Scalar::UInt16:
      return at(uint16_t{});
    case Scalar::UInt32:
      return at(uint32_t{});
    case Scalar::UInt64:
      return at(uint64_t{});
    case Scalar::Float32:
      return at(float{});
    case Scalar::Float64:
      return at(double{});
    default:
      fail("values of dtype %s cannot be read on the host", numpy_name(a.dtype));
  }
}

}  // namespace tc::infer
