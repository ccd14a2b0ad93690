// The infer program on tiny trained runs: an image's classes and probabilities are the ones the
// model gives train's own evaluation input for that image; greedy text is the argmax of full
// causal forwards (no KV cache, no JIT) token after token, through bytes or a char-level run's
// characters; seeded sampling repeats; every mistake in the arguments, the run or the image is
// an error that names it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "apps/common/build_model.h"
#include "apps/train/data_source.h"
#include "datasets/idx.h"
#include "nn/state.h"
#include "nn/transformer.h"
#include "tests/infer/run_infer.h"
#include "tests/infer/runs.h"

namespace {

using tc::Tensor;
using ::testing::HasSubstr;

using infertest::infer;
using infertest::Ran;

// The model of a run, loaded as train left it (config.yaml, model.safetensors).
std::unique_ptr<tc::nn::Module> trained(const std::string& dir, tc::config::Config& config) {
  config = tc::config::load_config(dir + "/config.yaml");
  std::unique_ptr<tc::nn::Module> m = tc::config::build_model(config.model);
  tc::nn::StateDict s = m->state_dict();
  tc::nn::load_state_dict(s, tc::nn::safe_load(dir + "/model.safetensors"));
  return m;
}

TEST(InferCli, ClassifiesAnImageAsTrainsEvaluationDoes) {
  const std::string run = inferruns::mnist().dir;
  tc::config::Config config;
  auto model = trained(run, config);
  // train's evaluation input for the first test images, and the model's probabilities for it
  Tensor x = tc::train::make_data_source(config)->eval_batch(0).x;
  std::vector<float> probs = (*model)(x).softmax(-1).data<float>();
  tc::datasets::MnistSplit test = tc::datasets::load_mnist(tc::datasets::kFashionMnistDir, false);
  for (int i = 0; i < 3; i++) {
    std::string png = tinyrun::fresh_dir("infer_png") + "/image.png";
    ASSERT_TRUE(stbi_write_png(png.c_str(), 28, 28, 1, &test.images.data[i * 784], 28));
    Ran r = infer({"--run", run, "--image", png, "--topk", "3"});
    ASSERT_EQ(r.rc, 0) << r.out;
    std::istringstream lines(r.out);
    std::vector<std::pair<float, int>> want;
    for (int c = 0; c < 10; c++) want.push_back({probs[i * 10 + c], c});
    std::stable_sort(want.begin(), want.end(), [](auto a, auto b) { return a.first > b.first; });
    for (int k = 0; k < 3; k++) {
      std::string line;
      ASSERT_TRUE(std::getline(lines, line)) << r.out;
      std::ostringstream expect;
      char prob[16];
      std::snprintf(prob, sizeof prob, "%8.4f", want[k].first);
      expect << prob << "  " << tc::datasets::kFashionMnistClasses[want[k].second] << " ("
             << want[k].second << ")";
      EXPECT_EQ(line, expect.str()) << "image " << i << " rank " << k;
    }
  }
}

// `prompt` and 6 greedy tokens after it by full causal forwards of `run`'s model, whose tokens
// are the bytes of `symbols` in order.
std::string greedy_by_full_forwards(const std::string& run, const std::string& prompt,
                                    const std::string& symbols) {
  tc::config::Config config;
  auto model = trained(run, config);
  const int64_t vocab = config.model.vocab;
  EXPECT_EQ(vocab, static_cast<int64_t>(symbols.size()));
  std::vector<int32_t> tokens;
  for (char c : prompt) tokens.push_back(static_cast<int32_t>(symbols.find(c)));
  for (int n = 0; n < 6; n++) {
    int64_t t = static_cast<int64_t>(tokens.size());
    std::vector<float> logits =
        (*model)(Tensor::from_vector<int32_t>(tokens, tc::Shape{1, t})).data<float>();
    const float* last = &logits[(t - 1) * vocab];
    tokens.push_back(static_cast<int32_t>(std::max_element(last, last + vocab) - last));
  }
  std::string text;
  for (int32_t t : tokens) text += symbols[static_cast<size_t>(t)];
  return text;
}

TEST(InferCli, GreedyTextIsTheArgmaxOfFullForwards) {
  const std::string run = inferruns::gpt().dir;
  std::string bytes;
  for (int b = 0; b < 256; b++) bytes += static_cast<char>(b);
  Ran r = infer({"--run", run, "--text", "the quick", "--max-tokens", "6", "--temperature", "0"});
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, greedy_by_full_forwards(run, "the quick", bytes) + "\n");
}

