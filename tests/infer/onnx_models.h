// Small ONNX models for the infer tests, built with ONNX's protobuf classes, and what they
// compute by naive loops in double precision (the independent reference).
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "tests/train/tiny_run.h"

namespace onnxmodels {

// A tensor input or output: elem_type and dims (a dim < 0 is the symbolic "batch").
inline void declare(::onnx::ValueInfoProto* v, const std::string& name, int elem_type,
                    const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  for (int64_t d : dims) {
    auto* dim = t->mutable_shape()->add_dim();
    if (d < 0)
      dim->set_dim_param("batch");
    else
      dim->set_dim_value(d);
  }
}

inline void add_node(::onnx::GraphProto* g, const std::string& op,
                     const std::vector<std::string>& in, const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + out);
  for (const std::string& i : in) n->add_input(i);
  n->add_output(out);
}

inline std::string save(const ::onnx::ModelProto& m, const std::string& name) {
  std::string path = tinyrun::fresh_dir("onnx_models_" + name) + "/" + name + ".onnx";
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

inline ::onnx::ModelProto model_with_opset(int opset) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  return m;
}

constexpr int kIn = 4, kOut = 3;
// Gemm's weights W [4, 3] and bias b [3].
inline float weight(int i, int j) { return 0.25f * static_cast<float>((i * 3 + j) % 7) - 0.75f; }
inline float bias(int j) { return 0.5f * static_cast<float>(j) - 0.4f; }

// y = relu(x @ W + b), x float [batch, 4] (batch dynamic when `rows` < 0, else fixed), y [batch,
// 3].
inline std::string gemm_relu(int64_t rows = -1) {
  ::onnx::ModelProto m = model_with_opset(13);
  auto* g = m.mutable_graph();
  g->set_name("gemm_relu");
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(::onnx::TensorProto::FLOAT);
  w->add_dims(kIn);
  w->add_dims(kOut);
  for (int i = 0; i < kIn; i++)
    for (int j = 0; j < kOut; j++) w->add_float_data(weight(i, j));
  auto* b = g->add_initializer();
  b->set_name("b");
  b->set_data_type(::onnx::TensorProto::FLOAT);
  b->add_dims(kOut);
  for (int j = 0; j < kOut; j++) b->add_float_data(bias(j));
  add_node(g, "Gemm", {"x", "W", "b"}, "h");
  add_node(g, "Relu", {"h"}, "y");
  declare(g->add_input(), "x", ::onnx::TensorProto::FLOAT, {rows, kIn});
  declare(g->add_output(), "y", ::onnx::TensorProto::FLOAT, {rows, kOut});
  return save(m, rows < 0 ? "gemm_relu" : "gemm_relu_fixed");
}

// The reference of gemm_relu: x is rows x 4, row-major.
inline std::vector<double> gemm_relu_reference(const std::vector<float>& x) {
  std::vector<double> y;
  for (size_t r = 0; r < x.size() / kIn; r++)
    for (int j = 0; j < kOut; j++) {
      double s = bias(j);
      for (int i = 0; i < kIn; i++) s += static_cast<double>(x[r * kIn + i]) * weight(i, j);
      y.push_back(s > 0 ? s : 0);
    }
  return y;
}

// sum = a + b and prod = a * b, a and b int64 [2, 3] (fixed: requests run one by one).
inline std::string add_mul_int64() {
  ::onnx::ModelProto m = model_with_opset(13);
  auto* g = m.mutable_graph();
  g->set_name("add_mul");
  add_node(g, "Add", {"a", "b"}, "sum");
  add_node(g, "Mul", {"a", "b"}, "prod");
  for (const char* in : {"a", "b"}) declare(g->add_input(), in, ::onnx::TensorProto::INT64, {2, 3});
  for (const char* out : {"sum", "prod"})
    declare(g->add_output(), out, ::onnx::TensorProto::INT64, {2, 3});
  return save(m, "add_mul");
}

// out = image, image float [1, 3, 4, 5] (an RGB picture 5 wide, 4 high).
inline std::string identity_image() {
  ::onnx::ModelProto m = model_with_opset(13);
  auto* g = m.mutable_graph();
  g->set_name("identity_image");
  add_node(g, "Identity", {"image"}, "out");
  declare(g->add_input(), "image", ::onnx::TensorProto::FLOAT, {1, 3, 4, 5});
  declare(g->add_output(), "out", ::onnx::TensorProto::FLOAT, {1, 3, 4, 5});
  return save(m, "identity_image");
}

// y = x summed over axis 0 (keepdims), x float [batch, 3], y declared [batch, 3] though it has one
// row: requests cannot be split out of a stacked run, so the server runs them one by one.
inline std::string sum_rows() {
  ::onnx::ModelProto m = model_with_opset(11);
  auto* g = m.mutable_graph();
  g->set_name("sum_rows");
  add_node(g, "ReduceSum", {"x"}, "y");
  auto* axes = g->mutable_node(0)->add_attribute();
  axes->set_name("axes");
  axes->set_type(::onnx::AttributeProto::INTS);
  axes->add_ints(0);
  declare(g->add_input(), "x", ::onnx::TensorProto::FLOAT, {-1, 3});
  declare(g->add_output(), "y", ::onnx::TensorProto::FLOAT, {-1, 3});
  return save(m, "sum_rows");
}

}  // namespace onnxmodels
