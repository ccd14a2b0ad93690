// The parts of tinycore._C.nn, one bind_nn_* function per file (bind_nn.cc calls them).
#pragma once

#include "python/bindings.h"

namespace tc::python {

void bind_nn_layers(py::module_& nn);  // Linear, Conv2d, norms, Embedding, LSTMCell, attention
void bind_nn_optim(py::module_& nn);   // the optimizers' native halves (nn/optim.py wraps them)
void bind_nn_state(py::module_& nn);   // safetensors files and load_state_dict

}  // namespace tc::python
