// Random numbers: exact values against a host threefry2x32 written here (independent of the
// library's Tensor-op version), determinism, streams, dtypes, distributions with 5-sigma bounds,
// initializers, randperm, multinomial, dropout and the training flag, and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <set>
#include <vector>

#include "tests/error_message.h"
#include "tests/tensor/reference.h"
#include "tinycore/jit/jit.h"
#include "tinycore/tensor.h"

namespace {

using tc::DType;
using tc::Tensor;
using ::testing::HasSubstr;
namespace dtypes = tc::dtypes;

// ------------------------------------------------------------------ host reference generator

uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// Random123's threefry2x32_20: counter (c0, c1), key (k0, k1).
std::pair<uint32_t, uint32_t> threefry_ref(uint32_t c0, uint32_t c1, uint32_t k0, uint32_t k1) {
  const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  uint32_t x0 = c0 + ks[0], x1 = c1 + ks[1];
  for (int round = 0; round < 20; round++) {
    x0 += x1;
    x1 = rotl32(x1, rot[round % 8]) ^ x0;
    if (round % 4 == 3) {
      int j = round / 4 + 1;  // key injection j after rounds 4j-3 .. 4j
      x0 += ks[j % 3];
      x1 += ks[(j + 1) % 3] + static_cast<uint32_t>(j);
    }
  }
  return {x0, x1};
}

// The words a draw of `num` words at counter `ctr` gives under `seed` (the documented layout:
// block i hashes the 64-bit counter ctr + i; its outputs are words i and h + i).
std::vector<uint32_t> words_ref(uint64_t seed, uint64_t ctr, int64_t num) {
  uint32_t k0 = 0x14b81119u ^ static_cast<uint32_t>(seed >> 32), k1 = static_cast<uint32_t>(seed);
  int64_t h = (num + 1) / 2;
  std::vector<uint32_t> out(static_cast<size_t>(2 * h));
  for (int64_t i = 0; i < h; i++) {
    uint64_t c = ctr + static_cast<uint64_t>(i);
    auto [y0, y1] = threefry_ref(static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), k0, k1);
    out[static_cast<size_t>(i)] = y0;
    out[static_cast<size_t>(h + i)] = y1;
  }
  out.resize(static_cast<size_t>(num));
  return out;
}

// float32 rand values: 23 random mantissa bits over [1, 2), minus 1.
std::vector<float> rand_ref(uint64_t seed, uint64_t ctr, int64_t n) {
  std::vector<float> out;
  for (uint32_t w : words_ref(seed, ctr, n)) {
    uint32_t bits = (w >> 9) | 0x3f800000u;
    float f;
    std::memcpy(&f, &bits, 4);
    out.push_back(f - 1.0f);
  }
  return out;
}

