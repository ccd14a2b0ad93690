// Checkpoints: state dicts (tensors by name) saved to and loaded from safetensors files.
//   safe_load    memory-maps the file, validates the whole header first (nn/safetensors.h), then
//                copies each tensor once into a buffer on the device
//   safe_save    writes a temporary file next to the target, fsyncs it and renames it over the
//                target: a crash mid-save never leaves a damaged checkpoint where a good one was
//   load_state_dict  assigns loaded values into a model's tensors, reporting missing and
//                unexpected names and shape or dtype mismatches by name (strict: as an error)
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tinycore/tensor.h"

namespace tc::nn {

using StateDict = std::map<std::string, Tensor>;

StateDict safe_load(const std::string& path);
// Tensors are realized (and read back) to be written; metadata goes in "__metadata__".
void safe_save(const StateDict& state, const std::string& path,
               const std::map<std::string, std::string>& metadata = {});

struct LoadReport {
  std::vector<std::string> missing;     // in the model, not in the file
  std::vector<std::string> unexpected;  // in the file, not in the model
  std::vector<std::string> mismatched;  // "name: file (2, 3) float32, model (3, 2) float32"
  bool ok() const { return missing.empty() && unexpected.empty() && mismatched.empty(); }
};
// Every matching tensor of `model` is assigned (and realized) from `loaded`. strict: any problem
// throws tc::Error listing them all, and nothing is assigned.
LoadReport load_state_dict(StateDict& model, const StateDict& loaded, bool strict = true);

// `d` with every name prefixed ("m.0" -> "optim.m.0"); and the entries of `d` under `prefix`,
// without it: one file holds several state dicts.
StateDict with_prefix(const StateDict& d, const std::string& prefix);
StateDict strip_prefix(const StateDict& d, const std::string& prefix);

// A realized float32 tensor with a buffer of its own holding `value`: state (an optimizer's
// moments, a loss scale) that steps assign in place.
Tensor state_tensor(const Shape& shape, double value);

}  // namespace tc::nn
