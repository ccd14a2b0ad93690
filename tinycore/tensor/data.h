// Template parts of Tensor: host data in (from_vector) and out (data, item). Included by tensor.h.
#pragma once

#include <cstring>
#include <type_traits>

#include "tinycore/dtype/visit.h"

namespace tc {

// The dtype that holds host type T (the inverse of visit_dtype, for the types a vector holds).
template <typename T>
DType dtype_of() {
  // clang-format off
  if constexpr (std::is_same_v<T, bool>) return dtypes::bool_;
  else if constexpr (std::is_same_v<T, int8_t>) return dtypes::int8;
  else if constexpr (std::is_same_v<T, int16_t>) return dtypes::int16;
  else if constexpr (std::is_same_v<T, int32_t>) return dtypes::int32;
  else if constexpr (std::is_same_v<T, int64_t>) return dtypes::int64;
  else if constexpr (std::is_same_v<T, uint8_t>) return dtypes::uint8;
  else if constexpr (std::is_same_v<T, uint16_t>) return dtypes::uint16;
  else if constexpr (std::is_same_v<T, uint32_t>) return dtypes::uint32;
  else if constexpr (std::is_same_v<T, uint64_t>) return dtypes::uint64;
  else if constexpr (std::is_same_v<T, float>) return dtypes::float32;
  else if constexpr (std::is_same_v<T, double>) return dtypes::float64;
  else static_assert(sizeof(T) == 0, "no dtype holds this host type");
  // clang-format on
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
  return visit_dtype(d, [&]<class T>() -> Elem {
    if constexpr (std::is_same_v<T, bool>) {
      return static_cast<Elem>(p[i] != 0);
    } else if constexpr (std::is_same_v<T, BFloat16Bits>) {
      uint32_t bits = static_cast<uint32_t>(load<uint16_t>(p, i)) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return static_cast<Elem>(f);
    } else if constexpr (std::is_same_v<T, _Float16>) {
      return static_cast<Elem>(static_cast<float>(load<_Float16>(p, i)));
    } else {
      return static_cast<Elem>(load<T>(p, i));
    }
  });
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
  if constexpr (!std::is_same_v<Elem, bool>)
    if (dtype() == dtype_of<Elem>()) {  // the same type: no conversion per element
      if (!out.empty()) std::memcpy(out.data(), raw.data(), out.size() * sizeof(Elem));
      return out;
    }
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