template <typename T>
std::vector<T> vals(const Tensor& t) {
  return t.data<T>();
}

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}
double var_of(const std::vector<double>& v) {
  double m = mean_of(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / static_cast<double>(v.size());
}

// ------------------------------------------------------------------ the generator itself

TEST(Threefry, HostReferenceMatchesKnownAnswers) {
  // Random123 known-answer vectors for threefry2x32_20 (counter, key -> output)
  EXPECT_EQ(threefry_ref(0, 0, 0, 0), std::make_pair(0x6b200159u, 0x99ba4efeu));
  EXPECT_EQ(threefry_ref(~0u, ~0u, ~0u, ~0u), std::make_pair(0x1cb996fcu, 0xbb002be7u));
  EXPECT_EQ(threefry_ref(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u),
            std::make_pair(0xc4923a9cu, 0x483df7a0u));
}

TEST(Rand, ExactValuesAndCounterAcrossCalls) {
  Tensor::manual_seed(42);
  Tensor a = Tensor::rand({3, 5});  // 15 words: an odd count, h = 8
  Tensor b = Tensor::rand({4});     // continues at counter 15
  EXPECT_EQ(a.shape(), (tc::Shape{3, 5}));
  EXPECT_EQ(a.dtype(), dtypes::float32);
  EXPECT_EQ(vals<float>(a), rand_ref(42, 0, 15));
  EXPECT_EQ(vals<float>(b), rand_ref(42, 15, 4));
}

TEST(Rand, ManualSeedRestartsAndSeedsDiffer) {
  Tensor::manual_seed(7);
  std::vector<float> a1 = vals<float>(Tensor::rand({6})), a2 = vals<float>(Tensor::rand({6}));
  Tensor::manual_seed(7);
  EXPECT_EQ(vals<float>(Tensor::rand({6})), a1);
  EXPECT_EQ(vals<float>(Tensor::rand({6})), a2);
  EXPECT_NE(a1, a2);  // the second call is another stream
  Tensor::manual_seed(8);
  EXPECT_NE(vals<float>(Tensor::rand({6})), a1);
  // a seed past 32 bits is not the same as its low word
  uint64_t big = (uint64_t{1} << 32) + 7;
  Tensor::manual_seed(big);
  std::vector<float> b = vals<float>(Tensor::rand({6}));
  EXPECT_NE(b, a1);
  EXPECT_EQ(b, rand_ref(big, 0, 6));
}

TEST(Rand, ValuesDoNotDependOnShapeOrLaziness) {
  Tensor::manual_seed(3);
  std::vector<float> flat = vals<float>(Tensor::rand({42}));
  Tensor::manual_seed(3);
  Tensor grid = Tensor::rand({6, 7});
  EXPECT_EQ(vals<float>(grid), flat);
  // building two draws before realizing either keeps the call order
  Tensor::manual_seed(3);
  Tensor x = Tensor::rand({42}, {}, false), y = Tensor::rand({5}, {}, false);
  EXPECT_EQ(vals<float>(y), rand_ref(3, 42, 5));
  EXPECT_EQ(vals<float>(x), flat);
  // a draw used through a view (transposed) holds the same values
  Tensor::manual_seed(3);
  EXPECT_EQ(vals<float>(Tensor::rand({6, 7}).transpose().transpose()), flat);
}

// Checks a large draw against the reference and exits 0 when equal (for the child process).
void check_large_draw_and_exit() {
  Tensor::manual_seed(11);
  bool same = vals<float>(Tensor::rand({1 << 16})) == rand_ref(11, 0, 1 << 16);
  std::exit(same ? 0 : 1);
}

TEST(Rand, SameValuesWithOneThread) {
  // in this process (all cores) and in a fresh one with CPU_THREADS=1 (a kernel split across
  // threads or not), the 65536 values equal the reference
  Tensor::manual_seed(11);
  EXPECT_EQ(vals<float>(Tensor::rand({1 << 16})), rand_ref(11, 0, 1 << 16));
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  setenv("CPU_THREADS", "1", 1);
  EXPECT_EXIT(check_large_draw_and_exit(), ::testing::ExitedWithCode(0), "");
  unsetenv("CPU_THREADS");
}

TEST(Rand, TinyJitReplaysDrawFreshValues) {
  // the counter lives on the device and each draw advances it in place, so the replayed kernels
  // continue the stream: call k draws counters 5k .. 5k+4
  Tensor::manual_seed(13);
  tc::TinyJit step([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0].add(Tensor::rand({5}))};
  });
  for (int call = 0; call < 4; call++) {
    Tensor x = Tensor::zeros({5}).contiguous().realize();
    EXPECT_EQ(vals<float>(step({x})[0]), rand_ref(13, 5 * static_cast<uint64_t>(call), 5)) << call;
  }
  EXPECT_TRUE(step.captured());
  EXPECT_EQ(vals<float>(Tensor::rand({3})), rand_ref(13, 20, 3));  // where the replays left it
}

