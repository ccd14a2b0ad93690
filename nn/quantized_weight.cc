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

// How a format stores q and what its scales are: its bits, the offset subtracted from q (or an
// offset m added per 32, scales {s, m}), and whether its two scales are those of halves (Q6_K).
struct Layout {
  int bits, offset;
  bool min, halves;
  int scales() const { return min || halves ? 2 : 1; }
  // the words of bits above the nibbles (5 and 6 bits), and the value words each serves
  int extra() const { return bits == 5 || bits == 6 ? bits - 4 : 0; }
  int fields() const { return extra() > 0 ? 8 / extra() : 0; }
};
Layout layout(Format f) {
  switch (f) {
    case Format::kQ4_0:
      return {4, 8, false, false};
    case Format::kQ5_0:
      return {5, 16, false, false};
    case Format::kQ8_0:
      return {8, 128, false, false};
    case Format::kQ4_1:
    case Format::kQ4_K:
      return {4, 0, true, false};
    case Format::kQ5_1:
    case Format::kQ5_K:
      return {5, 0, true, false};
    case Format::kQ6_K:
      return {6, 32, false, true};
  }
  fail("QuantizedWeight: format %d is not one of ggml's block formats", static_cast<int>(f));
}

// A word's nibbles.
const int32_t kNibbles = 0x0F0F0F0F;

}  // namespace

QuantizedWeight QuantizedWeight::pack(Format format, const Tensor& q, const Tensor& scales) {
  const Layout l = layout(format);
  const int64_t out = q.ndim() == 2 ? q.shape()[0] : 0, in = q.ndim() == 2 ? q.shape()[1] : 0;
  if (out <= 0 || in <= 0 || in % 32 != 0 || scales.shape() != Shape{out, in / 32, l.scales()})
    fail(
        "QuantizedWeight: q %s is not (out, in) with in a multiple of 32, or its scales %s are "
        "not (out, in / 32, %d)",
        fmt_shape(q.shape()), fmt_shape(scales.shape()), l.scales());
  int64_t nb = in / 32, g = 16;
  while (nb % g != 0) g /= 2;
  Tensor v = q.cast(i32).reshape({out, nb, 32});
  auto packed = [&](const Tensor& words) -> QuantizedWeight {
    return {format, side_by_side(words, g), side_by_side(scales.cast(dtypes::float16), g)};
  };
  if (l.bits == 8) return packed(words_of(v.reshape({out, nb, 8, 4})));
  // inputs i and 16 + i share byte i
  std::vector<Tensor> half = v.bitwise_and(v.scalar_like(15)).split(16, -1);
  Tensor words = words_of(half[0].bitwise_or(half[1] << 4).reshape({out, nb, 4, 4}));
  if (l.bits == 4) return packed(words);
  // the bits above of value word k (inputs 4k + i) at bits e * (k % f) of extra word k / f's
  // byte i (or-ed, not summed: a reduce inside words_of's would realize q, 4 bytes a weight)
  const int e = l.extra(), f = l.fields();
  Tensor above = (v >> 4).bitwise_and(v.scalar_like((1 << e) - 1));  // q must fit its bits
  std::vector<Tensor> field = above.reshape({out, nb, e, f, 4}).split(1, -2);
  Tensor high = field[0];
  for (int k = 1; k < f; k++) high = high.bitwise_or(field[k] << (e * k));
  return packed(words.cat({words_of(high.squeeze(-2))}, -1));
}

QuantizedWeight QuantizedWeight::map_rows(const std::function<Tensor(const Tensor&)>& rows) const {
  return {format, rows(words), rows(scales)};
}

QuantizedWeight QuantizedWeight::realized() const {
  Tensor w = words.contiguous(), s = scales.contiguous();
  realize_all({w, s});
  return {format, w, s};
}

Tensor QuantizedWeight::block_scale(int i) const {
  if (i < 0 || i >= scales.shape()[2])
    fail("QuantizedWeight: block_scale(%d) of a weight with %d scales a block", i,
         scales.shape()[2]);
  return scales.split(1, -2)[static_cast<size_t>(i)].cast(f32);
}

