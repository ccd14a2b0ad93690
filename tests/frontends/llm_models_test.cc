// Tiny random language models of every supported family, as Hugging Face folders and GGUF files
// (tests/fixtures/gen_llm_models.py), against the logits and greedy tokens of that script's own
// PyTorch implementation: the same weights in every file of a family, so one set of references.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "frontends/llm/checkpoint.h"
#include "frontends/llm/quant.h"
#include "tests/error_message.h"
#include "tests/tensor/fixture.h"
#include "tinycore/jit/jit.h"
#include "tinycore/variable.h"

namespace {

using tc::Shape;
using tc::Tensor;

struct ModelFile {
  const char* family;  // the fixture's case
  const char* file;    // under tests/fixtures/llm
};

std::string path_of(const ModelFile& f) { return std::string(TC_FIXTURE_DIR) + "/llm/" + f.file; }

std::unique_ptr<tc::nn::LanguageModel> load(const ModelFile& f) {
  return tc::llm::load_language_model(path_of(f)).model;
}

std::vector<int32_t> ints(const tcfix::FixtureTensor& t) {
  return std::vector<int32_t>(t.values.begin(), t.values.end());
}

int32_t argmax(const std::vector<float>& row, size_t begin, size_t n) {
  size_t best = begin;
  for (size_t i = begin; i < begin + n; i++)
    if (row[i] > row[best]) best = i;
  return static_cast<int32_t>(best - begin);
}

void PrintTo(const ModelFile& f, std::ostream* os) { *os << f.file; }

// The fixture's logits row `row` (a position's prediction of the next token).
std::vector<float> logits_row(const tcfix::Case& c, int64_t row) {
  const tcfix::FixtureTensor& t = c["logits"];
  auto begin = t.values.begin() + row * t.shape[1];
  return std::vector<float>(begin, begin + t.shape[1]);
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, int64_t row) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++)
    ASSERT_NEAR(got[i], want[i], 1e-4 + 1e-4 * std::abs(want[i]))
        << "position " << row << ", token " << i;
}

class LlmModels : public ::testing::TestWithParam<ModelFile> {};

// The prompt and the first 15 greedy tokens in one causal forward.
TEST_P(LlmModels, LogitsMatchPyTorch) {
  const tcfix::Case& c = tcfix::fixture("llm_models", GetParam().family);
  auto model = load(GetParam());
  std::vector<int32_t> tokens = ints(c["prompt"]), greedy = ints(c["greedy"]);
  tokens.insert(tokens.end(), greedy.begin(), greedy.end() - 1);
  Tensor logits =
      model->forward(Tensor::from_vector(tokens, Shape{1, static_cast<int64_t>(tokens.size())}));
  tcfix::expect_matches(logits.reshape(c["logits"].shape), c["logits"], 1e-4, 1e-4);
}

// Prefill of the prompt, then one token a step through the KV cache (one TinyJit step, captured
// at the second position and replayed at every later one): each step's logits are the forward's
// at that position, and argmax gives PyTorch's greedy tokens.
TEST_P(LlmModels, GreedyDecodingThroughTheKvCacheMatchesPyTorch) {
  const tcfix::Case& c = tcfix::fixture("llm_models", GetParam().family);
  auto model = load(GetParam());
  std::vector<int32_t> prompt = ints(c["prompt"]), expected = ints(c["greedy"]);
  int64_t len = static_cast<int64_t>(prompt.size()), vocab = model->config().vocab;
  model->allocate(1);
  std::vector<float> logits =
      model->prefill(Tensor::from_vector(prompt, Shape{1, len}), 0).data<float>();
  for (int64_t p = 0; p < len; p++)
    expect_near({logits.begin() + p * vocab, logits.begin() + (p + 1) * vocab}, logits_row(c, p),
                p);
  // the logits of one position alone (what a generator samples from) are that row's
  for (int64_t at : {int64_t{0}, len - 1})
    expect_near(model->prefill(Tensor::from_vector(prompt, Shape{1, len}), 0, at).data<float>(),
                logits_row(c, at), at);
  EXPECT_THROW(model->prefill(Tensor::from_vector(prompt, Shape{1, len}), 0, len), tc::Error);
  std::vector<int32_t> got = {
      argmax(logits, static_cast<size_t>((len - 1) * vocab), static_cast<size_t>(vocab))};
  // one capture for every position: the position is a Variable bound before each step, read by
  // the step's kernels when they run (as tinygrad's start_pos)
  tc::Variable start_pos("start_pos", 0, model->config().context - 1);
  tc::TinyJit step([&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{model->decode(in[0], start_pos.tensor().reshape({1})).realize()};
  });
  while (got.size() < expected.size()) {
    int32_t pos = static_cast<int32_t>(len + static_cast<int64_t>(got.size()) - 1);
    start_pos.bind(pos);
    logits = step({Tensor::from_vector<int32_t>({got.back()}, Shape{1, 1})})[0].data<float>();
    expect_near(logits, logits_row(c, pos), pos);
    got.push_back(argmax(logits, 0, static_cast<size_t>(vocab)));
  }
  EXPECT_TRUE(step.captured());  // the positions after the capture's replayed it
  EXPECT_EQ(got, expected);
}

