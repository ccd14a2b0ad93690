// The Python module tinycore._C: one bind_* function per concept, and the conversions between
// Python values and tinycore's argument types (Python scalars, axes, int-or-tuple options).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "tinycore/tensor.h"

namespace tc::python {

namespace py = pybind11;

void bind_dtype(py::module_& m);
void bind_tensor(py::module_& m);      // construction, data, autograd, realize
void bind_tensor_ops(py::module_& m);  // the operations
void bind_runtime(py::module_& m);     // Device, GlobalCounters, TinyJit, Variable
void bind_nn(py::module_& m);          // layers, optimizers, state dicts
void bind_onnx(py::module_& m);        // the ONNX importer's OnnxRunner

// A dtype argument: a DType, a name ("float32", "half", ...) or a numpy dtype.
DType to_dtype(py::handle h);
std::optional<DType> to_optional_dtype(py::handle h);  // None -> nullopt
const char* numpy_name(DType d);  // numpy's name of the dtype, or nullptr (bfloat16)

// A Python scalar (bool, int, float, or a numpy scalar) as a ConstValue, or nullopt.
std::optional<ConstValue> to_const(py::handle h);

// A tensor from Python data: a Tensor, a scalar, a (nested) list or tuple, a numpy array, bytes.
Tensor tensor_from_python(py::handle data, std::optional<DType> dtype);

}  // namespace tc::python

namespace pybind11::detail {

// Python bool/int/float (and numpy scalars) -> tc::ConstValue, which has no default value.
template <>
class type_caster<tc::ConstValue> {
 public:
  bool load(handle src, bool) {
    value = tc::python::to_const(src);
    return value.has_value();
  }
  static handle cast(const tc::ConstValue& v, return_value_policy, handle) {
    if (v.kind == tc::ConstValue::Kind::Bool) return pybind11::bool_(v.ivalue != 0).release();
    if (v.kind == tc::ConstValue::Kind::Int) return pybind11::int_(v.ivalue).release();
    return pybind11::float_(v.value).release();
  }
  static constexpr auto name = const_name("float | int | bool");
  template <typename T>
  using cast_op_type = movable_cast_op_type<T>;
  operator tc::ConstValue&() { return *value; }
  operator tc::ConstValue&&() && { return std::move(*value); }
  operator tc::ConstValue*() { return &*value; }

 private:
  std::optional<tc::ConstValue> value;
};

// None (every axis), an int, or a sequence of ints -> tc::Axes.
template <>
struct type_caster<tc::Axes> {
  PYBIND11_TYPE_CASTER(tc::Axes, const_name("int | tuple[int, ...] | None"));
  bool load(handle src, bool convert) {
    if (src.is_none()) return value = tc::Axes(), true;
    make_caster<int> one;
    if (!isinstance<sequence>(src) && one.load(src, convert))
      return value = tc::Axes(cast_op<int>(one)), true;
    make_caster<std::vector<int>> many;
    if (isinstance<str>(src) || !many.load(src, convert)) return false;
    value = tc::Axes(cast_op<std::vector<int>>(std::move(many)));
    return true;
  }
  static handle cast(const tc::Axes&, return_value_policy, handle) { return none().release(); }
};

// An int or a sequence of ints -> tc::IntTuple (pool and convolution options).
template <>
class type_caster<tc::IntTuple> {
 public:
  bool load(handle src, bool convert) {
    make_caster<int64_t> one;
    if (!isinstance<sequence>(src) && one.load(src, convert))
      return value.emplace(cast_op<int64_t>(one)), true;
    make_caster<std::vector<int64_t>> many;
    if (isinstance<str>(src) || !many.load(src, convert)) return false;
    value.emplace(cast_op<std::vector<int64_t>>(std::move(many)));
    return true;
  }
  static handle cast(const tc::IntTuple& v, return_value_policy p, handle parent) {
    return make_caster<std::vector<int64_t>>::cast(v.v, p, parent);
  }
  static constexpr auto name = const_name("int | tuple[int, ...]");
  template <typename T>
  using cast_op_type = movable_cast_op_type<T>;
  operator tc::IntTuple&() { return *value; }
  operator tc::IntTuple&&() && { return std::move(*value); }
  operator tc::IntTuple*() { return &*value; }

 private:
  std::optional<tc::IntTuple> value;
};

}  // namespace pybind11::detail