TEST(InferCli, ACharLevelRunMapsTextThroughItsCharacters) {
  const std::string run = inferruns::gpt_chars().dir;
  const std::string chars = "\n 0123456789abcdefghijklmnopqrstuvwxyz";  // the corpus's, sorted
  Ran r = infer({"--run", run, "--text", "the quick", "--max-tokens", "6", "--temperature", "0"});
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out, greedy_by_full_forwards(run, "the quick", chars) + "\n");
  Ran upper = infer({"--run", run, "--text", "The"});
  EXPECT_EQ(upper.rc, 1);
  EXPECT_THAT(upper.out,
              HasSubstr("prompt: Vocab::encode: byte 0x54 at offset 0 is not in this 38-token "
                        "vocabulary"));
  // without vocab.bin the tokens mean nothing
  std::string copy = tinyrun::fresh_dir("infer_chars_no_vocab");
  for (const char* f : {"config.yaml", "model.safetensors"})
    std::filesystem::copy_file(run + "/" + f, copy + "/" + f);
  Ran lost = infer({"--run", copy, "--text", "the"});
  EXPECT_EQ(lost.rc, 1);
  EXPECT_THAT(lost.out, HasSubstr(copy + "/vocab.bin: missing or unreadable; a run with "
                                         "data.vocab chars keeps its tokens there"));
}

TEST(InferCli, SeededSamplingRepeatsAndStopsAtTheContext) {
  const std::string run = inferruns::gpt().dir;
  std::vector<std::string> args = {"--run",   run, "--text",  "the", "--max-tokens", "100",
                                   "--top-k", "5", "--top-p", "0.9", "--seed",       "7"};
  Ran a = infer(args), b = infer(args);
  ASSERT_EQ(a.rc, 0) << a.out;
  EXPECT_EQ(a.out, b.out);
  // context 16: the prompt's 3 tokens and 14 more (the last is read at no position)
  EXPECT_EQ(a.out.size(), 3 + 14 + 1u) << a.out;
  EXPECT_EQ(a.out.substr(0, 3), "the");
}

TEST(InferCli, MistakesAreNamed) {
  const std::string mnist = inferruns::mnist().dir, gpt = inferruns::gpt().dir;
  std::string dir = tinyrun::fresh_dir("infer_bad");
  std::string not_image = dir + "/notes.png", truncated = dir + "/cut.png";
  std::ofstream(not_image) << "these are notes, not pixels";
  {
    std::vector<uint8_t> px(28 * 28, 7);
    ASSERT_TRUE(stbi_write_png(truncated.c_str(), 28, 28, 1, px.data(), 28));
    std::string bytes = tinyrun::file_bytes(truncated);
    std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  std::string broken_run = dir + "/broken_run";
  std::filesystem::create_directories(broken_run);
  std::filesystem::copy_file(mnist + "/config.yaml", broken_run + "/config.yaml");
  std::string weights = tinyrun::file_bytes(mnist + "/model.safetensors");
  std::ofstream(broken_run + "/model.safetensors", std::ios::binary)
      << weights.substr(0, weights.size() - 100);
  struct Case {
    std::vector<std::string> args;
    int rc;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"--run", dir + "/nothing", "--image", not_image}, 1, "nothing' does not exist"},
      {{"--run", dir, "--image", not_image}, 1, "has no config.yaml"},
      {{"--run", broken_run, "--image", not_image}, 1, "model.safetensors"},
      {{"--run", gpt, "--image", not_image}, 1, "is a gpt model, not an image classifier"},
      {{"--run", mnist, "--text", "hi"}, 1, "is a mnist_convnet model, not a GPT"},
      {{"--run", mnist, "--image", not_image}, 1, "notes.png: image: not a decodable image"},
      {{"--run", mnist, "--image", truncated}, 1, "cut.png: image: "},
      {{"--run", mnist, "--image", dir + "/missing.png"}, 1, "cannot read"},
      {{"--run", mnist, "--image", not_image, "--topk", "11"},
       1,
       "--topk: expected an integer in 1..10"},
      {{"--run", mnist, "--image", not_image, "--topk", "two"},
       1,
       "--topk: expected an integer, got 'two'"},
      {{"--run", gpt, "--text", "hi", "--top-p", "0"}, 1, "--top-p: expected a number in (0, 1]"},
      {{"--run", gpt, "--text", "hi", "--temperature", "-1"},
       1,
       "--temperature: expected 0 or more"},
      {{"--run", gpt, "--text", ""}, 1, "prompt: is empty"},
      {{"--run", gpt, "--text", std::string(17, 'a')},
       1,
       "17 tokens do not fit the model's context of 16"},
      {{"--run", gpt, "--text", "hi", "--max-tokens"}, 2, "--max-tokens needs a value"},
      {{"--run", gpt, "--bogus", "1"}, 2, "unknown argument '--bogus'"},
      {{"--run", gpt}, 2, "one of --image FILE or --text PROMPT"},
  };
  for (const Case& c : cases) {
    Ran r = infer(c.args);
    EXPECT_EQ(r.rc, c.rc) << c.args[2] << ": " << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.message)) << c.args[2];
  }
  Ran help = infer({"--help"});
  EXPECT_EQ(help.rc, 0);
  for (const char* flag : {"--image", "--topk", "--text", "--max-tokens", "--temperature",
                           "--top-k", "--top-p", "--seed", "--host", "--port", "--max-batch"})
    EXPECT_THAT(help.out, HasSubstr(flag));
}

}  // namespace