// A prefill in chunks (as infer does for prompts longer than 512 tokens): each chunk's logits are
// PyTorch's at its positions, its attention reading the slots that the chunks before it cached.
TEST_P(LlmModels, APrefillInChunksGivesPyTorchsLogits) {
  const tcfix::Case& c = tcfix::fixture("llm_models", GetParam().family);
  auto model = load(GetParam());
  std::vector<int32_t> tokens = ints(c["prompt"]), greedy = ints(c["greedy"]);
  tokens.insert(tokens.end(), greedy.begin(), greedy.end() - 1);
  const int64_t n = static_cast<int64_t>(tokens.size()), vocab = model->config().vocab;
  model->allocate(1);
  for (int64_t start = 0, size = 5; start < n; start += size, size += 2) {
    int64_t len = std::min(size, n - start);
    std::vector<int32_t> chunk(tokens.begin() + start, tokens.begin() + start + len);
    std::vector<float> logits =
        model->prefill(Tensor::from_vector(chunk, Shape{1, len}), 0, -1, start).data<float>();
    for (int64_t p = 0; p < len; p++)
      expect_near({logits.begin() + p * vocab, logits.begin() + (p + 1) * vocab},
                  logits_row(c, start + p), start + p);
  }
  int64_t context = model->config().context;
  EXPECT_THAT(error_message([&] {
                model->prefill(Tensor::from_vector(tokens, Shape{1, n}), 0, -1, context - 1);
              }),
              ::testing::HasSubstr("prefill of " + std::to_string(n) + " tokens from position " +
                                   std::to_string(context - 1) + " does not fit the context"));
}

// Q8_0 and Q4_0: a GGUF file storing llama.cpp's blocks (quantized by the fixture script's NumPy
// reference of llama.cpp's quantizers) gives exactly the logits of its float weights quantized on
// load (tinycore's quantizers: the same blocks), and those stay within what the blocks' rounding
// moves them from PyTorch's float logits (measured: 0.057 for Q8_0, 0.93 for Q4_0, on logits
// spread over about +-10; random weights would be off by several units).
TEST(LlmQuantized, StoredAndOnLoadBlocksGiveTheSameLogitsNearTheFloatModels) {
  const tcfix::Case& c = tcfix::fixture("llm_models", "llama");
  std::vector<int32_t> tokens = ints(c["prompt"]), greedy = ints(c["greedy"]);
  tokens.insert(tokens.end(), greedy.begin(), greedy.end() - 1);
  Tensor input = Tensor::from_vector(tokens, Shape{1, static_cast<int64_t>(tokens.size())});
  const tcfix::FixtureTensor& want = c["logits"];
  const std::string dir = std::string(TC_FIXTURE_DIR) + "/llm/";
  for (auto [type, bound] : {std::pair{"q8_0", 0.15}, {"q4_0", 2.0}}) {
    auto stored = tc::llm::load_language_model(dir + "llama." + type + ".gguf");
    auto on_load = tc::llm::load_language_model(dir + "llama.f32.gguf", {.quantize = type});
    EXPECT_THAT(stored.format, ::testing::HasSubstr(type));
    EXPECT_THAT(on_load.format, ::testing::HasSubstr(std::string("quantized to ") + type));
    std::vector<float> got = stored.model->forward(input).data<float>();
    EXPECT_EQ(got, on_load.model->forward(input).data<float>()) << type;
    ASSERT_EQ(got.size(), want.values.size());
    double worst = 0;
    for (size_t i = 0; i < got.size(); i++)
      worst = std::max(worst, std::abs(got[i] - want.values[i]));
    EXPECT_LT(worst, bound) << type;
    EXPECT_GT(worst, 1e-3) << type << ": the weights were not quantized";
  }
}

