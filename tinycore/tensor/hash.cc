// The Keccak (SHA-3) hash built from Tensor bitwise ops on uint64 lanes, three kernels a round of
// keccak-f[1600], and tinygrad's tree hash() of a whole tensor over 1 MiB pages.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tinycore/tensor.h"
#include "tinycore/tensor/internal.h"

namespace tc {

using detail::shl;

namespace {

constexpr uint64_t kRoundConstants[24] = {
    0x0000000000000001, 0x0000000000008082, 0x800000000000808a, 0x8000000080008000,
    0x000000000000808b, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
    0x000000000000008a, 0x0000000000000088, 0x0000000080008009, 0x000000008000000a,
    0x000000008000808b, 0x800000000000008b, 0x8000000000008089, 0x8000000000008003,
    0x8000000000008002, 0x8000000000000080, 0x000000000000800a, 0x800000008000000a,
    0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008};

// ρ offsets of the lanes after the π step (lane 0 is not rotated), and the π step as the source
// lane of each destination lane (lanes indexed x + 5y).
constexpr int kRotOffsets[24] = {44, 43, 21, 14, 28, 20, 3,  45, 61, 1,  6,  25,
                                 8,  18, 27, 36, 10, 15, 56, 62, 55, 39, 41, 2};
constexpr int kPiSource[25] = {0,  6,  12, 18, 24, 3,  9,  10, 16, 22, 1,  7, 13,
                               19, 20, 4,  5,  11, 17, 23, 2,  8,  14, 15, 21};

Tensor u64(const std::vector<uint64_t>& v, Shape shape) {
  return Tensor::from_vector<uint64_t>(v, std::move(shape));
}

// The constant tensors of keccak-f[1600], made once per call of keccak.
struct KeccakConsts {
  Tensor pi;                         // (25, 25) 0/1: row j selects the source lane of lane j
  Tensor rot_mul, rot_div;           // (25,) 2^r and 2^(64-r) per lane (1 and 1... for lane 0)
  std::vector<Tensor> round_consts;  // 24 x (25,) the ι constant in lane 0
  // (1, 1, 1) 2^63, as a buffer: x // 2^63 through two constant divisions folds wrongly, since
  // the symbolic bounds of uint64 stop at 2^63 - 1
  Tensor top_bit;
};

KeccakConsts keccak_consts() {
  std::vector<uint64_t> pi(25 * 25, 0), mul(25), div(25);
  for (int j = 0; j < 25; j++) pi[j * 25 + kPiSource[j]] = 1;
  mul[0] = 0, div[0] = 1;  // lane 0: x * 0 | x / 1 = x
  for (int j = 1; j < 25; j++) {
    mul[j] = uint64_t{1} << kRotOffsets[j - 1];
    div[j] = uint64_t{1} << (64 - kRotOffsets[j - 1]);
  }
  KeccakConsts c{
      u64(pi, {25, 25}), u64(mul, {25}), u64(div, {25}), {}, u64({uint64_t{1} << 63}, {1, 1, 1})};
  for (uint64_t rc : kRoundConstants) {
    std::vector<uint64_t> v(25, 0);
    v[0] = rc;
    c.round_consts.push_back(u64(v, {25}));
  }
  return c;
}

// One round of keccak-f[1600] on the state (bs, 25) uint64, lanes x + 5y. Three kernels, each
// reading a realized state (movement on a realized buffer is index math; on an unrealized one it
// would recompute the whole round per element). Their ASTs do not depend on the round (the ι
// constant is a buffer), so every round and block reuses the same three compiled kernels.
Tensor keccak_round(const Tensor& state, const KeccakConsts& c, int round) {
  int64_t bs = state.shape()[0];
  // θ: column parities C[x] = xor over y, D[x] = C[x-1] ^ rot(C[x+1], 1), every lane ^= D[x]
  Tensor p = state.reshape({bs, 5, 5});  // [b, y, x]
  auto row = [&](int64_t y) { return p.shrink({{0, bs}, {y, y + 1}, {0, 5}}); };
  Tensor col =
      row(0).bitwise_xor(row(1)).bitwise_xor(row(2)).bitwise_xor(row(3)).bitwise_xor(row(4));
  Tensor next = col.roll(-1, 2);  // C[x+1]
  Tensor rot1 = shl(next, 1).bitwise_or(next.idiv(c.top_bit));
  Tensor d = col.roll(1, 2).bitwise_xor(rot1);  // (bs, 1, 5)
  Tensor s = p.bitwise_xor(d).reshape({bs, 25}).contiguous();
  // π (lane j takes lane kPiSource[j]) as a 0/1 matrix product, then the ρ rotations
  s = s.unsqueeze(1).mul(c.pi).sum(-1);
  s = s.mul(c.rot_mul).bitwise_or(s.idiv(c.rot_div)).contiguous();
  // χ: a ^ (~b & c) along x, written as a ^ (c ^ (b & c)); then ι
  Tensor q = s.reshape({bs, 5, 5});
  Tensor b1 = q.roll(-1, 2), b2 = q.roll(-2, 2);
  q = q.bitwise_xor(b2.bitwise_xor(b1.bitwise_and(b2)));
  return q.reshape({bs, 25}).bitwise_xor(c.round_consts[round]).contiguous();
}

}  // namespace

Tensor Tensor::keccak(const std::string& cfg) const {
  if (cfg == "sha3_224") return keccak(144, 6);
  if (cfg == "sha3_256") return keccak(136, 6);
  if (cfg == "shake_128") return keccak(168, 31);
  fail("Tensor.keccak: unknown cfg \"%s\" (expected sha3_224, sha3_256 or shake_128)", cfg);
}

Tensor Tensor::keccak(int rate, int dsbyte) const {
  if (rate <= 0 || rate >= 200 || rate % 8 != 0)
    fail("Tensor.keccak: rate %d must be a multiple of 8 in (0, 200)", rate);
  if (dsbyte < 0 || dsbyte > 255) fail("Tensor.keccak: dsbyte %d is not a byte", dsbyte);
  Tensor bytes = (ndim() == 0 ? reshape({1}) : *this).bitcast(dtypes::uint8);
  Shape lead(bytes.shape().begin(), bytes.shape().end() - 1);
  int64_t n = bytes.shape().back(), bs = 1;
  for (int64_t d : lead) bs *= d;
  Tensor data = bytes.reshape({bs, n});
  // pad to whole blocks of `rate`, each block widened to the 200-byte state
  int64_t pad = rate - n % rate, blocks = (n + pad) / rate;
  data = data.pad({{0, 0}, {0, pad}}).reshape({bs, blocks, rate}).pad_to({bs, blocks, 200});
  // the padding rule: dsbyte after the message, 0x80 on the last byte of the block
  std::vector<uint8_t> mask(static_cast<size_t>(blocks * 200), 0);
  int64_t last = (blocks - 1) * 200;
  mask[last + rate - pad] ^= static_cast<uint8_t>(dsbyte);
  mask[last + rate - 1] ^= 0x80;
  Tensor pad_mask = Tensor::from_vector<uint8_t>(mask, Shape{1, blocks * 200});
  Tensor lanes = data.reshape({bs, blocks * 200})
                     .bitwise_xor(pad_mask)
                     .reshape({bs, blocks, 200})
                     .bitcast(dtypes::uint64)
                     .contiguous();  // (bs, blocks, 25)
  KeccakConsts c = keccak_consts();
  Tensor state = Tensor::zeros({bs, 25}, dtypes::uint64);
  for (int64_t k = 0; k < blocks; k++) {
    // block k selected by a 0/1 vector (a buffer, so every block runs the same kernel)
    std::vector<uint64_t> sel(static_cast<size_t>(blocks), 0);
    sel[k] = 1;
    Tensor block = lanes.mul(u64(sel, {1, blocks, 1})).sum(1);
    state = state.bitwise_xor(block).contiguous();
    for (int r = 0; r < 24; r++) state = keccak_round(state, c, r);
    // Long messages (hash() absorbs 25 blocks per row): the state is computed before the next
    // block (tinygrad kernelizes here), so the lazy graph holds at most one block's 72 kernels
    // rather than a chain growing with the message, which the recursive scheduler would have
    // to walk at once. The last block stays lazy.
    if (k + 1 < blocks) state.realize();
  }
  int64_t out_bytes = (200 - rate) / 2;
  Shape out = lead;
  out.push_back(out_bytes);
  return state.bitcast(dtypes::uint8).shrink({{0, bs}, {0, out_bytes}}).reshape(out);
}

Tensor Tensor::hash() const {
  constexpr int64_t kPage = int64_t{1} << 20;
  // one 16-byte shake_128 digest per 1 MiB row: digests of its 4 KiB pieces, hashed again
  auto hash_pages = [](const Tensor& pages) {
    int64_t rows = pages.shape()[0];
    return pages.reshape({-1, 4096}).keccak("shake_128").reshape({rows, -1}).keccak("shake_128");
  };
  Tensor data = flatten().bitcast(dtypes::uint8);
  int64_t n = data.shape()[0];
  int64_t chunks = std::max<int64_t>(1, (n + kPage - 1) / kPage);
  while (chunks > 1) {
    data = hash_pages(data.pad_to({chunks * kPage}).reshape({chunks, kPage})).flatten();
    chunks = (chunks + 65535) / 65536;
  }
  return hash_pages(data.pad_to({kPage}).unsqueeze(0)).flatten().shrink({{0, 16}});
}

}  // namespace tc