TEST(Rand, OtherFloatDtypesExact) {
  // float16 / bfloat16: each word gives two values (low half first), top 10 / 7 bits;
  // float64: two words per value (low word first), top 52 bits
  Tensor::manual_seed(5);
  std::vector<float> h = vals<float>(Tensor::rand({5}, dtypes::float16));
  std::vector<uint32_t> w = words_ref(5, 0, 3);
  for (int i = 0; i < 5; i++) {
    uint32_t half = (w[i / 2] >> (16 * (i % 2))) & 0xffff;
    EXPECT_EQ(h[i], static_cast<float>(half >> 6) / 1024.0f) << i;
  }
  std::vector<float> bf = vals<float>(Tensor::rand({3}, dtypes::bfloat16));
  std::vector<uint32_t> w2 = words_ref(5, 3, 2);
  for (int i = 0; i < 3; i++) {
    uint32_t half = (w2[i / 2] >> (16 * (i % 2))) & 0xffff;
    EXPECT_EQ(bf[i], static_cast<float>(half >> 9) / 128.0f) << i;
  }
  std::vector<double> d = vals<double>(Tensor::rand({3}, dtypes::float64));
  std::vector<uint32_t> w3 = words_ref(5, 5, 6);
  for (int i = 0; i < 3; i++) {
    uint64_t u = static_cast<uint64_t>(w3[2 * i]) | (static_cast<uint64_t>(w3[2 * i + 1]) << 32);
    EXPECT_EQ(d[i], static_cast<double>(u >> 12) / 4503599627370496.0) << i;
  }
  EXPECT_EQ(Tensor::rand({2}, dtypes::float16).dtype(), dtypes::float16);
  EXPECT_EQ(Tensor::rand({2}, dtypes::float64).dtype(), dtypes::float64);
}

TEST(Rand, EmptyAndScalarShapes) {
  Tensor::manual_seed(1);
  Tensor e = Tensor::rand({0, 3});
  EXPECT_EQ(e.shape(), (tc::Shape{0, 3}));
  EXPECT_TRUE(vals<float>(e).empty());
  Tensor s = Tensor::rand({});
  EXPECT_EQ(s.shape(), tc::Shape{});
  EXPECT_EQ(s.item<float>(), rand_ref(1, 0, 1)[0]);  // the empty draw took no counter
}

TEST(Rand, LikeTakesShapeAndDtype) {
  Tensor t = Tensor::zeros({2, 3}, dtypes::float16);
  EXPECT_EQ(t.rand_like().shape(), (tc::Shape{2, 3}));
  EXPECT_EQ(t.rand_like().dtype(), dtypes::float16);
  EXPECT_EQ(t.rand_like(dtypes::float32).dtype(), dtypes::float32);
  EXPECT_EQ(t.randn_like().dtype(), dtypes::float16);
  EXPECT_EQ(t.randn_like().shape(), (tc::Shape{2, 3}));
  Tensor::manual_seed(9);
  std::vector<float> a = vals<float>(Tensor::zeros({4}).rand_like());
  EXPECT_EQ(a, rand_ref(9, 0, 4));
  try {
    Tensor::zeros({2}, dtypes::int32).rand_like();
    ADD_FAILURE() << "rand_like of an int tensor did not throw";
  } catch (const tc::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("Tensor.rand: only float dtypes"));
  }
}

// ------------------------------------------------------------------ distributions

TEST(Rand, UniformStatistics) {
  Tensor::manual_seed(1234);
  const int n = 100000;
  std::vector<double> v = vals<double>(Tensor::rand({n}));
  EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.0);
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.0);
  // mean 1/2 and variance 1/12, within 5 standard errors
  EXPECT_NEAR(mean_of(v), 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(var_of(v), 1.0 / 12, 5 * std::sqrt(1.0 / 180 / n));  // var of (u - 1/2)^2 is 1/180
  // every tenth of [0, 1) holds n/10 values within 5 sigma
  std::vector<int> bins(10);
  for (double x : v) bins[static_cast<size_t>(x * 10)]++;
  for (int b : bins) EXPECT_NEAR(b, n / 10.0, 5 * std::sqrt(n * 0.1 * 0.9));
}

