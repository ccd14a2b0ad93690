// The optimizers of nn/optim.h for Python: LARS (SGD and Muon are LARS) and LAMB (Adam and
// AdamW are LAMB), as tinygrad builds them. python/tinycore/nn/optim.py wraps these with
// tinygrad's signatures and adds the buffers (BatchNorm statistics) a step realizes.
#include <array>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "nn/optim.h"
#include "python/bind_nn.h"

namespace tc::python {

void bind_nn_optim(py::module_& nn) {
  using nn::Optimizer;
  py::class_<Optimizer>(nn, "Optimizer")
      .def("zero_grad", &Optimizer::zero_grad)
      .def("schedule_step", &Optimizer::schedule_step, py::arg("apply") = py::none(),
           "Assigns the updates and returns what to realize (a skipped step where the 0-d bool "
           "tensor `apply` is false)")
      .def("step", &Optimizer::step, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("lr", [](const Optimizer& o) { return o.lr(); })
      .def("set_lr", &Optimizer::set_lr, py::arg("lr"))
      .def_property_readonly("params", [](const Optimizer& o) { return o.params(); })
      .def("state_dict", &Optimizer::state_dict);

  py::class_<nn::LARS, Optimizer>(nn, "LARS")
      .def(py::init([](std::vector<Tensor> params, double lr, double momentum, double weight_decay,
                       bool nesterov, bool classic, double tcoef,
                       std::optional<std::array<double, 3>> ns_params) {
             return std::make_unique<nn::LARS>(std::move(params),
                                               nn::LARSOpts{.lr = lr,
                                                            .momentum = momentum,
                                                            .weight_decay = weight_decay,
                                                            .nesterov = nesterov,
                                                            .classic = classic,
                                                            .tcoef = tcoef,
                                                            .ns_params = ns_params});
           }),
           py::arg("params"), py::arg("lr"), py::arg("momentum"), py::arg("weight_decay"),
           py::arg("nesterov"), py::arg("classic"), py::arg("tcoef"),
           py::arg("ns_params") = py::none());

  py::class_<nn::LAMB, Optimizer>(nn, "LAMB")
      .def(py::init([](std::vector<Tensor> params, double lr, double b1, double b2, double eps,
                       double weight_decay, bool adam) {
             return std::make_unique<nn::LAMB>(std::move(params),
                                               nn::LAMBOpts{.lr = lr,
                                                            .b1 = b1,
                                                            .b2 = b2,
                                                            .eps = eps,
                                                            .weight_decay = weight_decay,
                                                            .adam = adam});
           }),
           py::arg("params"), py::arg("lr"), py::arg("b1"), py::arg("b2"), py::arg("eps"),
           py::arg("weight_decay"), py::arg("adam"));

  nn.def("clip_grad_norm", &nn::clip_grad_norm, py::arg("params"), py::arg("max_norm"),
         "Scales the gradients so their global L2 norm is at most max_norm; returns the norm "
         "before clipping");
}

}  // namespace tc::python
