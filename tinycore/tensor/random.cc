// Random numbers: counter-based threefry2x32 computed as Tensor ops (uint32 ADD/XOR/SHL/SHR in
// generated code), and the distributions, initializers, randperm and multinomial built on it.
// Formulas follow the seeds' tinygrad Tensor.
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>

#include "tinycore/tensor.h"
#include "tinycore/tensor/internal.h"

namespace tc {
namespace detail {
// 0 .. n-1 of `dtype` (n >= 1) without a scan: the sum of the place values of the binary digits,
// each a pair [0, 2^b] broadcast over a (2, ..., 2) grid. Constants, movement and adds: one
// fused elementwise kernel.
Tensor binary_iota(int64_t n, DType dtype) {
  int k = 0;
  while ((int64_t{1} << k) < n) k++;
  if (k == 0) return Tensor::zeros({1}, dtype);
  Shape grid(k, 2);
  Tensor acc = Tensor::zeros(grid, dtype);
  for (int b = 0; b < k; b++) {
    Tensor pair =
        Tensor::full({1}, ConstValue(static_cast<long long>(int64_t{1} << b)), dtype).pad({{1, 0}});
    Shape s(k, 1);
    s[k - 1 - b] = 2;
    acc = acc.add(pair.reshape(s).expand(grid));
  }
  return acc.reshape({int64_t{1} << k}).shrink({{0, n}});
}

}  // namespace detail

namespace {

// The process-wide generator state: the seed and the counter of 32-bit words drawn since.
struct RngState {
  std::mutex mu;
  uint64_t seed = 0;
  // (low, high) words of the 64-bit counter, a realized uint32 tensor on the device that each
  // draw advances in place (so a TinyJit replay of a draw advances it too)
  std::optional<Tensor> counter;
};
RngState& rng() {
  static RngState* s = new RngState();  // never destroyed: tensors may be made during exit
  return *s;
}

void check_shape(const char* name, const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) fail("Tensor.%s: shape %s has a negative dimension", name, fmt_shape(shape));
}

Tensor u32(ConstValue v) { return Tensor::full({}, v, dtypes::uint32); }

// x << r and x >> r (logical) for an unsigned tensor and a constant shift.
Tensor shl(const Tensor& x, int r) {
  return Tensor(
      UOp::make(Ops::SHL, x.dtype(), {x.uop(), Tensor::full(x.shape(), r, x.dtype()).uop()}));
}
Tensor shr(const Tensor& x, int r) {
  return Tensor(
      UOp::make(Ops::SHR, x.dtype(), {x.uop(), Tensor::full(x.shape(), r, x.dtype()).uop()}));
}
Tensor bitcast(const Tensor& x, DType d) { return Tensor(UOp::make(Ops::BITCAST, d, {x.uop()})); }
Tensor rotl(const Tensor& x, int r) { return shl(x, r).bitwise_or(shr(x, 32 - r)); }

// threefry2x32 with 20 rounds (Salmon et al.) of the counter pairs (x0, x1) under key (k0, k1).
std::pair<Tensor, Tensor> threefry2x32(Tensor x0, Tensor x1, const Tensor& k0, const Tensor& k1) {
  static constexpr int kRot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  Tensor ks[3] = {k0, k1, k0.bitwise_xor(k1).bitwise_xor(u32(0x1BD11BDA))};
  x0 = x0.add(ks[0]);
  x1 = x1.add(ks[1]);
  for (int i = 0; i < 5; i++) {
    for (int r : kRot[i % 2]) {
      x0 = x0.add(x1);
      x1 = rotl(x1, r).bitwise_xor(x0);
    }
    x0 = x0.add(ks[(i + 1) % 3]);
    x1 = x1.add(ks[(i + 2) % 3]).add(ConstValue(i + 1));
  }
  return {x0, x1};
}

// `num` random uint32 words for the next counter range: word i and h + i (h = ceil(num / 2))
// are the two outputs of block i, which hashes the 64-bit counter c + i.
Tensor random_words(int64_t num) {
  RngState& s = rng();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.counter) {
    s.counter = Tensor::from_vector<uint32_t>({0, 0});
    s.counter->assign(s.counter->add(ConstValue(0))).realize();  // a buffer of its own
  }
  // tinygrad's device key: (the low word of sha256 of the device index 0, the seed); the high
  // word of a seed past 32 bits goes into the first key word
  Tensor k0 =
      u32(ConstValue(static_cast<long long>(0x14b81119u ^ static_cast<uint32_t>(s.seed >> 32))));
  Tensor k1 = u32(ConstValue(static_cast<long long>(static_cast<uint32_t>(s.seed))));
  Tensor c = *s.counter;
  Tensor c_lo = c.shrink({{0, 1}}).reshape({}), c_hi = c.shrink({{1, 2}}).reshape({});
  int64_t h = (num + 1) / 2;
  Tensor i = detail::binary_iota(h, dtypes::uint32);
  Tensor lo = i.add(c_lo);
  Tensor hi = lo.lt(i).cast(dtypes::uint32).add(c_hi);  // the carry out of the low word
  auto [y0, y1] = threefry2x32(lo, hi, k0.expand({h}), k1.expand({h}));
  // generated now, before the counter moves on: the counter is read from its buffer (one kernel
  // for every draw of this size), and a replay runs both kernels again
  Tensor words = y0.cat({y1}).shrink({{0, num}}).contiguous().realize();
  auto part = [](uint64_t v) { return ConstValue(static_cast<long long>(v & 0xffffffffu)); };
  Tensor new_lo = c_lo.add(part(static_cast<uint64_t>(num)));
  Tensor new_hi =
      c_hi.add(part(static_cast<uint64_t>(num) >> 32)).add(new_lo.lt(c_lo).cast(dtypes::uint32));
  s.counter->assign(Tensor::stack(std::vector<Tensor>{new_lo, new_hi})).realize();
  return words;
}