Tensor QuantizedWeight::dequantized() const {
  const Layout l = layout(format);
  const Shape& s = words.shape();  // (out, nb / g, words, g)
  const int64_t out = s[0], groups = s[1], g = s[3];
  Tensor b = bytes_of(words.transpose(-1, -2));  // (out, groups, g, words, 4)
  // q in input order, (out, groups, g, 32): an 8-bit format's input 4m + i is byte i of word m;
  // the others' input 16h + 4m + i nibble h of that byte, and the bits above from the words after
  Tensor q = b;
  if (l.bits != 8) {
    Tensor nib = b.shrink({{0, out}, {0, groups}, {0, g}, {0, 4}, {0, 4}});
    q = nib.bitwise_and(b.scalar_like(15)).stack({nib >> 4}, -3).reshape({out, groups, g, 8, 4});
    if (l.bits > 4) {
      const int e = l.extra(), f = l.fields();
      std::vector<int32_t> shifts;
      for (int k = 0; k < f; k++) shifts.push_back(e * k);
      Tensor by = Tensor::from_blob(shifts.data(), {f, 1}, i32, b.device());
      Tensor high = b.shrink({{0, out}, {0, groups}, {0, g}, {4, 4 + e}, {0, 4}}).unsqueeze(-2);
      high = (high >> by).bitwise_and(b.scalar_like((1 << e) - 1));  // (.., e, f, 4)
      q = q.bitwise_or(high.reshape({out, groups, g, 8, 4}) << 4);
    }
  }
  q = q.reshape({out, groups, g, 32});
  Tensor sc = scales.transpose(-1, -2).cast(f32);  // (out, groups, g, 1 or 2)
  std::vector<Tensor> part = sc.split(1, -1);
  if (l.min) return (part[0] * q.cast(f32) + part[1]).reshape({out, groups * g * 32});
  Tensor v = (q - l.offset).cast(f32);
  if (l.halves) v = (v.reshape({out, groups, g, 2, 16}) * sc.unsqueeze(-1)).reshape(q.shape());
  return (l.halves ? v : v * sc).reshape({out, groups * g * 32});
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
  // x's 8 words, then minus the sums of its 32 bytes and of its first 16: a weight's offset (8,
  // 128, 32 a half) or min times those is what they add to the products, so it needs no bytes
  std::vector<Tensor> half =
      q.reshape(join(lead, {nb, 2, 16})).sum(-1).cast(i32).neg().split(1, -1);
  Tensor sums = (half[0] + half[1]).cat({half[0]}, -1).contiguous();
  Tensor ints = side_by_side(words_of(bytes).cat({sums}, -1), g);  // (..., groups, 10, g)
  return {ints.reshape(join(lead, {1, groups, 10, g})).contiguous(),
          d.reshape(join(lead, {1, groups, 1, g}))};
}

Tensor QuantizedWeight::matvec(const Input& x) const {
  // each block's integer dot products as chains of DOT4s, started from the part of the offset,
  // then one conversion and one scale each: x's word k holds inputs 4k .. 4k + 3, as does the
  // weight's value word k
  const Layout l = layout(format);
  const Shape& s = words.shape();
  auto ends_in = [](const Tensor& t, const Shape& tail) {
    return t.ndim() >= 4 && Shape(t.shape().end() - 3, t.shape().end()) == tail;
  };
  if (!ends_in(x.ints, {s[1], 10, s[3]}) || !ends_in(x.d, {s[1], 1, s[3]}))
    fail("QuantizedWeight: an input quantized as %s and %s is not one for this weight's %s",
         fmt_shape(x.ints.shape()), fmt_shape(x.d.shape()), fmt_shape(s));
  std::vector<Tensor> xw = x.ints.split(1, -2), w = words.split(1, -2);
  auto value_word = [&](int k) {
    if (l.bits == 8) return w[k];
    Tensor v = (k < 4 ? w[k] : w[k - 4] >> 4).bitwise_and(w[0].scalar_like(kNibbles));
    if (l.bits == 4) return v;
    const int e = l.extra(), f = l.fields(), bytes = e == 1 ? 0x01010101 : 0x03030303;
    Tensor high = (w[4 + k / f] >> (e * (k % f))).bitwise_and(w[0].scalar_like(bytes));
    return v.bitwise_or(high << 4);
  };
  auto chain = [&](const std::vector<int>& ks, Tensor acc) {
    for (int k : ks) acc = value_word(k).dot4(xw[k], acc);
    return acc.cast(f32);
  };
  auto scaled = [&](int i) { return block_scale(i) * x.d; };
  // a word's two nibbles one after the other (where the weight has nibbles)
  const std::vector<int> order = l.bits == 8 ? std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}
                                             : std::vector<int>{4, 0, 5, 1, 6, 2, 7, 3};
  auto products = [&]() {
    if (l.halves)  // each 16's (q - offset) s
      return chain({0, 1, 2, 3}, xw[9] * l.offset) * scaled(0) +
             chain({4, 5, 6, 7}, (xw[8] - xw[9]) * l.offset) * scaled(1);
    if (l.min)  // s Σ q x + m Σ x, x's sum being minus xw[8]
      return chain(order, xw[8] * 0) * scaled(0) - xw[8].cast(f32) * scaled(1);
    return chain(order, xw[8] * l.offset) * scaled(0);  // (q - offset) d
  };
  return products().sum({-3, -2, -1});
}

}  // namespace tc::nn
