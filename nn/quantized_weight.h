// A projection's weight kept in one of ggml's 32-element block formats, laid out for products
// that multiply its integers with int8 inputs four at a time (DOT4: x86's vpdpbusd). This is
// llama.cpp's CPU path: it repacks these formats on load and quantizes the input to Q8_0 (int8
// and a scale per 32) before each product.
//   Q4_0: 4-bit q and a float16 d per 32 inputs, the value (q - 8) * d;
//   Q8_0: int8 q and a float16 d per 32 inputs, the value q * d.
#pragma once

#include <cstdint>
#include <functional>

#include "tinycore/tensor.h"

namespace tc::nn {

struct QuantizedWeight {
  enum class Format { kQ4_0, kQ8_0 };
  Format format = Format::kQ4_0;
  // (out, in / 32 / G, words, G) int32: G blocks side by side (16, or fewer where `in` has
  // fewer), word m of a block being its value bytes 4m .. 4m + 3. Q4_0 has 4 words: inputs
  // 4m .. 4m + 3 in their low nibbles, 16 + 4m .. 16 + 4m + 3 in their high ones (ggml's order);
  // Q8_0 has 8, each byte q + 128 (unsigned, as DOT4 multiplies).
  Tensor words;
  Tensor scales;  // (out, in / 32 / G, 1, G) float16

  // The (out, in) weight from the raw bytes of its ggml blocks (18 or 34 each; lazy).
  static QuantizedWeight from_blocks(Format format, const Tensor& raw, int64_t out, int64_t in);
  // The same weight with `rows` applied to both parts along their first axis (the output rows:
  // a split of fused projections, a permutation of heads).
  QuantizedWeight map_rows(const std::function<Tensor(const Tensor&)>& rows) const;
  QuantizedWeight realized() const;  // both parts contiguous and computed
  Tensor dequantized() const;        // (out, in) float32, each value as ggml computes it

  // x (..., in) times the weight transposed: (..., out), float32. Each 32 inputs are quantized as
  // ggml's Q8_0 (d = max |x| / 127, x / d rounded), so this is close to x.matmul(dequantized().T)
  // but not equal: what llama.cpp computes.
  Tensor matvec(const Tensor& x) const { return matvec(quantize(x)); }

  // x quantized and laid out as the weight's words: each 32's 8 words of int8 and minus the sum
  // of its 32 values (which the weight's offset, -8 or -128, multiplies), (..., 1, in / 32 / G,
  // 9, G) int32; and each 32's d, (..., 1, in / 32 / G, 1, G). Weights of the same width share
  // it, of either format (a layer's q, k and v).
  struct Input {
    Tensor ints, d;
  };
  Input quantize(const Tensor& x) const;
  Tensor matvec(const Input& x) const;
};

}  // namespace tc::nn
