// ggml's block formats against NumPy (tests/fixtures/gen_gguf_quant.py writes blocks.gguf: random
// blocks of every type with special scales, each tensor T next to T.expected, its float32 values
// from a NumPy dequantizer, and quant.input next to its q8_0 and q4_0 blocks from NumPy copies of
// ggml's reference quantizers). dequantize() must match bit for bit, alone and fused into a
// matmul (one kernel); quantize() byte for byte; and its round trip stays within the bounds the
// formats give.
#include "frontends/llm/quant.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include "tinycore/engine/realize.h"
#include "tinycore/error.h"

namespace {

namespace gguf = tc::gguf;
using tc::Tensor;
using ::testing::HasSubstr;

// blocks.gguf, parsed once.
struct Blocks {
  std::vector<uint8_t> bytes;
  gguf::File file;
  Blocks() {
    std::ifstream f(std::string(TC_FIXTURE_DIR) + "/llm_quant/blocks.gguf", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
    file = gguf::parse(bytes.data(), bytes.size());
  }
  const gguf::TensorInfo& info(const std::string& name) const {
    for (const gguf::TensorInfo& t : file.tensors)
      if (t.name == name) return t;
    throw std::runtime_error("blocks.gguf has no tensor " + name);
  }
  Tensor raw(const std::string& name) const {
    const gguf::TensorInfo& t = info(name);
    return Tensor::from_blob(bytes.data() + t.offset, {static_cast<int64_t>(t.bytes)},
                             tc::dtypes::uint8);
  }
  std::vector<float> floats(const std::string& name) const {
    const gguf::TensorInfo& t = info(name);
    EXPECT_EQ(t.type, gguf::F32);
    std::vector<float> v(t.bytes / 4);
    std::memcpy(v.data(), bytes.data() + t.offset, t.bytes);
    return v;
  }
  // The PyTorch-order shape: the GGUF dims reversed.
  tc::Shape shape(const std::string& name) const {
    const std::vector<int64_t>& d = info(name).dims;
    return tc::Shape(d.rbegin(), d.rend());
  }
};

const Blocks& blocks() {
  static const Blocks b;
  return b;
}

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

const char* const kTypes[] = {"f32",  "f16",  "bf16", "q8_0", "q4_0", "q4_1",
                              "q5_0", "q5_1", "q4_k", "q5_k", "q6_k"};

class Dequantize : public ::testing::TestWithParam<const char*> {};

TEST_P(Dequantize, EqualsNumPyBitForBit) {
  const Blocks& b = blocks();
  const std::string name = GetParam();
  Tensor y = gguf::dequantize(b.raw(name), b.info(name).type, b.shape(name));
  EXPECT_EQ(y.shape(), b.shape(name));
  EXPECT_EQ(y.dtype(), tc::dtypes::float32);
  std::vector<float> got = y.data<float>(), want = b.floats(name + ".expected");
  ASSERT_EQ(got.size(), want.size());
  int mismatches = 0;
  for (size_t i = 0; i < got.size(); i++)
    if (bits(got[i]) != bits(want[i]) && mismatches++ < 10)
      ADD_FAILURE() << name << "[" << i << "]: " << got[i] << " vs NumPy's " << want[i];
  EXPECT_EQ(mismatches, 0);
}

// x @ W.T with W dequantized in the matmul's kernel, against a double-precision loop over NumPy's
// values of W. One row of x (a decode step) is one kernel that reads W's blocks as stored; with
// more rows W is dequantized into a buffer first (the scheduler realizes a computed value before
// it is expanded, here over x's rows, rather than recompute it per row).
TEST_P(Dequantize, FusesIntoTheMatmul) {
  const Blocks& b = blocks();
  const std::string name = GetParam();
  const tc::Shape s = b.shape(name);  // {N, K}
  const int64_t n = s[0], k = s[1];
  std::mt19937 gen(7);
  std::normal_distribution<float> normal;
  for (int64_t m : {1, 3}) {
    std::vector<float> xv(static_cast<size_t>(m * k));
    for (float& v : xv) v = normal(gen);
    Tensor x = Tensor(xv, tc::Shape{m, k}).realize();
    Tensor raw = b.raw(name).realize();
    tc::engine::GlobalCounters::reset();
    Tensor y = x.matmul(gguf::dequantize(raw, b.info(name).type, s).T()).realize();
    if (m == 1) {  // its buffers: W's blocks, x, y and the shift tables (a few bytes)
      EXPECT_EQ(tc::engine::GlobalCounters::kernel_count, 1) << name;
      EXPECT_LE(tc::engine::GlobalCounters::global_mem,
                static_cast<double>(b.info(name).bytes + 4 * (k + n) + 16))
          << name;
    }
    std::vector<float> got = y.data<float>(), w = b.floats(name + ".expected");
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double ref = 0, mag = 0;
        for (int64_t l = 0; l < k; l++) {
          ref += double(xv[i * k + l]) * w[j * k + l];
          mag += std::fabs(double(xv[i * k + l]) * w[j * k + l]);
        }
        EXPECT_NEAR(got[i * n + j], ref, 1e-6 * mag) << name << " [" << i << "," << j << "]";
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, Dequantize, ::testing::ValuesIn(kTypes));

TEST(Dequantize, ErrorsNameTheTypeShapeAndSizes) {
  const Blocks& b = blocks();
  auto error = [](auto f) -> std::string {
    try {
      f();
    } catch (const tc::Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  Tensor raw = b.raw("q4_0");  // 5 rows of 64: 10 blocks of 18 bytes
  EXPECT_EQ(error([&] { gguf::dequantize(raw, gguf::Q4_0, {5, 64}); }), "(no error)");
  EXPECT_THAT(error([&] {
                gguf::dequantize(raw, gguf::Q4_0, {4, 64});
              }),
              HasSubstr("a q4_0 tensor of shape (4, 64) is 144 bytes, not 180"));
  EXPECT_THAT(error([&] {
                gguf::dequantize(raw, gguf::Q4_0, {10, 30});
              }),
              HasSubstr("a q4_0 tensor's last dimension must be a multiple of 32; shape (10, 30)"));
  EXPECT_THAT(error([&] {
                gguf::dequantize(raw, gguf::Q4_K, {1, 320});
              }),
              HasSubstr("q4_K tensor's last dimension must be a multiple of 256"));
  EXPECT_THAT(error([&] { gguf::dequantize(raw, 5, {5, 64}); }), HasSubstr("ggml type 5"));
  EXPECT_THAT(error([&] {
                gguf::dequantize(raw.reshape({10, 18}), gguf::Q4_0, {5, 64});
              }),
              HasSubstr("must be a 1-D uint8 tensor"));
  EXPECT_THAT(error([&] {
                gguf::dequantize(raw.cast(tc::dtypes::int8), gguf::Q4_0, {5, 64});
              }),
              HasSubstr("must be a 1-D uint8 tensor, not char of shape (180,)"));
  EXPECT_THAT(error([&] {
                gguf::dequantize(raw, gguf::Q4_0, {0, 64});
              }),
              HasSubstr("q4_0 tensor of shape (0, 64)"));
  EXPECT_THAT(error([&] {
                gguf::dequantize(raw, gguf::Q4_0, {int64_t{1} << 40, 1 << 20});
              }),
              HasSubstr("q4_0 tensor of shape (1099511627776, 1048576)"));
}

TEST(Quantize, EqualsNumPyByteForByte) {
  const Blocks& b = blocks();
  std::vector<float> x = b.floats("quant.input");
  for (auto [type, name] :
       {std::pair{gguf::Q8_0, "quant.q8_0"}, std::pair{gguf::Q4_0, "quant.q4_0"}}) {
    std::vector<uint8_t> got = gguf::quantize(x.data(), static_cast<int64_t>(x.size()), type);
    const gguf::TensorInfo& t = b.info(name);
    ASSERT_EQ(got.size(), t.bytes) << name;
    const uint8_t* want = b.bytes.data() + t.offset;
    for (size_t i = 0; i < got.size(); i++)
      EXPECT_EQ(got[i], want[i]) << name << " byte " << i << " (block " << i / (t.bytes / 10)
                                 << ")";
  }
}

TEST(Quantize, Errors) {
  std::vector<float> x(40, 1.0f);
  try {
    gguf::quantize(x.data(), 40, gguf::Q8_0);
    ADD_FAILURE();
  } catch (const tc::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("40 values are not a whole number of q8_0 blocks of 32"));
  }
  x[33] = NAN;
  try {
    gguf::quantize(x.data(), 64, gguf::Q4_0);
    ADD_FAILURE();
  } catch (const tc::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("value 33 is nan, not a finite number"));
  }
  try {
    gguf::quantize(x.data(), 32, gguf::Q5_K);
    ADD_FAILURE();
  } catch (const tc::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("ggml type 13 is not supported"));
  }
}

// quantize then dequantize (through the Tensor path). Per block, with a = max |x|, d32 the float32
// scale the values are divided by (q8_0: a / 127; q4_0: a / 8 in magnitude) and d the f16 it is
// stored as (|d - d32| is f16's rounding: relative 2^-11, or absolute 2^-25 when subnormal):
//  q8_0: q = round(x / d32), |q| <= 127: |x - q d| <= d32 / 2 + 127 |d - d32|;
//  q4_0: x / d32 in [-8, 8], q = min(15, floor(x / d32 + 8.5)) - 8 rounds to nearest except near
//        +8, clamped to 7: |x - q d| <= d32 + 8 |d - d32|.
// Plus float32 rounding of x / d32 and of q * d: a few ulps of |x|.
TEST(Quantize, RoundTripErrorBounds) {
  std::mt19937 gen(3);
  std::normal_distribution<float> normal;
  const int64_t nb = 70;
  std::vector<float> x(static_cast<size_t>(nb * 32));
  for (int64_t i = 0; i < nb; i++) {
    // 1e-5 (a subnormal f16 scale) .. 1e3 (q8_0's largest scale near 30)
    float scale = std::pow(10.0f, static_cast<float>(i % 9) - 5);
    for (int j = 0; j < 32; j++) x[i * 32 + j] = normal(gen) * scale;
  }
  for (auto [type, half, nq] : {std::tuple{gguf::Q8_0, 0.5, 127}, std::tuple{gguf::Q4_0, 1.0, 8}}) {
    std::vector<uint8_t> q = gguf::quantize(x.data(), nb * 32, type);
    const int64_t bb = type == gguf::Q8_0 ? 34 : 18;
    Tensor raw = Tensor::from_blob(q.data(), {static_cast<int64_t>(q.size())}, tc::dtypes::uint8);
    std::vector<float> y = gguf::dequantize(raw, type, {nb * 32}).data<float>();
    double worst = 0;
    for (int64_t i = 0; i < nb; i++) {
      float a = 0;
      for (int j = 0; j < 32; j++) a = std::max(a, std::fabs(x[i * 32 + j]));
      const double d32 = a / static_cast<float>(nq);
      _Float16 h;
      std::memcpy(&h, q.data() + i * bb, 2);
      const double d = std::fabs(static_cast<double>(h));
      ASSERT_LE(std::fabs(d - d32), std::max(d32 * std::ldexp(1.0, -11), std::ldexp(1.0, -25)))
          << "block " << i;
      const double bound = half * d32 + nq * std::fabs(d - d32);
      for (int j = 0; j < 32; j++) {
        const double err = std::fabs(double(x[i * 32 + j]) - y[i * 32 + j]);
        EXPECT_LE(err, bound + 4e-7 * a) << "type " << type << " block " << i << " value " << j;
        worst = std::max(worst, err / d32);
      }
    }
    // not a loose bound: rounding to nearest reaches almost half a step
    EXPECT_GT(worst, 0.45) << "type " << type;
  }
}

}  // namespace
