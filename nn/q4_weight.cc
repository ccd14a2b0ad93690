#include "nn/q4_weight.h"

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

// Bytes (..., 4) of any integer type as the little-endian int32 words they make: (...).
Tensor words_of(const Tensor& bytes) {
  static const int32_t shifts[4] = {0, 8, 16, 24};
  Tensor by = Tensor::from_blob(shifts, {4}, i32, bytes.device());
  Tensor b = bytes.cast(i32);
  return (b.bitwise_and(b.scalar_like(255)) << by).sum(-1).cast(i32);
}

}  // namespace

Q4Weight Q4Weight::from_blocks(const Tensor& raw, int64_t out, int64_t in) {
  if (raw.dtype() != dtypes::uint8 || raw.ndim() != 1 || out <= 0 || in <= 0 || in % 32 != 0 ||
      raw.shape()[0] != out * (in / 32) * 18)
    fail("Q4Weight: a (%d, %d) weight is %d blocks of 18 bytes (in a multiple of 32), not %s %s",
         out, in, out * (in / 32), raw.dtype().name(), fmt_shape(raw.shape()));
  int64_t nb = in / 32, g = 16;
  while (nb % g != 0) g /= 2;
  Tensor blocks = raw.reshape({out, nb, 18});
  Tensor d = blocks.shrink({{0, out}, {0, nb}, {0, 2}}).bitcast(dtypes::float16);
  // (out, nb, 4) words made with shifts: a bitcast of the strided bytes would copy them first
  Tensor nibbles = words_of(blocks.shrink({{0, out}, {0, nb}, {2, 18}}).reshape({out, nb, 4, 4}));
  return {side_by_side(nibbles, g), side_by_side(d, g)};
}

Q4Weight Q4Weight::map_rows(const std::function<Tensor(const Tensor&)>& rows) const {
  return {rows(words), rows(scales)};
}

Q4Weight Q4Weight::realized() const {
  Tensor w = words.contiguous(), s = scales.contiguous();
  realize_all({w, s});
  return {w, s};
}

Tensor Q4Weight::dequantized() const {
  const Shape& s = words.shape();  // (out, nb / g, 4, g)
  const int64_t out = s[0], groups = s[1], g = s[3];
  // input 16h + 4m + i of a block is nibble h of byte i of its word m
  static const int32_t shifts[8] = {0, 8, 16, 24, 4, 12, 20, 28};
  Tensor by = Tensor::from_blob(shifts, {1, 1, 1, 2, 1, 4}, i32, words.device());
  Tensor w = words.transpose(-1, -2).reshape({out, groups, g, 1, 4, 1});
  Tensor q = (w.expand({out, groups, g, 2, 4, 4}) >> by).bitwise_and(w.scalar_like(15));
  Tensor d = scales.reshape({out, groups, g, 1, 1, 1}).cast(f32);
  return ((q.cast(f32) - 8) * d).reshape({out, groups * g * 32});
}

Q4Weight::Input Q4Weight::quantize(const Tensor& x) const {
  const Shape& s = words.shape();
  const int64_t groups = s[1], g = s[3], nb = groups * g;
  if (x.ndim() == 0 || x.shape().back() != nb * 32)
    fail("Q4Weight.matvec: x of shape %s does not end in the weight's %d inputs",
         fmt_shape(x.shape()), nb * 32);
  Shape lead(x.shape().begin(), x.shape().end() - 1);
  // ggml's Q8_0 (quantize_row_q8_0_ref): per 32, d = max |x| / 127 and q = x * (1 / d) rounded
  // half away from zero (roundf), 0 where all are 0. d and q in kernels of their own: the packing
  // reads each q three times (its word, the other half's, a sum).
  Tensor blocks = x.cast(f32).reshape(join(lead, {nb, 32}));
  Tensor d = (blocks.abs().max(-1, true) / 127).contiguous();
  Tensor v = blocks * d.gt(0).where(d.scalar_like(1) / d, 0.0f);
  Tensor q = (v + v.lt(0).where(-0.5f, 0.5f)).cast(i32).contiguous();  // the cast truncates
  Tensor bytes = q.reshape(join(lead, {nb, 8, 4}));
  Tensor packed = words_of(bytes);
  // each word of the weight meets two of x's (its low nibbles' and its high ones'), and the
  // weight's -8 is -8 times the sum of the eight inputs it multiplies, added to the dot product
  std::vector<Tensor> xw = side_by_side(packed, g).split(4, -2);  // (..., groups, 4, g) each
  std::vector<Tensor> sums = side_by_side(bytes.sum(-1).cast(i32), g).split(4, -2);
  Tensor ints = Tensor::stack(std::vector<Tensor>{xw[0], xw[1], (sums[0] + sums[1]) * -8}, -3);
  return {ints.reshape(join(lead, {1, groups, 3, 4, g})).contiguous(),
          d.reshape(join(lead, {1, groups, 1, g}))};
}

Tensor Q4Weight::matvec(const Input& x) const {
  std::vector<Tensor> part = x.ints.split(1, -3);  // (..., 1, groups, 1, 4, g) each
  for (Tensor& p : part) p = p.squeeze(-3);
  Tensor mask = words.scalar_like(0x0F0F0F0F);
  Tensor hi = (words >> 4).bitwise_and(mask);
  Tensor dot = words.bitwise_and(mask).dot4(part[0], hi.dot4(part[1], part[2]));
  return (dot.cast(f32) * (scales.cast(f32) * x.d)).sum({-3, -2, -1});
}

}  // namespace tc::nn
