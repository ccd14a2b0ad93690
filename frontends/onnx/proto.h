// ONNX's protobuf messages (Debian's libonnx-dev, IR versions up to 8), read safely: a model or a
// tensor file that is missing, truncated or not a protobuf is a tc::Error naming the file.
#pragma once

#include <string>

#include "onnx/onnx_pb.h"
#include "tinycore/tensor.h"

namespace tc::onnx {

// The model in `path`.
::onnx::ModelProto read_model(const std::string& path);
// A serialized TensorProto in `path` (the backend tests' input_N.pb and output_N.pb).
::onnx::TensorProto read_tensor(const std::string& path);

// The tinycore dtype of an ONNX TensorProto data type; throws naming it for one tinycore lacks.
DType dtype_of_onnx(int data_type);
// The values of a TensorProto (raw_data or the typed fields) as a realized Tensor.
Tensor to_tensor(const ::onnx::TensorProto& t);

}  // namespace tc::onnx
