// libFuzzer target for the ONNX importer (frontends/onnx): any bytes, read as a model file, give
// an OnnxRunner or a tc::Error, never a crash, a hang or a read out of bounds (ASan and UBSan
// watch). An accepted model is run on zeros of its declared input shapes (a dynamic or huge
// dimension read as 1..4) and its outputs are realized, so shapes, indices and attributes that
// make no sense must be errors too.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "frontends/onnx/proto.h"
#include "frontends/onnx/runner.h"
#include "tinycore/error.h"

namespace {

namespace fs = std::filesystem;

// The model's folder: external data resolves against it, and must not leave it.
const fs::path& folder() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("onnx_import_fuzz." + std::to_string(getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// Zeros of the declared dtype and shape of graph input `name`, small enough to run.
tc::Tensor zeros_for(const ::onnx::ModelProto& m, const std::string& name) {
  for (const auto& in : m.graph().input()) {
    if (in.name() != name) continue;
    const auto& t = in.type().tensor_type();
    tc::Shape shape;
    for (const auto& d : t.shape().dim())
      shape.push_back(d.has_dim_value() && d.dim_value() >= 0 && d.dim_value() <= 4 ? d.dim_value()
                                                                                    : 1);
    return tc::Tensor::zeros(shape, tc::onnx::dtype_of_onnx(t.elem_type()));
  }
  tc::fail("no input %s", name);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("TC_ONNX_MAX_BYTES", "16000000", 1);  // a value past 16 MB is an error, not an OOM
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path model = folder() / "model.onnx";
  std::ofstream(model, std::ios::binary).write(reinterpret_cast<const char*>(data), size);
  try {
    tc::onnx::OnnxRunner run(model.string());
    ::onnx::ModelProto m = tc::onnx::read_model(model.string());
    std::map<std::string, tc::Tensor> inputs;
    for (const std::string& name : run.input_names()) inputs.emplace(name, zeros_for(m, name));
    for (auto& [name, out] : run(inputs)) out.realize();
  } catch (const tc::Error&) {
  }
  return 0;
}
