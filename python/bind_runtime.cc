// Devices, GlobalCounters, TinyJit and Variable for Python. The Python TinyJit (tinycore/jit.py)
// wraps _TinyJit, which takes and returns flat lists of tensors.
#include <memory>
#include <string>

#include "python/bindings.h"
#include "tinycore/engine/realize.h"
#include "tinycore/jit/jit.h"
#include "tinycore/runtime/device.h"
#include "tinycore/variable.h"

namespace tc::python {

namespace {

// The captured step calls back into Python with the GIL held; replays run without it.
class PyTinyJit {
 public:
  explicit PyTinyJit(py::function fn)
      : fn_(std::make_shared<py::function>(std::move(fn))),
        jit_([fn = fn_](const std::vector<Tensor>& inputs) {
          py::gil_scoped_acquire gil;
          return (*fn)(inputs).cast<std::vector<Tensor>>();
        }) {}
  std::vector<Tensor> call(const std::vector<Tensor>& inputs) {
    py::gil_scoped_release release;
    return jit_(inputs);
  }
  TinyJit& jit() { return jit_; }

 private:
  std::shared_ptr<py::function> fn_;
  TinyJit jit_;
};

}  // namespace

void bind_runtime(py::module_& m) {
  m.def("default_device", [] { return runtime::default_device(); });
  m.def("available_devices", &runtime::available_devices);

  using GC = engine::GlobalCounters;
  py::module_ gc = m.def_submodule("_counters");
  gc.def("kernel_count", [] { return GC::kernel_count; });
  gc.def("global_ops", [] { return GC::global_ops; });
  gc.def("global_mem", [] { return GC::global_mem; });
  gc.def("time_sum_s", [] { return GC::time_sum_s; });
  gc.def("reset", &GC::reset);

  py::class_<PyTinyJit>(m, "_TinyJit")
      .def(py::init<py::function>())
      .def("__call__", &PyTinyJit::call)
      .def_property_readonly("calls", [](PyTinyJit& j) { return j.jit().calls(); })
      .def_property_readonly("captured", [](PyTinyJit& j) { return j.jit().captured(); })
      .def_property_readonly("kernel_count", [](PyTinyJit& j) { return j.jit().kernel_count(); })
      .def_property_readonly("planned_bytes", [](PyTinyJit& j) { return j.jit().planned_bytes(); })
      .def_property_readonly("unplanned_bytes",
                             [](PyTinyJit& j) { return j.jit().unplanned_bytes(); })
      .def("reset", [](PyTinyJit& j) { j.jit().reset(); });

  py::class_<Variable>(m, "Variable")
      .def(py::init<std::string, int64_t, int64_t>(), py::arg("name"), py::arg("min"),
           py::arg("max"))
      .def(
          "bind", [](Variable& v, int64_t x) -> Variable& { return v.bind(x); }, py::arg("value"),
          py::return_value_policy::reference_internal)
      .def_property_readonly("value", &Variable::value)
      .def_property_readonly("name", &Variable::name)
      .def_property_readonly("min", &Variable::min)
      .def_property_readonly("max", &Variable::max)
      .def("tensor", &Variable::tensor)
      .def("__repr__", [](const Variable& v) {
        return "Variable(\"" + v.name() + "\", " + std::to_string(v.min()) + ", " +
               std::to_string(v.max()) + ") = " + std::to_string(v.value());
      });
}

}  // namespace tc::python