TEST(Randn, ExactBoxMullerAndStatistics) {
  Tensor::manual_seed(77);
  Tensor z = Tensor::randn({2, 3});
  EXPECT_EQ(z.dtype(), dtypes::float32);
  EXPECT_EQ(z.shape(), (tc::Shape{2, 3}));
  std::vector<float> u = rand_ref(77, 0, 12), got = vals<float>(z);
  for (int i = 0; i < 6; i++) {
    double want = std::cos(2 * M_PI * u[i]) * std::sqrt(-2 * std::log(1.0 - u[6 + i]));
    EXPECT_NEAR(got[i], want, 1e-4 * std::max(1.0, std::fabs(want))) << i;
  }
  const int n = 100000;
  std::vector<double> v = vals<double>(Tensor::randn({n}));
  EXPECT_NEAR(mean_of(v), 0.0, 5 * std::sqrt(1.0 / n));
  EXPECT_NEAR(var_of(v), 1.0, 5 * std::sqrt(2.0 / n));
  // P(|z| > 1.96) = 0.05
  double tail = static_cast<double>(std::count_if(v.begin(), v.end(),
                                                  [](double x) { return std::fabs(x) > 1.96; })) /
                n;
  EXPECT_NEAR(tail, 0.05, 5 * std::sqrt(0.05 * 0.95 / n));
  EXPECT_EQ(Tensor::randn({3}, dtypes::float16).dtype(), dtypes::float16);
}

TEST(Normal, MeanAndStd) {
  Tensor::manual_seed(5);
  std::vector<float> z = vals<float>(Tensor::randn({4}));
  Tensor::manual_seed(5);
  Tensor x = Tensor::normal({4}, {.mean = 10.0, .std = 2.0});
  std::vector<float> got = vals<float>(x);
  for (int i = 0; i < 4; i++) EXPECT_FLOAT_EQ(got[i], 2.0f * z[i] + 10.0f);
  const int n = 100000;
  std::vector<double> v = vals<double>(Tensor::normal({n}, {.mean = -3.0, .std = 0.5}));
  EXPECT_NEAR(mean_of(v), -3.0, 5 * 0.5 / std::sqrt(n));
  EXPECT_NEAR(var_of(v), 0.25, 5 * 0.25 * std::sqrt(2.0 / n));
  EXPECT_EQ(Tensor::normal({2}, {.dtype = dtypes::float64}).dtype(), dtypes::float64);
}

// The rounding error allowed for low + (high - low) * u in float32: the generated code may fuse
// the multiply-add, which skips one rounding of the product.
double uniform_tol(double low, double high) {
  const double eps = std::numeric_limits<float>::epsilon();
  return eps * (high - low) + eps * std::fabs(low);
}

TEST(Uniform, ExactFormulaAndBounds) {
  Tensor::manual_seed(21);
  Tensor x = Tensor::uniform({7}, {.low = -2.0, .high = 3.0});
  std::vector<float> u = rand_ref(21, 0, 7), got = vals<float>(x);
  // float32 math; the generated code may fuse the multiply-add (one rounding less)
  for (int i = 0; i < 7; i++) EXPECT_NEAR(got[i], 5.0f * u[i] + -2.0f, uniform_tol(-2, 3)) << i;
  const int n = 100000;
  std::vector<double> v = vals<double>(Tensor::uniform({n}, {.low = 2.0, .high = 10.0}));
  EXPECT_GE(*std::min_element(v.begin(), v.end()), 2.0);
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 10.0);
  EXPECT_NEAR(mean_of(v), 6.0, 5 * 8 * std::sqrt(1.0 / 12 / n));
  EXPECT_EQ(Tensor::uniform({2}, {.dtype = dtypes::float16}).dtype(), dtypes::float16);
}

