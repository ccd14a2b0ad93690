// tinycore._C: the native half of the tinycore Python package (python/tinycore/ is the rest).
#include <string>

#include "python/bindings.h"

namespace tc::python {
namespace {

// tinygrad's exception types: an index out of range is an IndexError; a wrong dtype or argument
// type a TypeError is not distinguishable from the message reliably, so everything else is a
// RuntimeError (what tinygrad raises for shape and dtype mistakes).
PyObject* python_type_of(const std::string& msg) {
  for (const char* s : {"out of bounds", "out of range", "too many indices"})
    if (msg.find(s) != std::string::npos) return PyExc_IndexError;
  return PyExc_RuntimeError;
}

}  // namespace
}  // namespace tc::python

PYBIND11_MODULE(_C, m) {
  using namespace tc::python;
  m.doc() = "tinycore's native module: Tensor, dtypes, TinyJit, Variable, nn";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tc::Error& e) {
      PyErr_SetString(python_type_of(e.what()), e.what());
    }
  });
  bind_dtype(m);
  bind_tensor(m);
  bind_tensor_ops(m);
  bind_runtime(m);
  bind_nn(m);
}
