// tinycore.Tensor: construction from Python data, reading values back (numpy, tolist, item),
// autograd and realize. The operations are bound in bind_tensor_ops.cc.
#include <cstring>
#include <string>

#include "python/bindings.h"
#include "tinycore/engine/realize.h"

namespace tc::python {

namespace {

py::module_ numpy() { return py::module_::import("numpy"); }

// numpy's name for a dtype numpy can hold, else float32 (bfloat16 travels as float32).
std::string numpy_carrier(DType d) {
  const char* n = numpy_name(d);
  return n ? n : "float32";
}

// A contiguous numpy array -> a tensor of `dtype` (numpy's own dtype when none is given).
Tensor from_numpy(py::array arr, std::optional<DType> dtype) {
  DType src = to_dtype(arr.attr("dtype"));
  DType dst = dtype.value_or(src);
  if (dst != src) {
    arr = arr.attr("astype")(numpy_carrier(dst));
    src = to_dtype(arr.attr("dtype"));
  }
  Shape shape(arr.shape(), arr.shape() + arr.ndim());
  arr = numpy().attr("ascontiguousarray")(arr);  // (ndim >= 1: a 0-d array comes back as (1,))
  Tensor t = Tensor::from_blob(arr.data(), shape, src);
  return src == dst ? t : t.cast(dst);
}

}  // namespace

std::optional<ConstValue> to_const(py::handle h) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return ConstValue(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (!overflow) return ConstValue(v);
    if (overflow > 0) {  // 2**63 .. 2**64-1: a uint64 constant (its bits), valued as itself
      unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (!PyErr_Occurred()) {
        ConstValue c(static_cast<long long>(u));
        c.value = static_cast<double>(u);
        return c;
      }
      PyErr_Clear();
    }
    throw py::value_error("integer " + std::string(py::str(h)) + " does not fit in 64 bits");
  }
  if (PyFloat_Check(o)) return ConstValue(PyFloat_AsDouble(o));
  // numpy scalars: np.bool_, np.int32, np.float32 ...
  if (py::hasattr(h, "dtype") && py::hasattr(h, "item") && !py::isinstance<Tensor>(h) &&
      py::hasattr(h, "ndim") && h.attr("ndim").cast<int>() == 0 && !py::isinstance<py::array>(h))
    return to_const(h.attr("item")());
  return std::nullopt;
}

Tensor tensor_from_python(py::handle data, std::optional<DType> dtype) {
  if (py::isinstance<Tensor>(data)) {
    Tensor t = data.cast<Tensor>();
    return dtype && *dtype != t.dtype() ? t.cast(*dtype) : t;
  }
  if (data.is_none()) return Tensor::empty({0}, dtype.value_or(dtypes::default_float));
  if (py::isinstance<py::bytes>(data)) {
    std::string b = data.cast<std::string>();
    Tensor t = Tensor::from_blob(b.data(), {static_cast<int64_t>(b.size())}, dtypes::uint8);
    return dtype && *dtype != dtypes::uint8 ? t.cast(*dtype) : t;
  }
  if (auto c = to_const(data)) return Tensor::full({}, *c, dtype);
  if (py::isinstance<py::array>(data))
    return from_numpy(py::reinterpret_borrow<py::array>(data), dtype);
  if (py::isinstance<py::list>(data) || py::isinstance<py::tuple>(data)) {
    py::array arr;
    try {
      arr = numpy().attr("array")(data);
    } catch (py::error_already_set& e) {
      throw py::value_error("Tensor: the list is not a rectangular array of numbers (" +
                            std::string(e.what()) + ")");
    }
    std::string kind = py::str(arr.attr("dtype").attr("kind"));
    if (kind != "b" && kind != "i" && kind != "u" && kind != "f")
      throw py::value_error("Tensor: the list holds " + std::string(py::str(arr.attr("dtype"))) +
                            " values, not bools, ints or floats (is it ragged?)");
    // Python numbers: ints are int32 and floats float32 (tinygrad's defaults), unless told
    DType natural = kind == "b"   ? dtypes::bool_
                    : kind == "f" ? dtypes::default_float
                                  : dtypes::default_int;
    if (arr.size() == 0) natural = dtypes::default_float;
    return from_numpy(arr, dtype.value_or(natural));
  }
  throw py::type_error("Tensor: cannot make a tensor from " +
                       std::string(py::str(py::type::of(data).attr("__name__"))) +
                       " (expected a Tensor, a number, a list, a numpy array or bytes)");
}

namespace {

// The realized contents as a new numpy array (bfloat16 comes back as float32).
// The realized contents as a new numpy array (bfloat16 comes back as float32): one copy, from
// the buffer (or the device's bytes) into the array.
py::array to_numpy(const Tensor& t) {
  Tensor src = t.dtype() == dtypes::bfloat16 ? t.cast(dtypes::float32) : t;
  std::shared_ptr<const void> host;
  std::vector<uint8_t> bytes;
  {
    py::gil_scoped_release release;
    host = src.host_data();
    if (!host) bytes = src.raw_bytes();
  }
  py::array out(py::dtype(numpy_carrier(src.dtype())), src.shape());
  if (out.nbytes() > 0)
    std::memcpy(out.mutable_data(), host ? host.get() : bytes.data(), out.nbytes());
  return out;
}

// tinygrad's data(): a read-only view of the realized buffer without a copy where the host can
// read it (the CPU), kept alive by the array; else (or for bfloat16, which numpy lacks) a copy.
py::array host_view(const Tensor& t) {
  if (!numpy_name(t.dtype())) return to_numpy(t);
  std::shared_ptr<const void> host;
  {
    py::gil_scoped_release release;
    host = t.host_data();
  }
  if (!host) return to_numpy(t);
  auto* keep = new std::shared_ptr<const void>(host);
  py::capsule owner(keep, [](void* p) { delete static_cast<std::shared_ptr<const void>*>(p); });
  py::array view(py::dtype(numpy_carrier(t.dtype())), t.shape(), host.get(), owner);
  view.attr("setflags")(py::arg("write") = false);
  return view;
}

std::string tensor_repr(const Tensor& t) {
  std::string grad = t.grad() ? "<Tensor>" : "None";
  return "<Tensor " + fmt_shape(t.shape()) + " " + t.dtype().name() + " on " + t.device() +
         " with grad " + grad + ">";
}

}  // namespace