TEST(Randint, ExactBoundsAndFrequencies) {
  Tensor::manual_seed(8);
  Tensor r = Tensor::randint({2, 3}, {.low = 5, .high = 10});
  EXPECT_EQ(r.dtype(), dtypes::int32);
  std::vector<float> u = rand_ref(8, 0, 6);
  std::vector<int32_t> got = vals<int32_t>(r);
  for (int i = 0; i < 6; i++) EXPECT_EQ(got[i], static_cast<int32_t>(5.0f * u[i]) + 5) << i;
  const int n = 100000;
  std::vector<int64_t> v = vals<int64_t>(Tensor::randint({n}, {.low = -3, .high = 4}));
  std::vector<int> count(7);
  for (int64_t x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 4);
    count[static_cast<size_t>(x + 3)]++;
  }
  for (int c : count) EXPECT_NEAR(c, n / 7.0, 5 * std::sqrt(n * (1 / 7.0) * (6 / 7.0)));
  Tensor b = Tensor::randint({4}, {.low = 0, .high = 200, .dtype = dtypes::uint8});
  EXPECT_EQ(b.dtype(), dtypes::uint8);
  for (int64_t x : vals<int64_t>(b)) EXPECT_LT(x, 200);
  // one value: always low
  for (int64_t x : vals<int64_t>(Tensor::randint({5}, {.low = 9, .high = 10}))) EXPECT_EQ(x, 9);
}

// ------------------------------------------------------------------ initializers

// The value uniform(low, high) gives for rand value u, in float32 math as tinygrad.
float uniform_ref(float u, double low, double high) {
  return static_cast<float>(high - low) * u + static_cast<float>(low);
}

TEST(Initializers, BoundsAndStdFollowTheSeed) {
  // glorot: sqrt(6 / (fan_out + fan_in)) with fan_in = prod(shape[1:])
  double g = std::sqrt(6.0 / (4 + 3 * 5));
  Tensor::manual_seed(2);
  std::vector<float> got = vals<float>(Tensor::glorot_uniform({4, 3, 5}));
  std::vector<float> u = rand_ref(2, 0, 60);
  for (int i = 0; i < 60; i++)
    EXPECT_NEAR(got[i], uniform_ref(u[i], -g, g), uniform_tol(-g, g)) << i;

  double k = std::sqrt(6.0 / (1 + 0.2 * 0.2) / 15);
  Tensor::manual_seed(2);
  got = vals<float>(Tensor::kaiming_uniform({4, 3, 5}, 0.2));
  for (int i = 0; i < 60; i++)
    EXPECT_NEAR(got[i], uniform_ref(u[i], -k, k), uniform_tol(-k, k)) << i;

  double s = std::pow(60.0, -0.5);
  Tensor::manual_seed(2);
  got = vals<float>(Tensor::scaled_uniform({4, 3, 5}));
  for (int i = 0; i < 60; i++)
    EXPECT_NEAR(got[i], uniform_ref(u[i], -1.0, 1.0) * static_cast<float>(s), uniform_tol(-s, s))
        << i;

  // kaiming_normal: std sqrt(2 / (1 + a^2) / fan_in), checked on 10^5 samples
  const int rows = 1000, fan = 100;
  double std_want = std::sqrt(2.0 / (1 + 0.01 * 0.01) / fan);
  std::vector<double> v = vals<double>(Tensor::kaiming_normal({rows, fan}));
  const double n = rows * fan;
  EXPECT_NEAR(mean_of(v), 0.0, 5 * std_want / std::sqrt(n));
  EXPECT_NEAR(std::sqrt(var_of(v)), std_want, 5 * std_want / std::sqrt(2 * n));
  // large uniform draws reach close to their bounds and never past them
  std::vector<double> kv = vals<double>(Tensor::kaiming_uniform({rows, fan}));
  double kb = std::sqrt(6.0 / (1 + 0.01 * 0.01) / fan);
  auto [mn, mx] = std::minmax_element(kv.begin(), kv.end());
  EXPECT_GE(*mn, -kb);
  EXPECT_LT(*mx, kb);
  EXPECT_GT(*mx, 0.999 * kb);
  EXPECT_LT(*mn, -0.999 * kb);
  EXPECT_EQ(Tensor::glorot_uniform({2, 2}, dtypes::float16).dtype(), dtypes::float16);
  EXPECT_EQ(Tensor::kaiming_normal({2, 2}, 0.01, dtypes::float64).dtype(), dtypes::float64);
}

