#include "frontends/llm/quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tinycore/error.h"
#include "tinycore/helpers.h"

namespace tc::gguf {
namespace {

const DType f32 = dtypes::float32;

// Entries [lo, hi) of the last dimension.
Tensor cols(const Tensor& t, int64_t lo, int64_t hi) {
  std::vector<std::pair<int64_t, int64_t>> keep;
  for (size_t i = 0; i + 1 < t.shape().size(); i++) keep.push_back({0, t.shape()[i]});
  keep.push_back({lo, hi});
  return t.shrink(keep);
}

Tensor mask(const Tensor& t, int m) { return t.bitwise_and(t.scalar_like(m)); }

// Why the shapes below: the scheduler gives a computed value that is then broadcast (expanded) a
// kernel of its own, rather than recompute it per copy. So a block's fields (its f16 scales, its
// packed 6-bit scales, its high bits) are broadcast as raw bytes, views of the buffer, and decoded
// per element after: then the whole dequantization fuses into the kernel that reads it (a matmul
// with one row of input is one kernel). Shift amounts come from a small constant buffer for the
// same reason (arange is computed).

// The bytes [lo, hi) of every block, broadcast over `per` (the element shape each one serves):
// [nb, per..., hi - lo].
Tensor field(const Tensor& blocks, int64_t lo, int64_t hi, const Shape& per) {
  Shape one{blocks.shape()[0]}, all{blocks.shape()[0]};
  for (int64_t p : per) one.push_back(1), all.push_back(p);
  one.push_back(hi - lo), all.push_back(hi - lo);
  return cols(blocks, lo, hi).reshape(one).expand(all);
}

// The little-endian f16 at byte `at` of every block as float32, broadcast: [nb, per...].
Tensor f16_at(const Tensor& blocks, int64_t at, const Shape& per) {
  Tensor h = field(blocks, at, at + 2, per).bitcast(dtypes::float16);  // [nb, per..., 1]
  return h.squeeze(-1).cast(f32);
}

// Constant uint8 values of `shape` on the blocks' device.
Tensor constants(const Tensor& like, const std::vector<uint8_t>& v, const Shape& shape) {
  return Tensor::from_blob(v.data(), shape, dtypes::uint8, like.device());
}

// Both nibbles of bytes [..., n]: the low ones then the high ones, [..., 2n] (ggml's order for the
// 32-element blocks), or stacked as [..., 2, n] when `stacked`.
Tensor nibbles(const Tensor& bytes, bool stacked = false) {
  Tensor lo = mask(bytes, 15), hi = bytes >> 4;
  int dim = static_cast<int>(bytes.shape().size()) - 1;
  return stacked ? Tensor::stack(std::vector<Tensor>{lo, hi}, dim)
                 : Tensor::cat(std::vector<Tensor>{lo, hi}, dim);
}

// The 32 high bits of the 32-element Q5 blocks (a little-endian uint32 at byte `at`), bit e for
// element e: [nb, 32] of 0 or 1.
Tensor high_bits(const Tensor& blocks, int64_t at) {
  const int64_t nb = blocks.shape()[0];
  Tensor bytes = cols(blocks, at, at + 4).reshape({nb, 4, 1}).expand({nb, 4, 8});
  Tensor shifts = constants(blocks, {0, 1, 2, 3, 4, 5, 6, 7}, {1, 1, 8});
  return mask(bytes >> shifts, 1).reshape({nb, 32});
}

// The q of Q4_0, Q4_1, Q5_0 and Q5_1 blocks (nibbles, and the Q5s' fifth bits): [nb, 32].
Tensor q_of(const Tensor& blocks, uint32_t type) {
  switch (type) {
    case Q4_0:
      return nibbles(cols(blocks, 2, 18));
    case Q4_1:
      return nibbles(cols(blocks, 4, 20));
    case Q5_0:
      return nibbles(cols(blocks, 6, 22)).bitwise_or(high_bits(blocks, 2) << 4);
    default:  // Q5_1
      return nibbles(cols(blocks, 8, 24)).bitwise_or(high_bits(blocks, 4) << 4);
  }
}

// Q4_K and Q5_K: d * scale and dmin * min of each of the 8 sub-blocks (6 bits each, packed in 12
// bytes at byte 4 as ggml's get_scale_min_k4 reads them), broadcast over `per` elements: [nb, 8,
// per] each.
std::pair<Tensor, Tensor> k_scales(const Tensor& blocks, int64_t per) {
  Tensor s = field(blocks, 4, 16, {per}).permute({0, 2, 1});  // [nb, 12, per]
  auto rows = [&](int64_t lo) { return s.shrink({{0, s.shape()[0]}, {lo, lo + 4}, {0, per}}); };
  Tensor s0 = rows(0), s1 = rows(4), s2 = rows(8);
  Tensor sc =
      Tensor::cat(std::vector<Tensor>{mask(s0, 63), mask(s2, 15).bitwise_or((s0 >> 6) << 4)}, 1);
  Tensor mn =
      Tensor::cat(std::vector<Tensor>{mask(s1, 63), (s2 >> 4).bitwise_or((s1 >> 6) << 4)}, 1);
  return {f16_at(blocks, 0, {8, per}) * sc.cast(f32), f16_at(blocks, 2, {8, per}) * mn.cast(f32)};
}

// Q4_K's q (4 chunks of 32 bytes; chunk j holds sub-block 2j in its low nibbles, 2j+1 in its high):
// [nb, 8, 32].
Tensor q4_k_values(const Tensor& blocks, int64_t qs_at) {
  const int64_t nb = blocks.shape()[0];
  return nibbles(cols(blocks, qs_at, qs_at + 128).reshape({nb, 4, 32}), true).reshape({nb, 8, 32});
}

// Q5_K's q: Q4_K's, with sub-block s's fifth bit of lane l bit s of qh[l]: [nb, 8, 32].
Tensor q5_k_values(const Tensor& blocks) {
  const int64_t nb = blocks.shape()[0];
  Tensor qh = cols(blocks, 16, 48).reshape({nb, 1, 32}).expand({nb, 8, 32});
  Tensor shifts = constants(blocks, {0, 1, 2, 3, 4, 5, 6, 7}, {1, 8, 1});
  return q4_k_values(blocks, 48).bitwise_or(mask(qh >> shifts, 1) << 4);
}

// Q6_K's q, 0..63, [nb, 256]: each half of 128 values, quarter k (0..3), lane l takes the nibble
// k/2 of ql[32*(k%2)+l] and bits 2k, 2k+1 of qh[l].
Tensor q6_k_values(const Tensor& blocks) {
  const int64_t nb = blocks.shape()[0];
  Tensor lo = nibbles(cols(blocks, 0, 128).reshape({nb, 2, 64}), true).reshape({nb, 2, 4, 32});
  Tensor qh = cols(blocks, 128, 192).reshape({nb, 2, 1, 32}).expand({nb, 2, 4, 32});
  Tensor shifts = constants(blocks, {0, 2, 4, 6}, {1, 1, 4, 1});
  return lo.bitwise_or(mask(qh >> shifts, 3) << 4).reshape({nb, 256});
}

// Q6_K's d * sc of each 16 values, broadcast over `per`: [nb, 16, per].
Tensor q6_k_scales(const Tensor& blocks, int64_t per) {
  Tensor sc = field(blocks, 192, 208, {per}).permute({0, 2, 1}).bitcast(dtypes::int8);
  return f16_at(blocks, 208, {16, per}) * sc.cast(f32);
}

// The values of `nb` blocks [nb, block_bytes] of `type`: [nb, block_elems] (or any shape of that
// size). Each formula is ggml's dequantize_row_* in its order of float operations.
Tensor blocks_to_float(const Tensor& blocks, uint32_t type) {
  const int64_t nb = blocks.shape()[0];
  switch (type) {
    case Q8_0:  // d, 32 int8
      return cols(blocks, 2, 34).bitcast(dtypes::int8).cast(f32) * f16_at(blocks, 0, {32});
    case Q4_0:  // d, 16 bytes of nibbles: (q - 8) * d
      return (q_of(blocks, type).cast(f32) - 8) * f16_at(blocks, 0, {32});
    case Q4_1:  // d, m, nibbles: q * d + m
    case Q5_1:  // d, m, 32 high bits, nibbles: q * d + m
      return q_of(blocks, type).cast(f32) * f16_at(blocks, 0, {32}) + f16_at(blocks, 2, {32});
    case Q5_0:  // d, 32 high bits, nibbles: (q - 16) * d
      return (q_of(blocks, type).cast(f32) - 16) * f16_at(blocks, 0, {32});
    case Q4_K:
    case Q5_K: {  // d, dmin, scales, [qh 32 bytes,] 128 bytes of nibbles: d*sc * q - dmin*m
      Tensor q = type == Q4_K ? q4_k_values(blocks, 16) : q5_k_values(blocks);
      auto [scale, min] = k_scales(blocks, 32);
      return scale * q.cast(f32) - min;
    }
    case Q6_K:  // 128 bytes ql, 64 bytes qh, 16 int8 scales, d: d*sc * (q - 32)
      return q6_k_scales(blocks, 16) * (q6_k_values(blocks).cast(f32) - 32).reshape({nb, 16, 16});
    default:
      fail("dequantize: ggml type %d (%s) is not a block type", type, type_info(type).name);
  }
}

// ggml's GGML_FP32_TO_FP16 (round to nearest even), as the bits stored in a block.
void put_f16(uint8_t* out, float x) {
  _Float16 h = static_cast<_Float16>(x);
  std::memcpy(out, &h, 2);
}
// The least float16 at or above x >= 0 (rounded up, so that every scale over it stays in range of
// its integers, where a subnormal float16 rounds by several percent).
float f16_up(float x) {
  _Float16 h = static_cast<_Float16>(x);
  if (static_cast<float>(h) < x) {
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    bits++;
    std::memcpy(&h, &bits, 2);
  }
  return static_cast<float>(h);
}

// ggml's Q4_K block of 256 values: per 32 a scale (max - min) / 15 and a min -min(0, ...), each
// 6 bits of the super-block's d and dmin (the largest / 63); q the nearest of 0..15. Simpler than
// ggml's quantize_row_q4_K (no search for the best scale), the same format.
void quantize_q4_k(const float* v, uint8_t* y) {
  float scale[8], min[8], dmax = 0, mmax = 0;
  for (int j = 0; j < 8; j++) {
    float lo = 0, hi = v[32 * j];
    for (int i = 0; i < 32; i++) lo = std::min(lo, v[32 * j + i]), hi = std::max(hi, v[32 * j + i]);
    scale[j] = (hi - lo) / 15, min[j] = -lo;
    dmax = std::max(dmax, scale[j]), mmax = std::max(mmax, min[j]);
  }
  const float d = f16_up(dmax / 63), dmin = f16_up(mmax / 63);
  put_f16(y, d), put_f16(y + 2, dmin);
  auto six = [](float x, float unit) {
    return unit > 0 ? std::clamp(std::lround(x / unit), 0L, 63L) : 0L;
  };
  int sc[8], m[8];
  for (int j = 0; j < 8; j++)
    sc[j] = static_cast<int>(six(scale[j], d)), m[j] = static_cast<int>(six(min[j], dmin));
  uint8_t* packed = y + 4;  // get_scale_min_k4's inverse
  for (int j = 0; j < 4; j++) {
    packed[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
    packed[j + 4] = static_cast<uint8_t>(m[j] | ((m[j + 4] >> 4) << 6));
    packed[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
  }
  uint8_t q[256];
  for (int i = 0; i < 256; i++) {
    const float unit = d * static_cast<float>(sc[i / 32]);
    const float x = v[i] + dmin * static_cast<float>(m[i / 32]);
    q[i] = static_cast<uint8_t>(unit > 0 ? std::clamp(std::lround(x / unit), 0L, 15L) : 0L);
  }
  for (int c = 0; c < 4; c++)  // chunk c: sub-block 2c in the low nibbles, 2c + 1 in the high
    for (int l = 0; l < 32; l++)
      y[16 + 32 * c + l] = static_cast<uint8_t>(q[64 * c + l] | (q[64 * c + 32 + l] << 4));
}

// ggml's Q6_K block of 256 values: per 16 a scale (max |x| / 31), an int8 of the block's d (the
// largest / 127); q the nearest of -32..31, stored + 32 in ql (low 4 bits) and qh (high 2).
void quantize_q6_k(const float* v, uint8_t* y) {
  float scale[16], dmax = 0;
  for (int j = 0; j < 16; j++) {
    float amax = 0;
    for (int i = 0; i < 16; i++) amax = std::max(amax, std::fabs(v[16 * j + i]));
    scale[j] = amax / 31, dmax = std::max(dmax, scale[j]);
  }
  const float d = f16_up(dmax / 127);
  put_f16(y + 208, d);
  int q[256];
  for (int j = 0; j < 16; j++) {
    const long sc = d > 0 ? std::clamp(std::lround(scale[j] / d), -128L, 127L) : 0;
    y[192 + j] = static_cast<uint8_t>(static_cast<int8_t>(sc));
    const float unit = d * static_cast<float>(sc);
    for (int i = 0; i < 16; i++)
      q[16 * j + i] =
          32 + static_cast<int>(unit > 0 ? std::clamp(std::lround(v[16 * j + i] / unit), -32L, 31L)
                                         : 0L);
  }
  for (int h = 0; h < 2; h++)  // dequantize_row_q6_K's order: quarters of each half of 128
    for (int l = 0; l < 32; l++) {
      const int* a = q + 128 * h + l;
      y[64 * h + l] = static_cast<uint8_t>((a[0] & 15) | ((a[64] & 15) << 4));
      y[64 * h + 32 + l] = static_cast<uint8_t>((a[32] & 15) | ((a[96] & 15) << 4));
      y[128 + 32 * h + l] = static_cast<uint8_t>((a[0] >> 4) | ((a[32] >> 4) << 2) |
                                                 ((a[64] >> 4) << 4) | ((a[96] >> 4) << 6));
    }
}

// The number of blocks of `raw`, the bytes of a `type` tensor of `shape`; throws naming `op`, the
// type, the shape and the sizes when they do not agree.
int64_t blocks_in(const char* op, const Tensor& raw, uint32_t type, const Shape& shape) {
  const TypeInfo* info;
  try {
    info = &type_info(type);
  } catch (const FormatError& e) {
    fail("%s: %s", op, e.what());
  }
  if (raw.dtype() != dtypes::uint8 || raw.shape().size() != 1)
    fail("%s: the raw bytes of a %s tensor must be a 1-D uint8 tensor, not %s of shape %s", op,
         info->name, raw.dtype().name(), fmt_shape(raw.shape()));
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d <= 0 || numel > (int64_t{1} << 56) / d)
      fail("%s: a %s tensor of shape %s", op, info->name, fmt_shape(shape));
    numel *= d;
  }
  if (shape.empty() || shape.back() % info->block_elems != 0)
    fail("%s: a %s tensor's last dimension must be a multiple of %d; shape %s", op, info->name,
         info->block_elems, fmt_shape(shape));
  const int64_t nb = numel / info->block_elems;
  if (raw.shape()[0] != nb * info->block_bytes)
    fail("%s: a %s tensor of shape %s is %d bytes, not %d", op, info->name, fmt_shape(shape),
         nb * info->block_bytes, raw.shape()[0]);
  return nb;
}

bool block_type(uint32_t t) {
  return t == Q4_0 || t == Q4_1 || t == Q5_0 || t == Q5_1 || t == Q8_0 || t == Q4_K || t == Q5_K ||
         t == Q6_K;
}

}  // namespace

Tensor dequantize(const Tensor& raw, uint32_t type, const Shape& shape) {
  const int64_t nb = blocks_in("dequantize", raw, type, shape);
  switch (type) {
    case F32:
      return raw.bitcast(f32).reshape(shape);
    case F16:
      return raw.bitcast(dtypes::float16).cast(f32).reshape(shape);
    case BF16:  // the upper half of a float32
      return (raw.bitcast(dtypes::uint16).cast(dtypes::uint32) << 16).bitcast(f32).reshape(shape);
    default:
      return blocks_to_float(raw.reshape({nb, type_info(type).block_bytes}), type).reshape(shape);
  }
}

bool packs(uint32_t type, const uint8_t* blocks, size_t bytes) {
  if (!block_type(type)) return false;
  if (type != Q4_K && type != Q5_K && type != Q6_K) return true;
  // the K formats keep d * sc (and dmin * m) as float16, which must not overflow where ggml's
  // float32 would not: |sc| is at most 63 (Q4_K, Q5_K) or 128 (Q6_K)
  const bool six = type == Q6_K;
  const size_t size = type_info(type).block_bytes, from = six ? 208 : 0, to = six ? 210 : 4;
  const float most = 65504.0f / (six ? 128 : 63);
  for (size_t b = 0; b + size <= bytes; b += size)
    for (size_t f = from; f < to; f += 2) {
      _Float16 h;
      std::memcpy(&h, blocks + b + f, 2);
      if (std::fabs(static_cast<float>(h)) > most && std::isfinite(static_cast<float>(h)))
        return false;
    }
  return true;
}

nn::QuantizedWeight packed(const Tensor& raw, uint32_t type, int64_t out, int64_t in) {
  using Format = nn::QuantizedWeight::Format;
  if (!block_type(type))
    fail(
        "packed: ggml type %d is not kept packed (the block types are: q4_0, q4_1, q5_0, q5_1, "
        "q8_0, q4_K, q5_K, q6_K)",
        type);
  const int64_t nb = blocks_in("packed", raw, type, {out, in});
  Tensor blocks = raw.reshape({nb, type_info(type).block_bytes});
  // q [nb, elements] and scales [nb, elements / 32, 1 or 2] as the weight's
  auto pack = [&](Format format, const Tensor& q, const Tensor& scales) {
    return nn::QuantizedWeight::pack(format, q.reshape({out, in}),
                                     scales.reshape({out, in / 32, scales.shape().back()}));
  };
  Tensor d = f16_at(blocks, 0, {1, 1}), m = f16_at(blocks, 2, {1, 1});  // (m: where it is one)
  switch (type) {
    case Q4_0:
      return pack(Format::kQ4_0, q_of(blocks, type), d);
    case Q4_1:
      return pack(Format::kQ4_1, q_of(blocks, type), d.cat({m}, -1));
    case Q5_0:
      return pack(Format::kQ5_0, q_of(blocks, type), d);
    case Q5_1:
      return pack(Format::kQ5_1, q_of(blocks, type), d.cat({m}, -1));
    case Q8_0:  // + 128: unsigned, as DOT4 multiplies
      return pack(Format::kQ8_0,
                  cols(blocks, 2, 34).bitcast(dtypes::int8).cast(dtypes::int32) + 128, d);
    case Q4_K:
    case Q5_K: {  // s * q + m: ggml's -dmin * m is the offset
      auto [scale, min] = k_scales(blocks, 1);
      return pack(type == Q4_K ? Format::kQ4_K : Format::kQ5_K,
                  type == Q4_K ? q4_k_values(blocks, 16) : q5_k_values(blocks),
                  scale.cat({min.neg()}, -1));
    }
    default:  // Q6_K: each 32's two scales
      return pack(Format::kQ6_K, q6_k_values(blocks), q6_k_scales(blocks, 1).reshape({nb, 8, 2}));
  }
}

std::vector<uint8_t> quantize(const float* x, int64_t n, uint32_t type) {
  if (type != Q8_0 && type != Q4_0 && type != Q4_K && type != Q6_K)
    fail("quantize: ggml type %d is not supported (only q8_0, q4_0, q4_K and q6_K)", type);
  const TypeInfo& info = type_info(type);
  if (n < 0 || n % info.block_elems != 0)
    fail("quantize: %d values are not a whole number of %s blocks of %d", n, info.name,
         info.block_elems);
  const int64_t bytes = info.block_bytes, elems = info.block_elems;
  std::vector<uint8_t> out(static_cast<size_t>(n / elems * bytes));
  for (int64_t i = 0; i < n; i++)
    if (!std::isfinite(x[i])) fail("quantize: value %d is %f, not a finite number", i, x[i]);
  for (int64_t b = 0; b < n / elems; b++) {
    const float* v = x + b * elems;
    uint8_t* y = out.data() + b * bytes;
    if (type == Q4_K) {
      quantize_q4_k(v, y);
    } else if (type == Q6_K) {
      quantize_q6_k(v, y);
    } else if (type == Q8_0) {  // quantize_row_q8_0_ref: d = amax / 127, q = round(x / d)
      float amax = 0;
      for (int j = 0; j < 32; j++) amax = std::max(amax, std::fabs(v[j]));
      const float d = amax / 127, id = d != 0 ? 1.0f / d : 0.0f;
      put_f16(y, d);
      for (int j = 0; j < 32; j++)
        y[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::roundf(v[j] * id)));
    } else {  // quantize_row_q4_0_ref: d = (the value of largest magnitude) / -8
      float amax = 0, max = 0;
      for (int j = 0; j < 32; j++)
        if (amax < std::fabs(v[j])) amax = std::fabs(v[j]), max = v[j];
      const float d = max / -8, id = d != 0 ? 1.0f / d : 0.0f;
      put_f16(y, d);
      // x * id and + 8.5 rounded apart, as C without FMA contraction (g++ -std=c++20 does not
      // contract; ggml built with -march=native and GNU C may, which moves rare ties)
      auto q = [&](float f) {
        return std::min(15, static_cast<int>(static_cast<int8_t>(f * id + 8.5f)));
      };
      for (int j = 0; j < 16; j++) y[2 + j] = static_cast<uint8_t>(q(v[j]) | (q(v[16 + j]) << 4));
    }
  }
  return out;
}

}  // namespace tc::gguf
