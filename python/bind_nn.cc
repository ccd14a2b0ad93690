// nn for Python: layers, optimizers, state dicts (filled in by bind_nn_*.cc).
#include "python/bindings.h"

namespace tc::python {

void bind_nn(py::module_&) {}

}  // namespace tc::python
