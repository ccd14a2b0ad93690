// tinycore._C: the native half of the tinycore Python package (python/tinycore/ is the rest).
#include <string>

#include "python/bindings.h"

namespace tc::python {
namespace {

// tinygrad's exception types, told apart by what the message says (the C++ API has one error
// type): the first rule whose phrase the message contains names the Python exception.
struct ErrorRule {
  const char* phrase;
  PyObject* type;
};

PyObject* python_type_of(const std::string& msg) {
  static const ErrorRule rules[] = {
      {"is out of range [0, 1]", PyExc_ValueError},  // dropout's p: a value, not an index
      {"Tensor.topk: k=", PyExc_ValueError},         // k is a count, not an index
      {"out of bounds", PyExc_IndexError},
      {"out of range", PyExc_IndexError},
      {"too many indices", PyExc_IndexError},
      {"has a negative dimension", PyExc_ValueError},
      {"sizes must be non-negative", PyExc_ValueError},
      {"reduction must be one of", PyExc_ValueError},
      {"requires low < high", PyExc_ValueError},
      {"requires std >= 0", PyExc_ValueError},
      {"only float dtypes are supported", PyExc_ValueError},
      {"dtype must be an integer dtype", PyExc_TypeError},
      {"index tensor dtype", PyExc_IndexError},
      {"single ellipsis", PyExc_IndexError},
      {"slice step cannot be 0", PyExc_ValueError},
      {"Tensor.getitem: cannot broadcast", PyExc_IndexError},
      {"zero-dimensional tensors cannot be concatenated", PyExc_IndexError},
      {"repeats for a tensor of shape", PyExc_ValueError},
      {"Tensor.reshape: cannot reshape", PyExc_ValueError},
      {"must be an int or have", PyExc_ValueError},  // a pool's or conv's padding length
      {"is not supported (use constant", PyExc_NotImplementedError},  // a pad mode
      {"needs a scalar src", PyExc_TypeError},
      {"ONNX: cannot open", PyExc_FileNotFoundError},
      {"not a valid ONNX model", PyExc_ValueError},
  };
  for (const ErrorRule& r : rules)
    if (msg.find(r.phrase) != std::string::npos) return r.type;
  return PyExc_RuntimeError;  // shape and dtype mistakes, as tinygrad
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
  // registered after the translator above, so tried first: a JIT refusal is a JitError
  py::register_exception<tc::JitError>(m, "JitError", PyExc_RuntimeError);
  tc::Tensor::set_default_requires_grad(std::nullopt);  // tinygrad's None for every tensor
  tc::throw_on_internal_check = true;  // a bug in tinycore raises RuntimeError, never aborts
  bind_dtype(m);
  bind_tensor(m);
  bind_tensor_ops(m);
  bind_runtime(m);
  bind_nn(m);
  bind_onnx(m);
}