// ------------------------------------------------------------------ randperm, multinomial

TEST(Randperm, ArgsortOfRand) {
  Tensor::manual_seed(31);
  Tensor p = Tensor::randperm(10);
  EXPECT_EQ(p.dtype(), dtypes::int32);
  std::vector<float> u = rand_ref(31, 0, 10);
  std::vector<int32_t> want(10);
  std::iota(want.begin(), want.end(), 0);
  std::stable_sort(want.begin(), want.end(), [&](int a, int b) { return u[a] < u[b]; });
  EXPECT_EQ(vals<int32_t>(p), want);
  // a larger one is a permutation, and the next call another one
  std::vector<int64_t> a = vals<int64_t>(Tensor::randperm(300, dtypes::int64));
  std::vector<int64_t> b = vals<int64_t>(Tensor::randperm(300, dtypes::int64));
  std::vector<int64_t> sa = a, sb = b, id(300);
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  std::iota(id.begin(), id.end(), 0);
  EXPECT_EQ(sa, id);
  EXPECT_EQ(sb, id);
  EXPECT_NE(a, b);
  EXPECT_EQ(Tensor::randperm(0).shape(), tc::Shape{0});
  EXPECT_EQ(vals<int32_t>(Tensor::randperm(1)), std::vector<int32_t>{0});
}

TEST(Multinomial, WithReplacementExactAndFrequencies) {
  Tensor w = Tensor({1, 2, 3, 4});
  Tensor::manual_seed(42);
  Tensor s = w.multinomial(20, true);
  EXPECT_EQ(s.dtype(), dtypes::int32);
  EXPECT_EQ(s.shape(), tc::Shape{20});
  // the index is the number of cdf entries <= u (cdf = [0.1, 0.3, 0.6, 1.0] in float32)
  std::vector<float> u = rand_ref(42, 0, 20);
  const float cdf[4] = {1.0f / 10, 3.0f / 10, 6.0f / 10, 1.0f};
  std::vector<int32_t> got = vals<int32_t>(s);
  for (int i = 0; i < 20; i++) {
    int want = 0;
    for (float c : cdf) want += u[i] >= c;
    EXPECT_EQ(got[i], want) << i << " u=" << u[i];
  }
  // 10^5 draws from two rows, one with a zero weight
  const int n = 50000;
  Tensor w2 = Tensor({0.5f, 0.0f, 1.5f, 1.0f, 1.0f, 2.0f}, tc::Shape{2, 3});
  Tensor d = w2.multinomial(n, true);
  EXPECT_EQ(d.shape(), (tc::Shape{2, n}));
  std::vector<int32_t> dv = vals<int32_t>(d);
  const double p[2][3] = {{0.25, 0.0, 0.75}, {0.25, 0.25, 0.5}};
  for (int r = 0; r < 2; r++) {
    std::vector<int> c(3);
    for (int i = 0; i < n; i++) c[static_cast<size_t>(dv[static_cast<size_t>(r * n + i)])]++;
    for (int k = 0; k < 3; k++)
      EXPECT_NEAR(c[k], n * p[r][k], 5 * std::sqrt(n * p[r][k] * (1 - p[r][k]))) << r << k;
  }
}