// Uniform [0, 1) values of float dtype `dt` from random words: the top mantissa bits with the
// exponent of 1.0, minus 1 (tinygrad's _bits_to_rand; words are split little-endian).
Tensor bits_to_rand(const Tensor& words, int64_t numel, DType dt) {
  if (dt == dtypes::float32) {
    Tensor b = shr(words, 9).bitwise_or(u32(0x3f800000));
    return bitcast(b.shrink({{0, numel}}), dt).sub(ConstValue(1.0));
  }
  if (dt == dtypes::float64) {
    Tensor pairs = words.reshape({numel, 2});
    Tensor lo = pairs.shrink({{0, numel}, {0, 1}}).cast(dtypes::uint64);
    Tensor hi = pairs.shrink({{0, numel}, {1, 2}}).cast(dtypes::uint64);
    Tensor b = shr(shl(hi, 32).bitwise_or(lo), 12)
                   .bitwise_or(Tensor::full({}, ConstValue(0x3ff0000000000000LL), dtypes::uint64));
    return bitcast(b.reshape({numel}), dt).sub(ConstValue(1.0));
  }
  if (dt == dtypes::float16 || dt == dtypes::bfloat16) {
    int64_t n = words.numel();
    Tensor lo = words.bitwise_and(u32(0xffff)).reshape({n, 1});
    Tensor hi = shr(words, 16).reshape({n, 1});
    Tensor halves = lo.cat({hi}, 1).reshape({2 * n}).shrink({{0, numel}}).cast(dtypes::uint16);
    bool f16 = dt == dtypes::float16;
    Tensor b = shr(halves, f16 ? 6 : 9)
                   .bitwise_or(Tensor::full({}, ConstValue(f16 ? 0x3c00 : 0x3f80), dtypes::uint16));
    return bitcast(b, dt).sub(ConstValue(1.0));
  }
  fail("Tensor.rand: no random bits for dtype %s", dt.name());
}

}  // namespace

void Tensor::manual_seed(uint64_t seed) {
  RngState& s = rng();
  std::lock_guard<std::mutex> lock(s.mu);
  s.seed = seed;
  s.counter.reset();
}

Tensor::RandomState Tensor::rng_state() {
  RngState& s = rng();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.counter) return {s.seed, 0};
  std::vector<uint32_t> words = s.counter->data<uint32_t>();
  return {s.seed, words[0] | (static_cast<uint64_t>(words[1]) << 32)};
}

void Tensor::set_rng_state(RandomState state) {
  RngState& s = rng();
  std::lock_guard<std::mutex> lock(s.mu);
  s.seed = state.seed;
  Tensor words = Tensor::from_vector<uint32_t>(
      {static_cast<uint32_t>(state.counter), static_cast<uint32_t>(state.counter >> 32)});
  if (!s.counter) s.counter = Tensor::from_vector<uint32_t>({0, 0});
  s.counter->assign(words).realize();  // in place once the counter has a buffer of its own
}

