// The importer's operator table, filled by one file per topic (ops_<topic>.cc): each adds its
// operators as functions from a node's inputs and attributes to its outputs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "frontends/onnx/ops.h"
#include "tinycore/error.h"

namespace tc::onnx {

using Op = std::function<std::vector<Tensor>(const NodeArgs&)>;
using OpTable = absl::flat_hash_map<std::string, Op>;
// The operators that take or make sequences and optionals, or run subgraphs.
using ValueOp = std::function<std::vector<Value>(const NodeArgs&)>;
using ValueOpTable = absl::flat_hash_map<std::string, ValueOp>;

// An axis attribute or input in [-rank, rank) as tinycore reads it, in [0, rank); throws for one
// outside (run_node names the node).
inline int axis_of(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) fail("axis %d is out of range for rank %d", axis, rank);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// The steps of an unrolled loop (Loop, Scan, a recurrent layer's time steps) between
// realizations of the values it carries, so that no graph chains more steps than this.
constexpr int64_t kStepsPerRealize = 64;

void add_elementwise_ops(OpTable& t);
void add_shape_ops(OpTable& t);
void add_index_ops(OpTable& t);
void add_reduce_ops(OpTable& t);
void add_nn_ops(OpTable& t);
void add_image_ops(OpTable& t);
void add_quantize_ops(OpTable& t);
void add_signal_ops(OpTable& t);
void add_linalg_ops(OpTable& t);
void add_text_ops(OpTable& t);
void add_recurrent_ops(OpTable& t);
void add_sequence_ops(ValueOpTable& t);
void add_control_ops(ValueOpTable& t);

}  // namespace tc::onnx