// --quantize q4_k and q6_k quantize matrices whose rows fill blocks of 256; the fixture's (64 and
// 128 wide) take q8_0 instead, as llama.cpp falls back: the same logits as --quantize q8_0.
TEST(LlmQuantized, KFormatsOnLoadFallBackToQ8_0ForNarrowRows) {
  const std::string f32 = std::string(TC_FIXTURE_DIR) + "/llm/llama.f32.gguf";
  Tensor input = Tensor::from_vector<int32_t>({1, 2, 3, 4}, Shape{1, 4});
  auto q8 = tc::llm::load_language_model(f32, {.quantize = "q8_0"});
  std::vector<float> want = q8.model->forward(input).data<float>();
  for (const char* type : {"q4_k", "q6_k"}) {
    auto k = tc::llm::load_language_model(f32, {.quantize = type});
    EXPECT_THAT(k.format, ::testing::HasSubstr("of them q8_0: rows short of 256")) << k.format;
    EXPECT_EQ(k.model->forward(input).data<float>(), want) << type;
  }
}

// A quantized model's projections multiply as llama.cpp's do (nn::QuantizedWeight: x quantized to
// int8 per 32, DOT4s of the weight's integers): its logits stay within `bound` of the same
// weights' float32 products (what x's rounding moves them) and differ from them; and its decode
// steps through the KV cache are its forward's, position by position (measured: 7e-7).
void expect_llama_cpp_products(const tc::llm::Checkpoint& ck, const std::vector<int32_t>& prompt,
                               const std::vector<int32_t>& tokens, double bound,
                               const std::string& type) {
  ASSERT_FALSE(ck.quantized.empty()) << type;
  const int64_t len = static_cast<int64_t>(prompt.size());
  Tensor all = Tensor::from_vector(tokens, Shape{1, static_cast<int64_t>(tokens.size())});
  tc::nn::LanguageModel model(ck.config), plain(ck.config);
  model.set_weights(ck.weights, ck.quantized);
  plain.set_weights(ck.weights);
  std::vector<float> forward = model.forward(all).data<float>(),
                     floats = plain.forward(all).data<float>();
  double worst = 0;
  for (size_t i = 0; i < forward.size(); i++)
    worst = std::max(worst, std::abs(double(forward[i]) - floats[i]));
  EXPECT_LT(worst, bound) << type;
  EXPECT_GT(worst, bound / 1000) << type;
  model.allocate(1);
  model.prefill(Tensor::from_vector(prompt, Shape{1, len}), 0).realize();
  const int64_t vocab = ck.config.vocab;
  double step_worst = 0;
  for (int64_t pos = len; pos < static_cast<int64_t>(tokens.size()); pos++) {
    std::vector<float> step = model
                                  .decode(Tensor::from_vector<int32_t>({tokens[pos]}, Shape{1, 1}),
                                          Tensor::from_vector<int32_t>({static_cast<int32_t>(pos)}))
                                  .data<float>();
    for (int64_t v = 0; v < vocab; v++)
      step_worst = std::max(step_worst, std::abs(double(step[v]) - forward[pos * vocab + v]));
  }
  EXPECT_LT(step_worst, 1e-4) << type;
}

// Q4_0 and Q8_0 files (measured: 0.043 for Q4_0, 0.041 for Q8_0, on logits spread over about
// +-4).
TEST(LlmQuantized, ProjectionsMultiplyAsLlamaCppDoes) {
  const tcfix::Case& c = tcfix::fixture("llm_models", "llama");
  std::vector<int32_t> prompt = ints(c["prompt"]), tokens = prompt, greedy = ints(c["greedy"]);
  tokens.insert(tokens.end(), greedy.begin(), greedy.end() - 1);
  for (const char* type : {"q4_0", "q8_0"})
    expect_llama_cpp_products(
        tc::llm::read_gguf_file(std::string(TC_FIXTURE_DIR) + "/llm/llama." + type + ".gguf", {}),
        prompt, tokens, 0.15, type);
}

