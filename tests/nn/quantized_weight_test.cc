// nn::QuantizedWeight: every ggml block type repacked for products of DOT4s. Its values equal
// ggml's: NumPy's dequantized blocks bit for bit (blocks.gguf, as quant_test.cc), and for the K
// formats gguf::dequantize's within the float16 rounding of their scales' products
// (blocks.gguf's K scales overflow that, and are refused). Its matvec equals a double-precision
// loop over llama.cpp's arithmetic (x quantized to int8 per 32, the weight's values) for widths
// that pack 16, 8, 4 or 1 blocks side by side, on weights gguf::quantize made (Q4_0, Q8_0, Q4_K,
// Q6_K, within its error bounds) or random blocks.
#include "nn/quantized_weight.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "frontends/llm/gguf.h"
#include "frontends/llm/quant.h"
#include "tinycore/error.h"

namespace {

using tc::Tensor;
using tc::nn::QuantizedWeight;
namespace gguf = tc::gguf;

bool k_format(uint32_t type) {
  return type == gguf::Q4_K || type == gguf::Q5_K || type == gguf::Q6_K;
}
bool quantizes(uint32_t type) {  // gguf::quantize's types
  return type == gguf::Q4_0 || type == gguf::Q8_0 || type == gguf::Q4_K || type == gguf::Q6_K;
}

// `n` values of `type` in random blocks: random bytes, with each block's float16 scales (and
// offsets) drawn about 0.01 (Q4_1's and Q5_1's offsets about 0.1).
std::vector<uint8_t> random_blocks(uint32_t type, int64_t n, std::mt19937& gen) {
  const gguf::TypeInfo& info = gguf::type_info(type);
  std::vector<uint8_t> b(static_cast<size_t>(n / info.block_elems * info.block_bytes));
  std::uniform_int_distribution<int> byte(0, 255);
  std::normal_distribution<float> normal;
  for (uint8_t& x : b) x = static_cast<uint8_t>(byte(gen));
  std::vector<size_t> at = {0};  // where a block's float16s are
  if (type == gguf::Q4_1 || type == gguf::Q5_1 || type == gguf::Q4_K || type == gguf::Q5_K)
    at.push_back(2);
  if (type == gguf::Q6_K) at = {208};
  for (size_t block = 0; block < b.size(); block += static_cast<size_t>(info.block_bytes))
    for (size_t f : at) {
      float scale = f == 2 && !k_format(type) ? 0.1f : 0.01f;
      _Float16 h = static_cast<_Float16>(normal(gen) * scale);
      std::memcpy(&b[block + f], &h, 2);
    }
  return b;
}

// A K format's scale products, rounded to float16, move a value s q - m by at most 2^-11 (|s q| +
// |m|): with |m| and |s q - m| at most the largest magnitude in its block of 256, 3 2^-11 of that.
const double kScaleRounding = std::ldexp(3.0, -11);

class Quantized : public ::testing::TestWithParam<uint32_t> {};

TEST_P(Quantized, ValuesEqualNumPysBitForBit) {
  std::string name = gguf::type_info(GetParam()).name;
  std::transform(name.begin(), name.end(), name.begin(), ::tolower);
  std::ifstream f(std::string(TC_FIXTURE_DIR) + "/llm_quant/blocks.gguf", std::ios::binary);
  std::vector<uint8_t> bytes(std::istreambuf_iterator<char>(f), {});
  gguf::File file = gguf::parse(bytes.data(), bytes.size());
  const gguf::TensorInfo *q = nullptr, *expected = nullptr;
  for (const gguf::TensorInfo& t : file.tensors) {
    if (t.name == name) q = &t;
    if (t.name == name + ".expected") expected = &t;
  }
  ASSERT_TRUE(q && expected);
  const int64_t out = q->dims.size() > 1 ? q->dims[1] : 1, in = q->dims[0];
  Tensor raw = Tensor::from_blob(bytes.data() + q->offset, {static_cast<int64_t>(q->bytes)},
                                 tc::dtypes::uint8);
  const uint8_t* blocks = bytes.data() + q->offset;
  if (k_format(GetParam())) {  // these hold scales of 60000 and 65504, whose products overflow f16
    EXPECT_FALSE(gguf::packs(GetParam(), blocks, q->bytes));  // their values: in the matvec test
    return;
  }
  ASSERT_TRUE(gguf::packs(GetParam(), blocks, q->bytes));
  std::vector<float> got =
      gguf::packed(raw, GetParam(), out, in).realized().dequantized().data<float>();
  ASSERT_EQ(got.size(), expected->bytes / 4);
  EXPECT_EQ(std::memcmp(got.data(), bytes.data() + expected->offset, expected->bytes), 0);
}

// llama.cpp's x·w for one row, in double: x quantized per 32 in float32 as the kernel does (d =
// max |x| / 127, x * (1 / d) rounded half away from zero), then the sum over blocks of dx Σ w qx,
// w the weight's values as ggml dequantizes them (quant_test.cc: equal to NumPy's). Also, in
// `magnitude`, the sum of dx Σ |qx| times |w| plus its block's largest |w|, which bounds what the K
// formats' rounded scales may move.
double reference(const float* x, const float* w, int64_t in, double* magnitude) {
  double sum = 0, size = 0;
  for (int64_t b = 0; b < in / 32; b++) {
    const float* v = x + 32 * b;
    float amax = 0;
    for (int i = 0; i < 32; i++) amax = std::max(amax, std::fabs(v[i]));
    float d = amax / 127, id = d > 0 ? 1 / d : 0.0f;
    double dot = 0, abs = 0, wmax = 0;
    for (int i = 0; i < 32; i++) wmax = std::max(wmax, std::fabs(double{w[32 * b + i]}));
    for (int i = 0; i < 32; i++) {
      float xq = v[i] * id;
      double q = static_cast<double>(static_cast<int64_t>(xq + (xq < 0 ? -0.5f : 0.5f)));
      dot += w[32 * b + i] * q;  // roundf's ties
      abs += (std::fabs(double{w[32 * b + i]}) + wmax) * std::fabs(q);
    }
    sum += static_cast<double>(d) * dot, size += static_cast<double>(d) * abs;
  }
  *magnitude = size;
  return sum;
}

TEST_P(Quantized, MatvecIsLlamaCppsProduct) {
  const uint32_t type = GetParam();
  std::mt19937 gen(11);
  std::normal_distribution<float> normal;
  // in: 1024 packs 16 blocks side by side, 256 8, 128 4, 96 one; two and three leading dims
  std::vector<std::tuple<int64_t, int64_t, tc::Shape>> cases{{40, 1024, {1, 1}}, {17, 256, {3}}};
  if (!k_format(type)) cases.insert(cases.end(), {{24, 128, {2, 3}}, {33, 96, {4}}});
  for (auto [out, in, lead] : cases) {
    std::vector<float> w(static_cast<size_t>(out * in));
    for (size_t i = 0; i < w.size(); i++)  // each 256 at a scale of 1e-3 .. 10
      w[i] = normal(gen) * std::pow(10.0f, static_cast<float>(i / 256 % 5) - 3);
    for (int64_t i = 0; i < 32; i++) w[static_cast<size_t>(in + i)] = 0;  // a block of zeros
    // the types gguf::quantize makes from w, the others random blocks
    std::vector<uint8_t> blocks = quantizes(type) ? gguf::quantize(w.data(), out * in, type)
                                                  : random_blocks(type, out * in, gen);
    Tensor raw =
        Tensor::from_blob(blocks.data(), {static_cast<int64_t>(blocks.size())}, tc::dtypes::uint8);
    std::vector<float> values = gguf::dequantize(raw, type, {out, in}).data<float>();
    // the quantizer's error: at most a step of 15 levels (4 bits) or 63 (6 and 8 bits) across
    // twice the largest magnitude of its 256 values (half a step of q's rounding, and Q4_K's
    // 6-bit scale and min rounded too)
    double step = type == gguf::Q4_0 || type == gguf::Q4_K ? 2.0 / 15 : 2.0 / 63;
    for (size_t i = 0; quantizes(type) && i < w.size(); i += 256) {
      double amax = 0, err = 0;
      for (size_t j = i; j < std::min(w.size(), i + 256); j++)
        amax = std::max(amax, std::fabs(double{w[j]})),
        err = std::max(err, std::fabs(double{values[j]} - w[j]));
      ASSERT_LE(err, step * amax) << "values " << i << " of (" << out << ", " << in << ")";
    }
    ASSERT_TRUE(gguf::packs(type, blocks.data(), blocks.size()));
    QuantizedWeight q = gguf::packed(raw, type, out, in).realized();
    // its values: ggml's (the K formats' within their scales' rounding, per block of 256)
    std::vector<float> kept = q.dequantized().data<float>();
    for (size_t i = 0; i < w.size(); i += 256) {
      double amax = 0;
      for (size_t j = i; j < std::min(w.size(), i + 256); j++)
        amax = std::max(amax, std::fabs(double{values[j]}));
      for (size_t j = i; j < std::min(w.size(), i + 256); j++)
        ASSERT_NEAR(kept[j], values[j], k_format(type) ? kScaleRounding * amax : 0)
            << "value " << j;
    }
    int64_t rows = 1;
    for (int64_t d : lead) rows *= d;
    std::vector<float> x(static_cast<size_t>(rows * in));
    for (float& v : x) v = normal(gen);
    for (int64_t i = 0; i < 32; i++) x[static_cast<size_t>(i)] = 0;  // an input block of zeros
    tc::Shape xs = lead, ys = lead;
    xs.push_back(in);
    ys.push_back(out);
    Tensor y = q.matvec(Tensor(x, xs));
    ASSERT_EQ(y.shape(), ys);
    std::vector<float> got = y.data<float>();
    for (int64_t r = 0; r < rows; r++)
      for (int64_t o = 0; o < out; o++) {
        double size = 0, want = reference(&x[static_cast<size_t>(r * in)],
                                          &values[static_cast<size_t>(o * in)], in, &size);
        double rounding = k_format(type) ? kScaleRounding * size : 0;
        EXPECT_NEAR(got[static_cast<size_t>(r * out + o)], want,
                    1e-5 * (1 + std::fabs(want)) + rounding)
            << "(" << out << ", " << in << ") row " << r << " output " << o;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, Quantized,
                         ::testing::Values(gguf::Q4_0, gguf::Q4_1, gguf::Q5_0, gguf::Q5_1,
                                           gguf::Q8_0, gguf::Q4_K, gguf::Q5_K, gguf::Q6_K),
                         [](const ::testing::TestParamInfo<uint32_t>& info) {
                           return std::string(gguf::type_info(info.param).name);
                         });

TEST(Quantized, ErrorsNameTheSizes) {
  Tensor raw = Tensor::from_vector<uint8_t>(std::vector<uint8_t>(36, 0));
  try {
    gguf::packed(raw, gguf::Q4_0, 2, 64);
    ADD_FAILURE() << "4 blocks in 36 bytes";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("(2, 64) is 72 bytes, not 36"), std::string::npos)
        << e.what();
  }
  try {
    gguf::packed(raw, gguf::Q8_0, 2, 32);
    ADD_FAILURE() << "2 blocks of 34 bytes in 36";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("68 bytes, not 36"), std::string::npos) << e.what();
  }
  try {
    gguf::packed(raw, gguf::Q4_K, 1, 128);
    ADD_FAILURE() << "128 inputs of q4_K";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("multiple of 256"), std::string::npos) << e.what();
  }
  QuantizedWeight q = gguf::packed(raw, gguf::Q4_0, 2, 32);
  try {
    q.matvec(Tensor::from_vector<float>(std::vector<float>(64, 1.0f)));
    ADD_FAILURE() << "64 inputs against 32";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("32 inputs"), std::string::npos) << e.what();
  }
  // a message naming what was wrong, for each of these
  auto names = [](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no error naming " << what;
    } catch (const tc::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  Tensor f16 = Tensor::from_vector<uint8_t>(std::vector<uint8_t>(512, 0));
  names([&] { gguf::packed(f16, gguf::F16, 1, 256); }, "type 1 is not kept packed");
  names([&] { q.block_scale(1); }, "block_scale(1) of a weight with 1 scales a block");
  QuantizedWeight wide =
      gguf::packed(Tensor::from_vector<uint8_t>(std::vector<uint8_t>(36 * 16, 0)), gguf::Q4_0, 1,
                   1024);  // a group of 16 blocks, not 1 of 1
  names([&] { wide.matvec(q.quantize(Tensor::from_vector<float>(std::vector<float>(32, 1.0f)))); },
        "is not one for this weight's");
}

}  // namespace
