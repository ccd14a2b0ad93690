// tinycore._C._OnnxRunner: the ONNX importer (frontends/onnx) for Python. tinycore/onnx.py wraps it
// in tinygrad's OnnxRunner, which also takes bytes in memory and onnx.ModelProto objects.
#include <map>
#include <string>
#include <utility>

#include "frontends/onnx/proto.h"
#include "frontends/onnx/runner.h"
#include "python/bindings.h"
#include "tinycore/error.h"

namespace tc::python {

namespace {

// A serialized ModelProto held in Python bytes (what onnx.ModelProto.SerializeToString gives).
onnx::OnnxRunner runner_from_bytes(const py::bytes& data) {
  ::onnx::ModelProto model;
  std::string_view s = data;
  if (s.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(s.data(), static_cast<int>(s.size())))
    fail("ONNX: the %d bytes given are not a valid ONNX model (truncated or not a protobuf)",
         s.size());
  return onnx::OnnxRunner(std::move(model));
}

}  // namespace

void bind_onnx(py::module_& m) {
  py::class_<onnx::OnnxRunner>(m, "_OnnxRunner")
      // str and bytes told apart: pybind11 would read bytes as a std::string path
      .def(py::init([](const py::str& path) { return onnx::OnnxRunner(path.cast<std::string>()); }),
           py::arg("path"))
      .def(py::init(&runner_from_bytes), py::arg("data"))
      .def_property_readonly("input_names", &onnx::OnnxRunner::input_names)
      .def_property_readonly("output_names", &onnx::OnnxRunner::output_names)
      .def(
          "__call__",
          [](const onnx::OnnxRunner& r, const py::dict& inputs) {
            std::map<std::string, Tensor> in;
            for (auto [name, value] : inputs) {
              if (!py::isinstance<py::str>(name))
                fail("OnnxRunner: input names must be str, not %s",
                     std::string(py::str(py::type::of(name).attr("__name__"))));
              in.insert_or_assign(name.cast<std::string>(),
                                  tensor_from_python(value, std::nullopt));
            }
            return r(in);
          },
          py::arg("inputs"));
}

}  // namespace tc::python
