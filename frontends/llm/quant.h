// ggml's quantized block formats as Tensor expressions. dequantize() builds the float32 values of
// a tensor's raw GGUF bytes from Tensor ops only (shrink, bitcast, shifts, masks, mul, add), no
// host loop: the dequantization fuses into the kernel that reads it, so a matmul with a Q4_0
// weight reads 4.5 bits per weight. Values are exactly those of ggml's reference
// dequantize_row_* (ggml-quants.c). quantize() is ggml's reference quantize_row_q8_0/q4_0 on the
// host, byte for byte.
#pragma once

#include <cstdint>
#include <vector>

#include "frontends/llm/gguf.h"
#include "nn/quantized_weight.h"
#include "tinycore/tensor.h"

namespace tc::gguf {

// `raw`: a 1-D uint8 tensor of exactly a tensor's bytes as stored; `type`: its ggml type;
// `shape`: its logical shape in PyTorch order (the GGUF dims reversed), whose last dimension is a
// multiple of the type's block. A lazy float32 tensor of `shape`. Throws tc::Error naming the
// type, shape and sizes when they do not agree.
Tensor dequantize(const Tensor& raw, uint32_t type, const Shape& shape);

// The blocks of ggml type `type` (Q8_0 or Q4_0) of x[0..n), n a multiple of 32.
std::vector<uint8_t> quantize(const float* x, int64_t n, uint32_t type);

// Whether a matrix of ggml type `type` is kept as an nn::QuantizedWeight (Q4_0, Q8_0), and as
// which of its formats (an error for other types).
bool packs(uint32_t type);
nn::QuantizedWeight::Format packed_format(uint32_t type);

}  // namespace tc::gguf
