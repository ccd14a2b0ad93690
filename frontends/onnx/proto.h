// ONNX's protobuf messages (Debian's libonnx-dev, IR versions up to 8), read safely: a model or a
// tensor file that is missing, truncated or not a protobuf is a tc::Error naming the file.
#pragma once

#include <string>

#include "frontends/onnx/value.h"
#include "onnx/onnx-data_pb.h"
#include "onnx/onnx_pb.h"
#include "tinycore/tensor.h"

namespace tc::onnx {

// The model in `path`.
::onnx::ModelProto read_model(const std::string& path);
// A serialized TensorProto in `path` (the backend tests' input_N.pb and output_N.pb).
::onnx::TensorProto read_tensor(const std::string& path);

// A serialized TensorProto, SequenceProto or OptionalProto in `path`, whichever `type` (a graph
// input's or output's declared type) says (the backend tests' .pb files of sequences and
// optionals).
Value read_value(const std::string& path, const ::onnx::TypeProto& type);
Value to_value(const ::onnx::SequenceProto& s);
Value to_value(const ::onnx::OptionalProto& o);

// Replaces the data of every tensor in g (initializers, constants, nested graphs) kept in an
// external file by the bytes read from it: `location` relative to `folder`, from `offset`,
// `length` bytes (else to the file's end). A location that is absolute or leads out of the folder
// (by "..", or a symlink), a missing file, or one shorter than offset + length is an error naming
// it; so is external data where `folder` is empty.
void read_external_data(::onnx::GraphProto& g, const std::string& folder);

// The tinycore dtype of an ONNX TensorProto data type; throws naming it for one tinycore lacks.
DType dtype_of_onnx(int data_type);
// The values of a TensorProto (raw_data or the typed fields) as a realized Tensor.
Tensor to_tensor(const ::onnx::TensorProto& t);

}  // namespace tc::onnx
