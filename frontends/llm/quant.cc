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

// Q4_K and Q5_K: d * scale and dmin * min of each of the 8 sub-blocks (6 bits each, packed in 12
// bytes at byte 4 as ggml's get_scale_min_k4 reads them), per element: [nb, 8, 32] each.
std::pair<Tensor, Tensor> k_scales(const Tensor& blocks) {
  Tensor s = field(blocks, 4, 16, {32}).permute({0, 2, 1});  // [nb, 12, 32]
  auto rows = [&](int64_t lo) { return s.shrink({{0, s.shape()[0]}, {lo, lo + 4}, {0, 32}}); };
  Tensor s0 = rows(0), s1 = rows(4), s2 = rows(8);
  Tensor sc =
      Tensor::cat(std::vector<Tensor>{mask(s0, 63), mask(s2, 15).bitwise_or((s0 >> 6) << 4)}, 1);
  Tensor mn =
      Tensor::cat(std::vector<Tensor>{mask(s1, 63), (s2 >> 4).bitwise_or((s1 >> 6) << 4)}, 1);
  return {f16_at(blocks, 0, {8, 32}) * sc.cast(f32), f16_at(blocks, 2, {8, 32}) * mn.cast(f32)};
}

// The values of `nb` blocks [nb, block_bytes] of `type`: [nb, block_elems] (or any shape of that
// size). Each formula is ggml's dequantize_row_* in its order of float operations.
Tensor blocks_to_float(const Tensor& blocks, uint32_t type) {
  const int64_t nb = blocks.shape()[0];
  switch (type) {
    case Q8_0:  // d, 32 int8
      return cols(blocks, 2, 34).bitcast(dtypes::int8).cast(f32) * f16_at(blocks, 0, {32});
    case Q4_0:  // d, 16 bytes of nibbles: (q - 8) * d
      return (nibbles(cols(blocks, 2, 18)).cast(f32) - 8) * f16_at(blocks, 0, {32});
    case Q4_1:  // d, m, nibbles: q * d + m
      return nibbles(cols(blocks, 4, 20)).cast(f32) * f16_at(blocks, 0, {32}) +
             f16_at(blocks, 2, {32});
    case Q5_0: {  // d, 32 high bits, nibbles: (q - 16) * d
      Tensor q = nibbles(cols(blocks, 6, 22)).bitwise_or(high_bits(blocks, 2) << 4);
      return (q.cast(f32) - 16) * f16_at(blocks, 0, {32});
    }
    case Q5_1: {  // d, m, 32 high bits, nibbles: q * d + m
      Tensor q = nibbles(cols(blocks, 8, 24)).bitwise_or(high_bits(blocks, 4) << 4);
      return q.cast(f32) * f16_at(blocks, 0, {32}) + f16_at(blocks, 2, {32});
    }
    case Q4_K:
    case Q5_K: {  // d, dmin, scales, [qh 32 bytes,] 128 bytes of nibbles: d*sc * q - dmin*m
      // 4 chunks of 32 bytes; chunk j holds sub-block 2j in its low nibbles, 2j+1 in its high.
      const int64_t qs_at = type == Q4_K ? 16 : 48;
      Tensor q =
          nibbles(cols(blocks, qs_at, qs_at + 128).reshape({nb, 4, 32}), true).reshape({nb, 8, 32});
      if (type == Q5_K) {  // sub-block s's fifth bit of lane l is bit s of qh[l]
        Tensor qh = cols(blocks, 16, 48).reshape({nb, 1, 32}).expand({nb, 8, 32});
        Tensor shifts = constants(blocks, {0, 1, 2, 3, 4, 5, 6, 7}, {1, 8, 1});
        q = q.bitwise_or(mask(qh >> shifts, 1) << 4);
      }
      auto [scale, min] = k_scales(blocks);
      return scale * q.cast(f32) - min;
    }
    case Q6_K: {  // 128 bytes ql, 64 bytes qh, 16 int8 scales, d: d*sc * (q - 32)
      // Each half of 128 values: quarter k (0..3), lane l takes the nibble k/2 of ql[32*(k%2)+l]
      // and bits 2k, 2k+1 of qh[l]; value i's scale is sc[i / 16].
      Tensor lo = nibbles(cols(blocks, 0, 128).reshape({nb, 2, 64}), true).reshape({nb, 2, 4, 32});
      Tensor qh = cols(blocks, 128, 192).reshape({nb, 2, 1, 32}).expand({nb, 2, 4, 32});
      Tensor shifts = constants(blocks, {0, 2, 4, 6}, {1, 1, 4, 1});
      Tensor q = lo.bitwise_or(mask(qh >> shifts, 3) << 4).cast(f32) - 32;
      Tensor sc = field(blocks, 192, 208, {16}).permute({0, 2, 1}).bitcast(dtypes::int8);
      Tensor scale = f16_at(blocks, 208, {16, 16}) * sc.cast(f32);  // [nb, 16, 16]
      return scale * q.reshape({nb, 16, 16});
    }
    default:
      fail("dequantize: ggml type %d (%s) is not a block type", type, type_info(type).name);
  }
}