Tensor Tensor::rand(Shape shape, std::optional<DType> dtype, bool contiguous) {
  DType dt = dtype ? *dtype : dtypes::default_float;
  if (!dtypes::is_float(dt))
    fail("Tensor.rand: only float dtypes are supported, got %s", dt.name());
  check_shape("rand", shape);
  int64_t numel = shape_numel(shape);
  if (numel == 0) return zeros(shape, dt);
  int64_t num = (numel * dt.itemsize() + 3) / 4;
  Tensor out = bits_to_rand(random_words(num), numel, dt).reshape(shape);
  return contiguous ? out.contiguous() : out;
}

Tensor Tensor::rand_like(std::optional<DType> dtype) const {
  return rand(shape(), dtype ? *dtype : this->dtype());
}

Tensor Tensor::randn(Shape shape, std::optional<DType> dtype) {
  check_shape("randn", shape);
  Shape two = {2};
  two.insert(two.end(), shape.begin(), shape.end());
  Tensor src = rand(two, dtypes::float32);
  std::vector<std::pair<int64_t, int64_t>> first = {{0, 1}}, second = {{1, 2}};
  for (int64_t d : shape) {
    first.push_back({0, d});
    second.push_back({0, d});
  }
  Tensor u0 = src.shrink(first).reshape(shape), u1 = src.shrink(second).reshape(shape);
  // Box-Muller: cos(2 pi u0) * sqrt(-2 log(1 - u1))
  Tensor r = u1.sub(ConstValue(1.0), true).log().mul(ConstValue(-2.0)).sqrt();
  return u0.mul(ConstValue(2 * M_PI)).cos().mul(r).cast(dtype ? *dtype : dtypes::default_float);
}

Tensor Tensor::randn_like(std::optional<DType> dtype) const {
  return randn(shape(), dtype ? *dtype : this->dtype());
}

Tensor Tensor::uniform(Shape shape, UniformOptions opts) {
  check_shape("uniform", shape);
  if (!(opts.low < opts.high))
    fail("Tensor.uniform: requires low < high, got low=%g, high=%g", opts.low, opts.high);
  DType dt = opts.dtype ? *opts.dtype : dtypes::default_float;
  return rand(shape).mul(ConstValue(opts.high - opts.low)).cast(dt).add(ConstValue(opts.low));
}

Tensor Tensor::randint(Shape shape, RandintOptions opts) {
  check_shape("randint", shape);
  DType dt = opts.dtype;
  if (!dtypes::is_int(dt))
    fail("Tensor.randint: dtype must be an integer dtype, got %s", dt.name());
  if (opts.low >= opts.high)
    fail("Tensor.randint: requires low < high, got low=%d, high=%d", opts.low, opts.high);
  double lo = static_cast<double>(opts.low), hi = static_cast<double>(opts.high) - 1;
  if (lo < static_cast<double>(dtypes::min(dt)) || hi > static_cast<double>(dtypes::max(dt)))
    fail("Tensor.randint: [low, high) = [%d, %d) does not fit %s", opts.low, opts.high, dt.name());
  // tinygrad's ((high - low) * rand).cast(dtype) + low, clamped so that a float rounding up to
  // the range can never give `high`
  auto c = [](int64_t v) { return ConstValue(static_cast<long long>(v)); };
  Tensor r = rand(shape).mul(ConstValue(hi - lo + 1)).cast(dt);
  return r.minimum(c(opts.high - 1 - opts.low)).add(c(opts.low));
}

Tensor Tensor::normal(Shape shape, NormalOptions opts) {
  check_shape("normal", shape);
  if (!(opts.std >= 0)) fail("Tensor.normal: requires std >= 0, got std=%g", opts.std);
  return randn(shape, opts.dtype).mul(ConstValue(opts.std)).add(ConstValue(opts.mean));
}

Tensor Tensor::scaled_uniform(Shape shape, std::optional<DType> dtype) {
  check_shape("scaled_uniform", shape);
  if (shape_numel(shape) == 0)
    fail("Tensor.scaled_uniform: shape %s has no elements", fmt_shape(shape));
  return uniform(shape, {.low = -1.0, .high = 1.0, .dtype = dtype})
      .mul(ConstValue(std::pow(static_cast<double>(shape_numel(shape)), -0.5)));
}