TEST(Multinomial, WithoutReplacement) {
  Tensor::manual_seed(4);
  Tensor w = Tensor({1, 0, 3, 4, 2}, tc::Shape{5});
  Tensor s = w.multinomial(4, false);
  EXPECT_EQ(s.dtype(), dtypes::int32);
  std::vector<int32_t> v = vals<int32_t>(s);
  std::set<int32_t> distinct(v.begin(), v.end());
  EXPECT_EQ(distinct.size(), 4u);
  EXPECT_EQ(distinct.count(1), 0u);  // weight 0 is never drawn while others remain
  // exact: the 4 largest log2(u) / w (Efraimidis-Spirakis)
  Tensor::manual_seed(4);
  Tensor w2 = Tensor({1, 1, 3, 4, 2}, tc::Shape{1, 5});
  std::vector<int32_t> got = vals<int32_t>(w2.multinomial(2, false));
  std::vector<float> u = rand_ref(4, 0, 5);
  const float wv[5] = {1, 1, 3, 4, 2};
  std::vector<int> order(5);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return std::log2(u[a]) / wv[a] > std::log2(u[b]) / wv[b]; });
  EXPECT_EQ(got, (std::vector<int32_t>{order[0], order[1]}));
  // the first draw follows the weights: 2000 rows of [1, 3]
  const int rows = 2000;
  std::vector<float> wr;
  for (int i = 0; i < rows; i++) wr.insert(wr.end(), {1.0f, 3.0f});
  std::vector<int32_t> first = vals<int32_t>(Tensor(wr, tc::Shape{rows, 2}).multinomial(2, false));
  int ones = 0;
  for (int i = 0; i < rows; i++) {
    EXPECT_NE(first[2 * i], first[2 * i + 1]);
    ones += first[2 * i] == 1;
  }
  EXPECT_NEAR(ones, rows * 0.75, 5 * std::sqrt(rows * 0.75 * 0.25));
}

// ------------------------------------------------------------------ dropout and training

TEST(Dropout, IdentityUnlessTraining) {
  Tensor x = Tensor({1, 2, 3, 4});
  EXPECT_FALSE(Tensor::training());
  EXPECT_EQ(x.dropout(0.5).uop(), x.uop());
  {
    Tensor::Train on;
    EXPECT_TRUE(Tensor::training());
    {
      Tensor::Train off(false);
      EXPECT_FALSE(Tensor::training());
      EXPECT_EQ(x.dropout(0.5).uop(), x.uop());
    }
    EXPECT_TRUE(Tensor::training());
    EXPECT_EQ(x.dropout(0.0).uop(), x.uop());
  }
  EXPECT_FALSE(Tensor::training());
  Tensor::set_training(true);
  EXPECT_TRUE(Tensor::training());
  Tensor::set_training(false);
}

TEST(Dropout, MaskAndScalingExact) {
  Tensor::Train on;
  Tensor::manual_seed(17);
  std::vector<float> xs(12);
  for (int i = 0; i < 12; i++) xs[i] = 0.5f * static_cast<float>(i) - 2.0f;
  // a non-contiguous input: the transposed view of a (3, 4) tensor
  Tensor x = Tensor(xs, tc::Shape{4, 3}).transpose();
  std::vector<float> got = vals<float>(x.dropout(0.25));
  std::vector<float> u = rand_ref(17, 0, 12);
  for (int i = 0; i < 12; i++) {
    float xi = xs[static_cast<size_t>((i % 4) * 3 + i / 4)];
    float want = u[i] >= 0.25f ? xi / 0.75f : 0.0f;
    EXPECT_FLOAT_EQ(got[i], want) << i;
  }
  std::vector<float> zeros = vals<float>(x.dropout(1.0));
  for (float z : zeros) EXPECT_EQ(z, 0.0f);
  // the fraction dropped is p within 5 sigma, and the mean is kept
  const int n = 100000;
  std::vector<double> v = vals<double>(Tensor::ones({n}).dropout(0.3));
  int dropped = static_cast<int>(std::count(v.begin(), v.end(), 0.0));
  EXPECT_NEAR(dropped, 0.3 * n, 5 * std::sqrt(n * 0.3 * 0.7));
  for (double y : v) {
    if (y != 0) {
      ASSERT_NEAR(y, 1 / 0.7, 1e-6);
    }
  }
}