// ggml's GGML_FP32_TO_FP16 (round to nearest even), as the bits stored in a block.
void put_f16(uint8_t* out, float x) {
  _Float16 h = static_cast<_Float16>(x);
  std::memcpy(out, &h, 2);
}

}  // namespace

Tensor dequantize(const Tensor& raw, uint32_t type, const Shape& shape) {
  const TypeInfo* info;
  try {
    info = &type_info(type);
  } catch (const FormatError& e) {
    fail("dequantize: %s", e.what());
  }
  if (raw.dtype() != dtypes::uint8 || raw.shape().size() != 1)
    fail("dequantize: the raw bytes of a %s tensor must be a 1-D uint8 tensor, not %s of shape %s",
         info->name, raw.dtype().name(), fmt_shape(raw.shape()));
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d <= 0 || numel > (int64_t{1} << 56) / d)
      fail("dequantize: a %s tensor of shape %s", info->name, fmt_shape(shape));
    numel *= d;
  }
  if (shape.empty() || shape.back() % info->block_elems != 0)
    fail("dequantize: a %s tensor's last dimension must be a multiple of %d; shape %s", info->name,
         info->block_elems, fmt_shape(shape));
  const int64_t nb = numel / info->block_elems;
  if (raw.shape()[0] != nb * info->block_bytes)
    fail("dequantize: a %s tensor of shape %s is %d bytes, not %d", info->name, fmt_shape(shape),
         nb * info->block_bytes, raw.shape()[0]);
  switch (type) {
    case F32:
      return raw.bitcast(f32).reshape(shape);
    case F16:
      return raw.bitcast(dtypes::float16).cast(f32).reshape(shape);
    case BF16:  // the upper half of a float32
      return (raw.bitcast(dtypes::uint16).cast(dtypes::uint32) << 16).bitcast(f32).reshape(shape);
    default:
      return blocks_to_float(raw.reshape({nb, info->block_bytes}), type).reshape(shape);
  }
}

bool packs(uint32_t type) { return type == Q4_0 || type == Q8_0; }

nn::QuantizedWeight::Format packed_format(uint32_t type) {
  if (!packs(type)) fail("ggml type %d is not kept packed (only q4_0 and q8_0)", type);
  return type == Q4_0 ? nn::QuantizedWeight::Format::kQ4_0 : nn::QuantizedWeight::Format::kQ8_0;
}

std::vector<uint8_t> quantize(const float* x, int64_t n, uint32_t type) {
  if (type != Q8_0 && type != Q4_0)
    fail("quantize: ggml type %d is not supported (only q8_0 and q4_0)", type);
  if (n < 0 || n % 32 != 0)
    fail("quantize: %d values are not a whole number of %s blocks of 32", n,
         type == Q8_0 ? "q8_0" : "q4_0");
  const int64_t bytes = type == Q8_0 ? 34 : 18;
  std::vector<uint8_t> out(static_cast<size_t>(n / 32 * bytes));
  for (int64_t i = 0; i < n; i++)
    if (!std::isfinite(x[i])) fail("quantize: value %d is %f, not a finite number", i, x[i]);
  for (int64_t b = 0; b < n / 32; b++) {
    const float* v = x + b * 32;
    uint8_t* y = out.data() + b * bytes;
    if (type == Q8_0) {  // quantize_row_q8_0_ref: d = amax / 127, q = round(x / d)
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
