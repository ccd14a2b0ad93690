// ggml's quantized block formats as Tensor expressions. dequantize() builds the float32 values of
// a tensor's raw GGUF bytes from Tensor ops only (shrink, bitcast, shifts, masks, mul, add), no
// host loop: the dequantization fuses into the kernel that reads it, so a matmul with a Q4_0
// weight reads 4.5 bits per weight. Values are exactly those of ggml's reference
// dequantize_row_* (ggml-quants.c). quantize() is ggml's reference quantize_row_q8_0/q4_0 on the
// host, byte for byte, and simpler quantizers of Q4_K and Q6_K.
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

// The blocks of ggml type `type` (Q8_0, Q4_0, Q4_K or Q6_K) of x[0..n), n a whole number of
// blocks. Q8_0 and Q4_0 are ggml's reference quantizers; the K types choose their scales more
// simply than ggml's (the same format).
std::vector<uint8_t> quantize(const float* x, int64_t n, uint32_t type);

// Whether a matrix of ggml type `type`, its blocks at `blocks`, is kept as an nn::QuantizedWeight:
// every block type (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K), the K formats where no scale
// is so large that its products overflow float16. packed(): the (out, in) matrix of such a type
// from its raw bytes (lazy; an error naming the type, shape and sizes when they do not agree, or
// for another type).
bool packs(uint32_t type, const uint8_t* blocks, size_t bytes);
nn::QuantizedWeight packed(const Tensor& raw, uint32_t type, int64_t out, int64_t in);

}  // namespace tc::gguf
