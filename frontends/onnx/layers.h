// The ONNX operators with windows and losses, as Tensor ops: Conv, ConvTranspose, MaxPool and
// AveragePool (their pads and auto_pad), NegativeLogLikelihoodLoss (ops.cc's table calls them).
#pragma once

#include <optional>
#include <utility>

#include "frontends/onnx/ops.h"

namespace tc::onnx {

Tensor conv(const NodeArgs& a);
// Conv of `x` by `weight` (plus `bias`) with the node's window attributes: the quantized
// convolutions pass their inputs with the zero points taken off.
Tensor conv(const NodeArgs& a, const Tensor& x, const Tensor& weight,
            const std::optional<Tensor>& bias);
// ConvTranspose: the full transposed convolution (no padding), grown by output_padding at the
// end of each axis, then cut by the pads (or those auto_pad or output_shape imply: SAME_UPPER puts
// the larger half at the end), then the bias.
Tensor conv_transpose(const NodeArgs& a);
// MaxPool (padding reads the dtype's lowest value) and AveragePool (padding counts as zeros where
// count_include_pad, else the average is over the window's elements inside the input).
Tensor pool(const NodeArgs& a, bool max);
// MaxPool with its Indices output: int64 indices into the flattened (N, C, spatial...) input,
// padding not counted, row-major (storage_order 0) or column-major within each plane.
std::pair<Tensor, Tensor> max_pool_with_indices(const NodeArgs& a);
// NegativeLogLikelihoodLoss of log-probabilities (N, C, d...) at targets (N, d...), with the
// node's weight, ignore_index and reduction.
Tensor nll_loss(const NodeArgs& a, const Tensor& logp, const Tensor& target,
                const std::optional<Tensor>& weight);

}  // namespace tc::onnx
