#include "nn/quantized_weight.h"

#include "tinycore/error.h"
#include "tinycore/helpers.h"

namespace tc::nn {
namespace {

const DType f32 = dtypes::float32, i32 = dtypes::int32;

// `lead` with `tail` after it.
Shape join(Shape lead, const Shape& tail) {
  lead.insert(lead.end(), tail.begin(), tail.end());
  return lead;
}

// The blocks' words of 4 bytes (..., nb, 8 or 4, 4 bytes) as laid out beside a weight's: (..., nb
// / g, words, g), g blocks side by side.
Tensor side_by_side(const Tensor& words, int64_t g) {
  Shape s = words.shape();
  const int64_t n = static_cast<int64_t>(s.size()), nb = s[n - 2], w = s[n - 1];
  s.resize(n - 2);
  Tensor t = words.reshape(join(s, {nb / g, g, w}));
  return t.transpose(-1, -2);
}

// A word's bytes, little-endian.
const int32_t kByteShifts[4] = {0, 8, 16, 24};

// Bytes (..., 4) of any integer type as the little-endian int32 words they make: (...).
Tensor words_of(const Tensor& bytes) {
  Tensor by = Tensor::from_blob(kByteShifts, {4}, i32, bytes.device());
  Tensor b = bytes.cast(i32);
  return (b.bitwise_and(b.scalar_like(255)) << by).sum(-1).cast(i32);
}

// words_of's inverse: int32 words (...) as their bytes (..., 4), each 0..255.
Tensor bytes_of(const Tensor& words) {
  Tensor by = Tensor::from_blob(kByteShifts, {4}, i32, words.device());
  return (words.unsqueeze(-1) >> by).bitwise_and(words.scalar_like(255));
}

using Format = QuantizedWeight::Format;

// Bytes of a block, and words of its values.
int64_t block_bytes(Format f) { return f == Format::kQ4_0 ? 18 : 34; }
int64_t words_per_block(Format f) { return f == Format::kQ4_0 ? 4 : 8; }

}  // namespace

QuantizedWeight QuantizedWeight::from_blocks(Format format, const Tensor& raw, int64_t out,
                                             int64_t in) {
  const int64_t bytes = block_bytes(format), words = words_per_block(format);
  if (raw.dtype() != dtypes::uint8 || raw.ndim() != 1 || out <= 0 || in <= 0 || in % 32 != 0 ||
      raw.shape()[0] != out * (in / 32) * bytes)
    fail(
        "QuantizedWeight: a (%d, %d) weight is %d blocks of %d bytes (in a multiple of 32), not "
        "%s %s",
        out, in, out * (in / 32), bytes, raw.dtype().name(), fmt_shape(raw.shape()));
  int64_t nb = in / 32, g = 16;
  while (nb % g != 0) g /= 2;
  Tensor blocks = raw.reshape({out, nb, bytes});
  Tensor d = blocks.shrink({{0, out}, {0, nb}, {0, 2}}).bitcast(dtypes::float16);
  Tensor values = blocks.shrink({{0, out}, {0, nb}, {2, bytes}}).reshape({out, nb, words, 4});
  if (format == Format::kQ8_0) values = values.cast(i32) + 128;  // q + 128: unsigned
  // words made with shifts: a bitcast of the strided bytes would copy them first
  return {format, side_by_side(words_of(values), g), side_by_side(d, g)};
}

QuantizedWeight QuantizedWeight::map_rows(const std::function<Tensor(const Tensor&)>& rows) const {
  return {format, rows(words), rows(scales)};
}

QuantizedWeight QuantizedWeight::realized() const {
  Tensor w = words.contiguous(), s = scales.contiguous();
  realize_all({w, s});
  return {format, w, s};
}

Tensor QuantizedWeight::dequantized() const {
  const Shape& s = words.shape();  // (out, nb / g, words, g)
  const int64_t out = s[0], groups = s[1], g = s[3];
  Tensor b = bytes_of(words.transpose(-1, -2));  // (out, groups, g, words, 4)
  // Q8_0's input 4m + i is byte i of word m, stored + 128; Q4_0's input 16h + 4m + i is nibble h
  // of that byte, stored + 8
  Tensor q =
      format == Format::kQ8_0 ? b - 128 : b.bitwise_and(b.scalar_like(15)).stack({b >> 4}, -3) - 8;
  Tensor d = scales.reshape({out, groups, g, 1}).cast(f32);
  return (q.reshape({out, groups, g, 32}).cast(f32) * d).reshape({out, groups * g * 32});
}

QuantizedWeight::Input QuantizedWeight::quantize(const Tensor& x) const {
  const Shape& s = words.shape();
  const int64_t groups = s[1], g = s[3], nb = groups * g;
  if (x.ndim() == 0 || x.shape().back() != nb * 32)
    fail("QuantizedWeight: x of shape %s does not end in the weight's %d inputs",
         fmt_shape(x.shape()), nb * 32);
  Shape lead(x.shape().begin(), x.shape().end() - 1);
  // ggml's Q8_0 (quantize_row_q8_0_ref): per 32, d = max |x| / 127 and q = x * (1 / d) rounded
  // half away from zero (roundf), 0 where all are 0. d, q and the sums in kernels of their own:
  // the packing reads each q more than once, and beside each word it would sum a whole block.
  Tensor blocks = x.cast(f32).reshape(join(lead, {nb, 32}));
  Tensor d = (blocks.abs().max(-1, true) / 127).contiguous();
  Tensor v = blocks * d.gt(0).where(d.scalar_like(1) / d, 0.0f);
  Tensor q = (v + v.lt(0).where(-0.5f, 0.5f)).cast(i32).contiguous();  // the cast truncates
  Tensor bytes = q.reshape(join(lead, {nb, 8, 4}));
  // x's 8 words, then minus the sum of its bytes: the weight's offset (-8, -128) times that is
  // what the offset adds to the products, so the weight needs no bytes for it
  Tensor sums = bytes.sum({-2, -1}).cast(i32).neg().reshape(join(lead, {nb, 1})).contiguous();
  Tensor ints = side_by_side(words_of(bytes).cat({sums}, -1), g);  // (..., groups, 9, g)
  return {ints.reshape(join(lead, {1, groups, 9, g})).contiguous(),
          d.reshape(join(lead, {1, groups, 1, g}))};
}

Tensor QuantizedWeight::matvec(const Input& x) const {
  // each block's integer dot product as one chain of DOT4s, started from the offset's part:
  // Q4_0's word m holds inputs m (low nibbles) and 4 + m (high ones) of x's words
  std::vector<Tensor> xw = x.ints.split(1, -2), w = words.split(1, -2);
  Tensor acc = xw[8] * (format == Format::kQ8_0 ? 128 : 8);
  if (format == Format::kQ8_0) {
    for (int m = 0; m < 8; m++) acc = w[m].dot4(xw[m], acc);
  } else {
    Tensor mask = words.scalar_like(0x0F0F0F0F);
    for (int m = 0; m < 4; m++)
      acc = w[m].bitwise_and(mask).dot4(xw[m], (w[m] >> 4).bitwise_and(mask).dot4(xw[4 + m], acc));
  }
  return (acc.cast(f32) * (scales.cast(f32) * x.d)).sum({-3, -2, -1});
}

}  // namespace tc::nn
