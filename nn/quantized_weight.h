// A projection's weight kept in one of ggml's block formats, repacked in 32-element blocks for
// products that multiply its integers with int8 inputs four at a time (DOT4: x86's vpdpbusd).
// This is llama.cpp's CPU path, which repacks these formats on load and quantizes the input before
// each product: to Q8_0 (int8 and a scale per 32) for Q4_0, Q5_0 and Q8_0, as here for every
// format (llama.cpp takes Q8_1 for Q4_1 and Q5_1, and Q8_K, per 256, for the K formats). A
// block's values, q its unsigned integers of 4, 5, 6 or 8 bits:
//   Q4_0, Q5_0, Q8_0: (q - 8, 16 or 128) * d, a scale per 32 (Q8_0's q: ggml's int8 + 128);
//   Q4_1, Q5_1, Q4_K, Q5_K: s * q + m, a scale and an offset per 32 (the K formats': ggml's
//     d * sc and -dmin * m);
//   Q6_K: (q - 32) * s, a scale per 16 (ggml's d * sc).
// Scales are kept as float16: for the K formats ggml's products of two scales, rounded (a
// relative 2^-11; 0.5 bit a weight more than the file). ggml's integer scales, kept and multiplied
// in the kernel, made Q4_K's decode 7% and its prefill 35% slower (measured).
#pragma once

#include <cstdint>
#include <functional>

#include "tinycore/tensor.h"

namespace tc::nn {

struct QuantizedWeight {
  enum class Format { kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ8_0, kQ4_K, kQ5_K, kQ6_K };
  Format format = Format::kQ4_0;
  // (out, in / 32 / G, words, G) int32: G blocks side by side (the largest power of two up to 16
  // that divides in / 32). Word m holds q of inputs 4m .. 4m + 3, a byte each: 8-bit formats have 8
  // words; the others 4 of q's low 4 bits, inputs 4m .. 4m + 3 in their low nibbles and 16 + 4m ..
  // in their high ones (ggml's order), then those of the bits above: 5-bit formats 1 word, whose
  // byte i's bit k is input 4k + i's; Q6_K 2, whose word h's byte i's bits 2r, 2r + 1 are input 16h
  // + 4r + i's.
  Tensor words;
  Tensor scales;  // (out, in / 32 / G, 1 or 2, G) float16: d; or s, m; or Q6_K's halves'

  // The (out, in) weight from q (out, in), any integer type, and its blocks' scales (out, in / 32,
  // 1 or 2), float (lazy).
  static QuantizedWeight pack(Format format, const Tensor& q, const Tensor& scales);
  // The same weight with `rows` applied to both parts along their first axis (the output rows:
  // a split of fused projections, a permutation of heads).
  QuantizedWeight map_rows(const std::function<Tensor(const Tensor&)>& rows) const;
  QuantizedWeight realized() const;  // both parts contiguous and computed
  Tensor dequantized() const;        // (out, in) float32: ggml's values (the K formats' near)
  // The float32 scale i (0 or 1) of each block, (out, in / 32 / G, 1, G): d, s or m.
  Tensor block_scale(int i) const;

  // x (..., in) times the weight transposed: (..., out), float32. Each 32 inputs are quantized as
  // ggml's Q8_0 (d = max |x| / 127, x / d rounded), so this is close to x.matmul(dequantized().T)
  // but not equal: what llama.cpp computes for Q4_0, Q5_0 and Q8_0.
  Tensor matvec(const Tensor& x) const { return matvec(quantize(x)); }

  // x quantized and laid out as the weight's words: each 32's 8 words of int8, minus the sum of
  // its 32 values and minus that of its first 16 (which a weight's offset or min multiplies),
  // (..., 1, in / 32 / G, 10, G) int32; and each 32's d, (..., 1, in / 32 / G, 1, G). Weights of
  // the same width share it, of any format (a layer's q, k and v).
  struct Input {
    Tensor ints, d;
  };
  Input quantize(const Tensor& x) const;
  Tensor matvec(const Input& x) const;
};

}  // namespace tc::nn
