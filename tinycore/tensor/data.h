// Template parts of Tensor: host data in (from_vector) and out (data, item). Included by tensor.h.
#pragma once

#include <cstring>
#include <type_traits>

namespace tc {

template <>
inline DType dtype_of<bool>() {
  return dtypes::bool_;
}
template <>
inline DType dtype_of<int8_t>() {
  return dtypes::int8;
}
template <>
inline DType dtype_of<int16_t>() {
  return dtypes::int16;
}
template <>
inline DType dtype_of<int32_t>() {
  return dtypes::int32;
}
template <>
inline DType dtype_of<int64_t>() {
  return dtypes::int64;
}
template <>
inline DType dtype_of<uint8_t>() {
  return dtypes::uint8;
}
template <>
inline DType dtype_of<uint16_t>() {
  return dtypes::uint16;
}
template <>
inline DType dtype_of<uint32_t>() {
  return dtypes::uint32;
}
template <>
inline DType dtype_of<uint64_t>() {
  return dtypes::uint64;
}
template <>
inline DType dtype_of<float>() {
  return dtypes::float32;
}
template <>
inline DType dtype_of<double>() {
  return dtypes::float64;
}

namespace detail {

Shape checked_data_shape(const char* op, size_t length, const std::optional<Shape>& shape);

template <typename S>
S load(const uint8_t* p, size_t i) {
  S v;
  std::memcpy(&v, p + i * sizeof(S), sizeof(S));
  return v;
}

// Element i of raw memory holding `d`, converted to Elem.
template <typename Elem>
Elem element(const uint8_t* p, DType d, size_t i) {
  switch (d.scalar) {
    case Scalar::Bool:
      return static_cast<Elem>(p[i] != 0);
    case Scalar::Int8:
      return static_cast<Elem>(load<int8_t>(p, i));
    case Scalar::Int16:
      return static_cast<Elem>(load<int16_t>(p, i));
    case Scalar::Int32:
      return static_cast<Elem>(load<int32_t>(p, i));
    case Scalar::Int64:
      return static_cast<Elem>(load<int64_t>(p, i));
    case Scalar::UInt8:
      return static_cast<Elem>(load<uint8_t>(p, i));
    case Scalar::UInt16:
      return static_cast<Elem>(load<uint16_t>(p, i));
    case Scalar::UInt32:
      return static_cast<Elem>(load<uint32_t>(p, i));
    case Scalar::UInt64:
      return static_cast<Elem>(load<uint64_t>(p, i));
    case Scalar::Float16:
      return static_cast<Elem>(static_cast<float>(load<_Float16>(p, i)));
    case Scalar::BFloat16: {
      uint32_t bits = static_cast<uint32_t>(load<uint16_t>(p, i)) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return static_cast<Elem>(f);
    }
    case Scalar::Float32:
      return static_cast<Elem>(load<float>(p, i));
    case Scalar::Float64:
      return static_cast<Elem>(load<double>(p, i));
    default:
      break;
  }
  throw Error("Tensor.data: tensor has no element dtype " + d.name());
}

}  // namespace detail

template <typename Elem>
Tensor Tensor::from_vector(const std::vector<Elem>& data, std::optional<Shape> shape) {
  Shape s = detail::checked_data_shape("Tensor.from_vector", data.size(), shape);
  if constexpr (std::is_same_v<Elem, bool>) {
    std::vector<uint8_t> bytes(data.begin(), data.end());
    return from_blob(bytes.data(), s, dtypes::bool_);
  } else {
    return from_blob(data.data(), s, dtype_of<Elem>());
  }
}

template <typename Elem>
std::vector<Elem> Tensor::data() const {
  std::vector<uint8_t> raw = bytes();
  std::vector<Elem> out(static_cast<size_t>(numel()));
  for (size_t i = 0; i < out.size(); i++) out[i] = detail::element<Elem>(raw.data(), dtype(), i);
  return out;
}

template <typename Elem>
Elem Tensor::item() const {
  if (numel() != 1)
    fail("Tensor.item: a tensor of shape %s has %d elements, item() needs exactly 1",
         fmt_shape(shape()), numel());
  return data<Elem>()[0];
}

}  // namespace tc
