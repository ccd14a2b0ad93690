// A projection's weight kept as ggml's Q4_0 (4-bit integers q and a float16 scale d per 32 inputs:
// the value (q - 8) * d), laid out for a matvec that multiplies the nibbles with int8 inputs four
// at a time (DOT4: x86's vpdpbusd). This is llama.cpp's CPU path: it repacks Q4_0 on load and
// quantizes the input to Q8_0 (int8 and a scale per 32) before each product.
#pragma once

#include <cstdint>
#include <functional>

#include "tinycore/tensor.h"

namespace tc::nn {

struct Q4Weight {
  // (out, in / 32 / G, 4, G) int32: G blocks side by side (16, or fewer where `in` has fewer),
  // word m of a block being its nibble bytes 4m .. 4m + 3: inputs 4m .. 4m + 3 in the low
  // nibbles, 16 + 4m .. 16 + 4m + 3 in the high ones (ggml's order within a block)
  Tensor words;
  Tensor scales;  // (out, in / 32 / G, 1, G) float16

  // The (out, in) weight from the raw bytes of its ggml Q4_0 blocks (18 each; lazy).
  static Q4Weight from_blocks(const Tensor& raw, int64_t out, int64_t in);
  // The same weight with `rows` applied to both parts along their first axis (the output rows:
  // a split of fused projections, a permutation of heads).
  Q4Weight map_rows(const std::function<Tensor(const Tensor&)>& rows) const;
  Q4Weight realized() const;   // both parts contiguous and computed
  Tensor dequantized() const;  // (out, in) float32: each (q - 8) * d
  // x (..., in) times the weight transposed: (..., out), float32. Each 32 inputs are quantized as
  // ggml's Q8_0 (d = max |x| / 127, x / d rounded), so this is close to x.matmul(dequantized().T)
  // but not equal: what llama.cpp computes.
  Tensor matvec(const Tensor& x) const { return matvec(quantize(x)); }

  // x quantized, laid out as the weight's words: its words of int8 against their low nibbles and
  // their high ones, and -8 times the sums they meet, (..., 1, in / 32 / G, 3, 4, G) int32; and
  // each 32's d, (..., 1, in / 32 / G, 1, G). Weights of one width share it (a layer's q, k, v).
  struct Input {
    Tensor ints, d;
  };
  Input quantize(const Tensor& x) const;
  Tensor matvec(const Input& x) const;
};

}  // namespace tc::nn
