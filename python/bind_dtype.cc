// tinycore.dtypes: the DType class, the dtypes namespace (dtypes.float32, dtypes.half, ...) and
// the conversions between DTypes, their names and numpy's dtypes.
#include <limits>
#include <string>

#include "python/bindings.h"

namespace tc::python {

const char* numpy_name(DType d) {
  switch (d.scalar) {
    case Scalar::Bool:
      return "bool";
    case Scalar::Int8:
      return "int8";
    case Scalar::Int16:
      return "int16";
    case Scalar::Int32:
      return "int32";
    case Scalar::Int64:
      return "int64";
    case Scalar::UInt8:
      return "uint8";
    case Scalar::UInt16:
      return "uint16";
    case Scalar::UInt32:
      return "uint32";
    case Scalar::UInt64:
      return "uint64";
    case Scalar::Float16:
      return "float16";
    case Scalar::Float32:
      return "float32";
    case Scalar::Float64:
      return "float64";
    default:
      return nullptr;
  }
}

namespace {

constexpr DType kAll[] = {dtypes::bool_,  dtypes::int8,    dtypes::int16,    dtypes::int32,
                          dtypes::int64,  dtypes::uint8,   dtypes::uint16,   dtypes::uint32,
                          dtypes::uint64, dtypes::float16, dtypes::bfloat16, dtypes::float32,
                          dtypes::float64};

}  // namespace

DType to_dtype(py::handle h) {
  if (py::isinstance<DType>(h)) return h.cast<DType>();
  if (py::isinstance<py::str>(h)) {
    // tinygrad looks names up as attributes of dtypes: an unknown one is an AttributeError
    try {
      return dtypes::from_name(h.cast<std::string>());
    } catch (const Error& e) {
      throw py::attribute_error(e.what());
    }
  }
  // numpy dtypes and scalar types (np.float32, np.dtype("int64"))
  py::module_ np = py::module_::import("numpy");
  py::object name;
  try {
    name = np.attr("dtype")(h).attr("name");
  } catch (py::error_already_set&) {
    throw py::type_error("expected a dtype (tinycore.dtypes.*, a name or a numpy dtype), got " +
                         std::string(py::str(py::repr(h))));
  }
  try {
    return dtypes::from_name(name.cast<std::string>());
  } catch (const Error&) {  // object, str, complex, datetime ...
    throw py::type_error("numpy dtype " + name.cast<std::string>() + " has no tinycore dtype");
  }
}

std::optional<DType> to_optional_dtype(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_dtype(h);
}

void bind_dtype(py::module_& m) {
  py::class_<DType> cls(m, "DType");
  cls.def(py::init([](py::object h) { return to_dtype(h); }), py::arg("name"))
      .def_property_readonly("name", &DType::name)
      .def_property_readonly("itemsize", &DType::itemsize)
      .def_property_readonly("priority", &DType::priority)
      .def_property_readonly("min", [](DType d) -> py::object {  // ints as Python ints
        if (dtypes::is_float(d)) return py::float_(dtypes::min(d));
        if (dtypes::is_bool(d)) return py::bool_(false);
        return py::int_(dtypes::is_unsigned(d) ? 0 : -(int64_t{1} << (8 * d.itemsize() - 1)));
      })
      .def_property_readonly("max", [](DType d) -> py::object {
        if (dtypes::is_float(d)) return py::float_(dtypes::max(d));
        if (dtypes::is_bool(d)) return py::bool_(true);
        if (dtypes::is_unsigned(d)) return py::int_(std::numeric_limits<uint64_t>::max() >> (64 - 8 * d.itemsize()));
        return py::int_(std::numeric_limits<int64_t>::max() >> (64 - 8 * d.itemsize()));
      })
      .def_property_readonly("fmt",
                             [](DType d) -> py::object {
                               const char* n = numpy_name(d);
                               if (!n) return py::none();
                               return py::module_::import("numpy").attr("dtype")(n).attr("char");
                             })
      .def("__repr__", [](DType d) { return "dtypes." + d.name(); })
      .def("__eq__",
           [](DType a, py::object b) {
             try {
               return a == to_dtype(b);
             } catch (...) {
               return false;
             }
           })
      .def("__hash__", [](DType d) { return static_cast<int>(d.scalar); })
      .def("__lt__", [](DType a, DType b) { return a.priority() < b.priority(); })
      .def("__reduce__",
           [](DType d) { return py::make_tuple(py::type::of<DType>(), py::make_tuple(d.name())); });
  py::implicitly_convertible<py::str, DType>();

  py::module_ d = m.def_submodule("dtypes", "tinygrad's dtypes: dtypes.float32, dtypes.half, ...");
  const std::pair<const char*, DType> names[] = {{"bool", dtypes::bool_},
                                                 {"int8", dtypes::int8},
                                                 {"char", dtypes::int8},
                                                 {"int16", dtypes::int16},
                                                 {"short", dtypes::int16},
                                                 {"int32", dtypes::int32},
                                                 {"int", dtypes::int32},
                                                 {"int64", dtypes::int64},
                                                 {"long", dtypes::int64},
                                                 {"uint8", dtypes::uint8},
                                                 {"uchar", dtypes::uint8},
                                                 {"uint16", dtypes::uint16},
                                                 {"ushort", dtypes::uint16},
                                                 {"uint32", dtypes::uint32},
                                                 {"uint", dtypes::uint32},
                                                 {"uint64", dtypes::uint64},
                                                 {"ulong", dtypes::uint64},
                                                 {"float16", dtypes::float16},
                                                 {"half", dtypes::float16},
                                                 {"bfloat16", dtypes::bfloat16},
                                                 {"float32", dtypes::float32},
                                                 {"float", dtypes::float32},
                                                 {"float64", dtypes::float64},
                                                 {"double", dtypes::float64},
                                                 {"default_float", dtypes::default_float},
                                                 {"default_int", dtypes::default_int}};
  for (const auto& [name, dt] : names) d.attr(name) = dt;
  py::list all;
  for (DType dt : kAll) all.append(dt);
  d.attr("all") = all;
  d.def("is_float", [](py::object x) { return dtypes::is_float(to_dtype(x)); });
  d.def("is_int", [](py::object x) { return dtypes::is_int(to_dtype(x)); });
  d.def("is_unsigned", [](py::object x) { return dtypes::is_unsigned(to_dtype(x)); });
  d.def("is_bool", [](py::object x) { return dtypes::is_bool(to_dtype(x)); });
  d.def("min", [](py::object x) { return dtypes::min(to_dtype(x)); });
  d.def("max", [](py::object x) { return dtypes::max(to_dtype(x)); });
  d.def("from_name", &dtypes::from_name);
  d.def("least_upper_dtype", [](py::args ds) {
    TC_CHECK(ds.size() > 0, "least_upper_dtype of nothing");
    DType r = to_dtype(ds[0]);
    for (py::handle x : ds) r = least_upper_dtype({r, to_dtype(x)});
    return r;
  });
  // numpy's dtype of a DType (bfloat16: None, as tinygrad's _to_np_dtype)
  m.def("_to_np_dtype", [](py::object x) -> py::object {
    const char* n = numpy_name(to_dtype(x));
    if (!n) return py::none();
    return py::module_::import("numpy").attr("dtype")(n).attr("type");
  });
  m.def("_from_np_dtype", [](py::object x) { return to_dtype(x); });
}

}  // namespace tc::python