void bind_tensor(py::module_& m) {
  py::class_<Tensor> cls(m, "Tensor", py::dynamic_attr());
  cls.def(
      py::init([](py::object data, py::object device, py::object dtype, py::object requires_grad) {
        Tensor t = tensor_from_python(data, to_optional_dtype(dtype));
        if (!device.is_none()) t = t.to(device.cast<std::string>());
        // a new tensor starts as tinygrad's None (module.cc): backward() fills its grad when used
        if (!requires_grad.is_none()) t.requires_grad_(requires_grad.cast<bool>());
        return t;
      }),
      py::arg("data"), py::arg("device") = py::none(), py::arg("dtype") = py::none(),
      py::arg("requires_grad") = py::none());

  // what a tensor is
  cls.def_property_readonly("shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("device",  // a tuple for a multi-device tensor, as tinygrad's
                             [](const Tensor& t) -> py::object {
                               std::vector<std::string> d = t.devices();
                               if (d.size() > 1 || d[0] != t.device())
                                 return py::tuple(py::cast(d));
                               return py::str(d[0]);
                             })
      .def_property_readonly("ndim", &Tensor::ndim)
      .def("numel", &Tensor::numel)
      .def("element_size", &Tensor::element_size)
      .def("nbytes", &Tensor::nbytes)
      .def("is_floating_point", &Tensor::is_floating_point)
      .def("dim", &Tensor::ndim)
      .def(
          "size",
          [](const Tensor& t, std::optional<int> dim) -> py::object {
            if (dim) return py::int_(t.size(*dim));
            return py::tuple(py::cast(t.shape()));
          },
          py::arg("dim") = py::none())
      .def("__len__",
           [](const Tensor& t) {
             if (t.ndim() == 0) throw py::type_error("len() of a 0-d tensor");
             return t.shape()[0];
           })
      .def("__repr__", &tensor_repr)
      .def("__hash__",
           [](py::object self) {
             return py::hash(py::int_(reinterpret_cast<intptr_t>(self.ptr())));
           })
      .def("__bool__", [](const Tensor&) -> bool {
        throw py::type_error("__bool__ on Tensor is not defined");
      });

  // values back on the host
  cls.def("numpy", &to_numpy)
      .def("tolist", [](const Tensor& t) { return to_numpy(t).attr("tolist")(); })
      .def("item",
           [](const Tensor& t) {
             if (t.numel() != 1)
               throw py::value_error("Tensor.item: the tensor must have one element, shape is " +
                                     fmt_shape(t.shape()));
             return to_numpy(t).attr("item")();
           })
      .def("data", [](const Tensor& t) { return py::memoryview(host_view(t)); })
      .def(
          "__array__",
          [](const Tensor& t, py::object dtype) {
            py::array a = host_view(t);  // np.asarray(t): no copy where the layout allows
            return dtype.is_none() ? a : py::array(a.attr("astype")(dtype));
          },
          py::arg("dtype") = py::none())
      .def("realize", [](py::object self, py::args rest) {
        std::vector<Tensor> all{self.cast<Tensor>()};
        for (py::handle h : rest) all.push_back(h.cast<Tensor>());
        {
          py::gil_scoped_release release;
          realize_all(all);
        }
        return self;  // the same Python object, as tinygrad's
      });

  // autograd
  cls.def_property("requires_grad", &Tensor::requires_grad_state,
                   [](Tensor& t, py::object v) {
                     if (v.is_none())
                       t.requires_grad_maybe_();
                     else
                       t.requires_grad_(v.cast<bool>());
                   })
      .def("requires_grad_", &Tensor::requires_grad_, py::arg("requires_grad") = true,
           py::return_value_policy::reference_internal)
      .def_property("grad", &Tensor::grad, &Tensor::set_grad)
      .def("detach", &Tensor::detach)
      .def(
          "gradient",
          [](const Tensor& t, py::args targets, std::optional<Tensor> gradient) {
            std::vector<Tensor> ts;
            for (py::handle h : targets) ts.push_back(h.cast<Tensor>());
            return t.gradient(ts, gradient);
          },
          py::arg("gradient") = py::none())
      .def(
          "backward",
          [](py::object self, std::optional<Tensor> gradient) {
            self.cast<Tensor&>().backward(gradient);
            return self;
          },
          py::arg("gradient") = py::none());
  m.def("realize_all", [](const std::vector<Tensor>& ts) {
    py::gil_scoped_release release;
    realize_all(ts);
  });
}

}  // namespace tc::python