TEST(Dropout, GradientIsTheMask) {
  Tensor::Train on;
  Tensor::manual_seed(6);
  Tensor x = Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}).requires_grad_();
  Tensor y = x.dropout(0.5);
  y.sum().backward();
  std::vector<double> out = vals<double>(y), g = vals<double>(*x.grad());
  for (int i = 0; i < 6; i++) EXPECT_DOUBLE_EQ(g[i], out[i] == 0 ? 0.0 : 2.0) << i;
}

// ------------------------------------------------------------------ errors

template <typename F>
void expect_error(F f, const std::string& what) {
  EXPECT_THAT(error_message(f), HasSubstr(what));
}

TEST(RandomErrors, BadArguments) {
  expect_error([] { Tensor::rand({2}, dtypes::int32); },
               "Tensor.rand: only float dtypes are supported, got int");
  expect_error([] { Tensor::rand({2, -1}); }, "Tensor.rand: shape (2, -1) has a negative");
  expect_error([] { Tensor::randn({-3}); }, "Tensor.randn: shape (-3,) has a negative");
  expect_error([] { Tensor::uniform({2}, {.low = 1.0, .high = 1.0}); },
               "Tensor.uniform: requires low < high, got low=1, high=1");
  expect_error([] { Tensor::randint({2}, {.low = 3, .high = 2}); },
               "Tensor.randint: requires low < high, got low=3, high=2");
  expect_error([] { Tensor::randint({2}, {.dtype = dtypes::float32}); },
               "Tensor.randint: dtype must be an integer dtype, got float");
  expect_error([] { Tensor::randint({2}, {.low = -1, .high = 5, .dtype = dtypes::uint8}); },
               "[low, high) = [-1, 5) does not fit");
  expect_error([] { Tensor::normal({2}, {.std = -1.0}); },
               "Tensor.normal: requires std >= 0, got std=-1");
  expect_error([] { Tensor::kaiming_uniform({}); }, "Tensor.kaiming_uniform: needs at least one");
  expect_error(
      [] {
        Tensor::glorot_uniform({3, 0});
      },
      "Tensor.glorot_uniform: prod(shape[1:]) is 0 for shape (3, 0)");
  expect_error([] { Tensor::randperm(-2); }, "Tensor.randperm: n must be non-negative, got -2");
  expect_error([] { Tensor({1, 2}).dropout(1.5); }, "Tensor.dropout: p=1.5 is out of range [0, 1]");
  expect_error([] { Tensor({1, 2}).dropout(-0.1); }, "out of range [0, 1]");
}

TEST(RandomErrors, BadMultinomial) {
  expect_error(
      [] {
        Tensor::ones({2, 2, 2}).multinomial(1);
      },
      "Tensor.multinomial: weights must be 1-D or 2-D, got shape (2, 2, 2)");
  expect_error([] { Tensor::ones({}).multinomial(1); }, "must be 1-D or 2-D, got shape ()");
  expect_error([] { Tensor({1, 2}).multinomial(0); }, "num_samples must be positive, got 0");
  expect_error(
      [] {
        Tensor({1, 2}).multinomial(3, false);
      },
      "cannot draw 3 samples without replacement from 2 categories");
  expect_error([] { Tensor({1, -2}).multinomial(1); }, "must be finite and non-negative");
  expect_error([] { Tensor({1, NAN}).multinomial(1); }, "must be finite and non-negative");
  expect_error(
      [] {
        Tensor({1, 2, 0, 0}, tc::Shape{2, 2}).multinomial(1, true);
      },
      "a row of weights of shape (2, 2) sums to zero");
}

}  // namespace