// Q4_K and Q6_K, whose blocks of 256 the fixtures' 64-wide models do not fill: a Llama of width
// 256 with random weights (std 0.05), every matrix quantized (tinycore's quantizers) and its
// float values those blocks' (measured: 0.051 for Q4_K and 0.058 for Q6_K, on logits spread
// over about +-3).
TEST(LlmQuantized, KFormatsMultiplyAsLlamaCppDoes) {
  tc::llm::Checkpoint ck;
  tc::nn::LanguageModelConfig& c = ck.config;
  c.arch = "llama", c.vocab = 512, c.context = 32, c.layers = 2, c.dim = 256, c.heads = 4;
  c.kv_heads = 2, c.head_dim = 64, c.ffn = 512;
  std::mt19937 gen(5);
  std::normal_distribution<float> normal(0, 0.05f);
  std::uniform_int_distribution<int32_t> id(0, 511);
  std::vector<int32_t> prompt(9), tokens;
  for (int32_t& t : prompt) t = id(gen);
  tokens = prompt;
  for (int i = 0; i < 6; i++) tokens.push_back(id(gen));
  for (auto [type, name] : {std::pair{tc::gguf::Q4_K, "q4_K"}, {tc::gguf::Q6_K, "q6_K"}}) {
    for (const auto& [weight, shape] : tc::nn::LanguageModel(ck.config).weight_shapes()) {
      std::vector<float> v(static_cast<size_t>(tc::shape_numel(shape)), 1.0f);
      if (shape.size() == 1) {
        ck.weights.insert_or_assign(weight, Tensor(v, shape));
        continue;
      }
      for (float& x : v) x = normal(gen);
      std::vector<uint8_t> blocks =
          tc::gguf::quantize(v.data(), static_cast<int64_t>(v.size()), type);
      Tensor raw = Tensor::from_vector(blocks);
      tc::nn::QuantizedWeight q = tc::gguf::packed(raw, type, shape[0], shape[1]).realized();
      ck.quantized.insert_or_assign(weight, q);
      ck.weights.insert_or_assign(weight, q.dequantized());
    }
    expect_llama_cpp_products(ck, prompt, tokens, 0.15, name);
  }
}

// GGUF weights are read in place from the file's mapping, which is copy-on-write: a weight written
// in place (here its whole tensor) changes this process's copy only, never the file, and the
// tensors keep the mapping alive after the checkpoint is gone.
TEST(LlmGguf, WeightsWrittenInPlaceNeverReachTheFile) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tc_gguf_cow_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path file = dir / "llama.f32.gguf";
  fs::copy_file(std::string(TC_FIXTURE_DIR) + "/llm/llama.f32.gguf", file);
  auto bytes = [&] {
    std::ifstream in(file, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
  };
  const std::vector<char> before = bytes();
  // the checkpoint, its model of the file and the mapping's other holders are gone after this
  Tensor w = tc::llm::read_gguf_file(file.string(), {}).weights.at("output_norm.weight");
  std::vector<float> original = w.data<float>();
  w.assign(Tensor::full(w.shape(), 7.0, tc::dtypes::float32)).realize();
  EXPECT_EQ(w.data<float>(), std::vector<float>(original.size(), 7.0f));
  EXPECT_EQ(bytes(), before);
  Tensor fresh = tc::llm::read_gguf_file(file.string(), {}).weights.at("output_norm.weight");
  EXPECT_EQ(fresh.data<float>(), original);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Files, LlmModels,
    ::testing::Values(ModelFile{"llama", "llama-hf"}, ModelFile{"llama", "llama.f32.gguf"},
                      ModelFile{"llama", "llama.f16.gguf"}, ModelFile{"llama2", "llama2-hf"},
                      ModelFile{"llama2", "llama2.f16.gguf"}, ModelFile{"mistral", "mistral-hf"},
                      ModelFile{"mistral", "mistral.f16.gguf"}, ModelFile{"qwen2", "qwen2-hf"},
                      ModelFile{"qwen2", "qwen2.f16.gguf"}, ModelFile{"qwen3", "qwen3-hf"},
                      ModelFile{"qwen3", "qwen3.f16.gguf"}, ModelFile{"qwen3moe", "qwen3moe-hf"},
                      ModelFile{"qwen3moe", "qwen3moe.f16.gguf"}, ModelFile{"gpt2", "gpt2-hf"},
                      ModelFile{"gpt2", "gpt2.f32.gguf"}),
    [](const ::testing::TestParamInfo<ModelFile>& info) {
      std::string name = info.param.file;
      for (char& ch : name)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

}  // namespace
