// Checkpoints for Python: safetensors files (nn/state.h, nn/safetensors.h) and load_state_dict.
// State dicts cross as Python dicts of tensor handles, so load_state_dict assigns into the
// model's own tensors.
#include <map>
#include <string>
#include <vector>

#include "nn/safetensors.h"
#include "nn/state.h"
#include "python/bind_nn.h"
#include "tinycore/error.h"

namespace tc::python {
namespace {

// A safetensors header as tinygrad's safe_load_metadata gives it: the file's JSON header, each
// tensor's {"dtype", "shape", "data_offsets"} by name, and "__metadata__" when there is some.
py::dict header_dict(const safetensors::Header& h) {
  py::dict out;
  if (!h.metadata.empty()) out["__metadata__"] = py::cast(h.metadata);
  for (const safetensors::TensorInfo& t : h.tensors) {
    py::dict d;
    d["dtype"] = t.dtype;
    d["shape"] = py::cast(t.shape);
    d["data_offsets"] = py::make_tuple(t.begin, t.end);
    out[py::str(t.name)] = d;
  }
  return out;
}

}  // namespace

void bind_nn_state(py::module_& nn) {
  nn.def(
      "safe_load",
      [](const std::string& path) {
        nn::StateDict out;
        {
          py::gil_scoped_release release;
          out = nn::safe_load(path);
        }
        return out;
      },
      py::arg("path"));
  nn.def(
      "safe_save",
      [](const nn::StateDict& state, const std::string& path,
         const std::map<std::string, std::string>& metadata) {
        py::gil_scoped_release release;
        nn::safe_save(state, path, metadata);
      },
      py::arg("tensors"), py::arg("path"),
      py::arg("metadata") = std::map<std::string, std::string>{});
  // The header of a safetensors file's bytes, validated completely: (data start, header dict).
  nn.def(
      "safetensors_header",
      [](const py::bytes& file, const std::string& path) {
        std::string_view bytes = file;
        safetensors::Header h;
        try {
          h = safetensors::parse_header(reinterpret_cast<const uint8_t*>(bytes.data()),
                                        bytes.size());
        } catch (const safetensors::FormatError& e) {
          fail("safe_load_metadata: %s: %s", path, e.what());
        }
        return py::make_tuple(h.data_offset, header_dict(h));
      },
      py::arg("file"), py::arg("path"));
  // Assigns (and realizes) the matching tensors of `loaded` into `model`'s handles; returns
  // (missing, unexpected, mismatched) names. strict: any of them is an error, nothing assigned.
  nn.def(
      "load_state_dict",
      [](nn::StateDict model, const nn::StateDict& loaded, bool strict) {
        nn::LoadReport r;
        {
          py::gil_scoped_release release;
          r = nn::load_state_dict(model, loaded, strict);
        }
        return py::make_tuple(r.missing, r.unexpected, r.mismatched);
      },
      py::arg("model"), py::arg("loaded"), py::arg("strict") = true);
}

}  // namespace tc::python