namespace {
// prod(shape[1:]) for the initializers, which need at least one dimension and a non-zero fan.
double fan_in(const char* name, const Shape& shape) {
  check_shape(name, shape);
  if (shape.empty()) fail("Tensor.%s: needs at least one dimension, got shape ()", name);
  int64_t fan = shape_numel(shape, 1);
  if (fan == 0) fail("Tensor.%s: prod(shape[1:]) is 0 for shape %s", name, fmt_shape(shape));
  return static_cast<double>(fan);
}
}  // namespace

Tensor Tensor::glorot_uniform(Shape shape, std::optional<DType> dtype) {
  double fan = fan_in("glorot_uniform", shape);
  double bound = std::sqrt(6.0 / (static_cast<double>(shape[0]) + fan));
  return uniform(shape, {.low = -bound, .high = bound, .dtype = dtype});
}

Tensor Tensor::kaiming_uniform(Shape shape, double a, std::optional<DType> dtype) {
  double bound = std::sqrt(6.0 / (1 + a * a) / fan_in("kaiming_uniform", shape));
  return uniform(shape, {.low = -bound, .high = bound, .dtype = dtype});
}

Tensor Tensor::kaiming_normal(Shape shape, double a, std::optional<DType> dtype) {
  double std = std::sqrt(2.0 / (1 + a * a) / fan_in("kaiming_normal", shape));
  return normal(shape, {.mean = 0.0, .std = std, .dtype = dtype});
}

Tensor Tensor::randperm(int64_t n, DType dtype) {
  if (n < 0) fail("Tensor.randperm: n must be non-negative, got %d", n);
  if (!dtypes::is_int(dtype) && !dtypes::is_float(dtype))
    fail("Tensor.randperm: dtype must be numeric, got %s", dtype.name());
  if (n == 0) return zeros({0}, dtype);
  return rand({n}).argsort().cast(dtype);
}

Tensor Tensor::multinomial(int64_t num_samples, bool replacement) const {
  if (ndim() < 1 || ndim() > 2)
    fail("Tensor.multinomial: weights must be 1-D or 2-D, got shape %s", fmt_shape(shape()));
  if (num_samples <= 0)
    fail("Tensor.multinomial: num_samples must be positive, got %d", num_samples);
  Tensor weight = ndim() == 1 ? unsqueeze(0) : *this;
  int64_t rows = weight.shape()[0], cats = weight.shape()[1];
  if (cats == 0)
    fail("Tensor.multinomial: no categories in weights of shape %s", fmt_shape(shape()));
  if (!replacement && num_samples > cats)
    fail(
        "Tensor.multinomial: cannot draw %d samples without replacement from %d categories "
        "(shape %s)",
        num_samples, cats, fmt_shape(shape()));
  Tensor w = weight.cast(least_upper_float(weight.dtype()));
  // the weights must be finite, non-negative and not all zero in a row (reads them: one sync)
  if (rows > 0) {
    Tensor bad = w.lt(ConstValue(0)).bitwise_or(w.isfinite().logical_not()).any();
    Tensor empty_row = w.sum(1).le(ConstValue(0)).any();
    std::vector<bool> flags = Tensor::stack(std::vector<Tensor>{bad, empty_row}).data<bool>();
    if (flags[0])
      fail("Tensor.multinomial: weights must be finite and non-negative (shape %s)",
           fmt_shape(shape()));
    if (flags[1])
      fail("Tensor.multinomial: a row of weights of shape %s sums to zero", fmt_shape(shape()));
  }
  auto draw = [&]() {
    if (replacement || num_samples == 1) {
      // inverse transform: the number of cdf entries <= u
      Tensor cw = w.cumsum(1).cast(dtypes::float32);
      Tensor cdf = cw.div(cw.shrink({{0, rows}, {cats - 1, cats}}));
      Tensor unif = rand({num_samples, rows, 1});
      return unif.expand({-1, -1, cats}).ge(cdf).sum(2).permute({1, 0});
    }
    // Efraimidis-Spirakis: the num_samples largest log2(u) / w
    return rand(w.shape()).log2().div(w).topk(num_samples, 1).second;
  };
  Tensor indices = draw();
  return (ndim() == 1 ? indices.squeeze(0) : indices).cast(dtypes::int32);
}

}  // namespace tc
