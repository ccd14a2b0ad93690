// nn::QuantizedWeight: Q4_0 and Q8_0 blocks repacked for products of DOT4s. Its values equal
// NumPy's dequantized blocks bit for bit (blocks.gguf, as quant_test.cc), and its matvec equals
// a double-precision loop over llama.cpp's arithmetic (x quantized to int8 per 32, integer dot
// products of the weight's integers, each block's two scales) for widths that pack 16, 4 or 1
// blocks side by side.
#include "nn/quantized_weight.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include "frontends/llm/gguf.h"
#include "frontends/llm/quant.h"
#include "tinycore/error.h"

namespace {

using tc::Tensor;
using tc::nn::QuantizedWeight;
namespace gguf = tc::gguf;

float f16(const uint8_t* p) {
  _Float16 h;
  std::memcpy(&h, p, 2);
  return static_cast<float>(h);
}

class Quantized : public ::testing::TestWithParam<uint32_t> {};

TEST_P(Quantized, ValuesEqualNumPyBitForBit) {
  const std::string name = GetParam() == gguf::Q4_0 ? "q4_0" : "q8_0";
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
  std::vector<float> got =
      QuantizedWeight::from_blocks(gguf::packed_format(GetParam()), raw, out, in)
          .realized()
          .dequantized()
          .data<float>();
  ASSERT_EQ(got.size(), expected->bytes / 4);
  EXPECT_EQ(std::memcmp(got.data(), bytes.data() + expected->offset, expected->bytes), 0);
}

// llama.cpp's x·w for one row of blocks, in double: x quantized per 32 in float32 as the kernel
// does (d = max |x| / 127, x * (1 / d) rounded half away from zero), then the sum over blocks of
// dx * dw * Σ q qx (Q4_0's q: its nibble - 8).
double reference(const float* x, const uint8_t* row, int64_t in, uint32_t type) {
  const int64_t bytes = type == gguf::Q4_0 ? 18 : 34;
  double sum = 0;
  for (int64_t b = 0; b < in / 32; b++) {
    const float* v = x + 32 * b;
    const uint8_t* block = row + bytes * b;
    float amax = 0;
    for (int i = 0; i < 32; i++) amax = std::max(amax, std::fabs(v[i]));
    float d = amax / 127, id = d > 0 ? 1 / d : 0.0f;
    int64_t dot = 0;
    for (int i = 0; i < 32; i++) {
      int w = type == gguf::Q8_0 ? static_cast<int8_t>(block[2 + i])
              : i < 16           ? (block[2 + i] & 15) - 8
                                 : (block[2 + i - 16] >> 4) - 8;
      float xq = v[i] * id;
      dot += w * static_cast<int64_t>(xq + (xq < 0 ? -0.5f : 0.5f));  // roundf's ties
    }
    sum += static_cast<double>(d) * f16(block) * static_cast<double>(dot);
  }
  return sum;
}

TEST_P(Quantized, MatvecIsLlamaCppsProduct) {
  const uint32_t type = GetParam();
  const int64_t bytes = type == gguf::Q4_0 ? 18 : 34;
  std::mt19937 gen(11);
  std::normal_distribution<float> normal;
  // in: 1024 packs 16 blocks side by side, 128 packs 4, 96 one; two and three leading dims
  for (auto [out, in, lead] : {std::tuple<int64_t, int64_t, tc::Shape>{40, 1024, {1, 1}},
                               {24, 128, {2, 3}},
                               {33, 96, {4}}}) {
    std::vector<float> w(static_cast<size_t>(out * in));
    for (float& v : w) v = normal(gen);
    for (int64_t i = 0; i < 32; i++) w[static_cast<size_t>(in + i)] = 0;  // a block of zeros
    std::vector<uint8_t> blocks = gguf::quantize(w.data(), out * in, type);
    Tensor raw =
        Tensor::from_blob(blocks.data(), {static_cast<int64_t>(blocks.size())}, tc::dtypes::uint8);
    QuantizedWeight q =
        QuantizedWeight::from_blocks(gguf::packed_format(type), raw, out, in).realized();
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
        double want = reference(&x[static_cast<size_t>(r * in)],
                                &blocks[static_cast<size_t>(o * in / 32 * bytes)], in, type);
        EXPECT_NEAR(got[static_cast<size_t>(r * out + o)], want, 1e-5 * (1 + std::fabs(want)))
            << "(" << out << ", " << in << ") row " << r << " output " << o;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, Quantized, ::testing::Values(gguf::Q4_0, gguf::Q8_0),
                         [](const ::testing::TestParamInfo<uint32_t>& info) {
                           return std::string(info.param == gguf::Q4_0 ? "q4_0" : "q8_0");
                         });

TEST(Quantized, ErrorsNameTheSizes) {
  Tensor raw = Tensor::from_vector<uint8_t>(std::vector<uint8_t>(36, 0));
  using Format = QuantizedWeight::Format;
  try {
    QuantizedWeight::from_blocks(Format::kQ4_0, raw, 2, 64);
    ADD_FAILURE() << "4 blocks in 36 bytes";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("(2, 64)"), std::string::npos) << e.what();
  }
  try {
    QuantizedWeight::from_blocks(Format::kQ8_0, raw, 2, 32);
    ADD_FAILURE() << "2 blocks of 34 bytes in 36";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("34 bytes"), std::string::npos) << e.what();
  }
  QuantizedWeight q = QuantizedWeight::from_blocks(Format::kQ4_0, raw, 2, 32);
  try {
    q.matvec(Tensor::from_vector<float>(std::vector<float>(64, 1.0f)));
    ADD_FAILURE() << "64 inputs against 32";
  } catch (const tc::Error& e) {
    EXPECT_NE(std::string(e.what()).find("32 inputs"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gguf::packed_format(gguf::Q4_K), tc::Error);
}

}  // namespace
