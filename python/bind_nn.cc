// tinycore._C.nn: the C++ layers, optimizers and checkpoints of nn/ for Python. The Python half
// (python/tinycore/nn/) gives them tinygrad's module layout: tinycore.nn, nn.optim, nn.state.
#include "python/bind_nn.h"

#include <string>

#include "nn/module.h"

namespace tc::python {

void bind_nn(py::module_& m) {
  py::module_ nn = m.def_submodule("nn", "tinycore's nn layers, optimizers and checkpoints");

  // The base of every layer. Python walks a model through _named_tensors (nn.state's
  // get_state_dict): each tensor by name, and whether it is trained (requires_grad: the layer's
  // parameters, unless frozen) or only realized with each step (buffers: running statistics).
  py::class_<nn::Module>(nn, "Module", py::dynamic_attr())
      .def("_named_tensors", [](const nn::Module& mod) {
        py::list out;
        for (const auto& [name, t] : mod.state_dict())
          out.append(py::make_tuple(name, t, t.requires_grad()));
        return out;
      });

  bind_nn_layers(nn);
  bind_nn_optim(nn);
  bind_nn_state(nn);
}

}  // namespace tc::python
