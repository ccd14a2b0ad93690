// infer with language models (tests/fixtures/gen_llm_models.py's tiny random ones): greedy text
// from the command line is PyTorch's, from GGUF and Hugging Face files alike; the Generator's
// sampling controls (stop strings, min-p, repetition penalty) and its continuous batching with
// prefill; a chat template and stop strings named on the command line; every mistake in the
// arguments or the files is an error that names it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "apps/infer/generator.h"
#include "apps/infer/llm_text_model.h"
#include "tests/infer/run_infer.h"
#include "tests/tensor/fixture.h"

namespace {

using infertest::infer;
using infertest::Ran;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::ThrowsMessage;

const std::string kDir = std::string(TC_FIXTURE_DIR) + "/llm/";

// The llama model's text (or llama2's: SentencePiece).
std::string text_of(const char* label, const char* text = "text") {
  const tcfix::FixtureTensor& t = tcfix::fixture("llm_models", text)[label];
  return std::string(t.values.begin(), t.values.end());
}

std::unique_ptr<tc::infer::Generator> generator(const std::string& file, int64_t slots = 1) {
  return std::make_unique<tc::infer::Generator>(
      std::make_unique<tc::infer::LlmTextModel>(kDir + file, tc::llm::LoadOptions{}), slots);
}

const tc::infer::SamplingParams kGreedy{.max_tokens = 16, .temperature = 0};

// Byte-level BPE (Llama 3's) and SentencePiece (Llama 2's) vocabularies, encoding the prompt and
// decoding the tokens.
TEST(LlmCli, GreedyTextIsPyTorchsFromEveryFormat) {
  for (auto [text, files] :
       {std::pair{"text", std::vector<std::string>{"llama.f32.gguf", "llama.f16.gguf", "llama-hf"}},
        {"text_llama2", {"llama2.f16.gguf", "llama2-hf"}}}) {
    std::string prompt = text_of("prompt", text), completion = text_of("completion", text);
    for (const std::string& file : files) {
      Ran r = infer(
          {"--model", kDir + file, "--prompt", prompt, "--temperature", "0", "--max-tokens", "16"});
      EXPECT_EQ(r.rc, 0) << file << ": " << r.out;
      EXPECT_THAT(r.out, HasSubstr(prompt + completion + "\n")) << file;
      EXPECT_THAT(r.out, HasSubstr("16 generated")) << file;
    }
  }
}

TEST(LlmCli, ChatTurnsAreLinesOfInputInTheModelsFormat) {
  std::string input = std::filesystem::temp_directory_path() / "tc_llm_chat_input.txt";
  std::ofstream(input) << "hi\nok\n";  // short: the tiny model's context is 64
  Ran r = infer({"--model", kDir + "qwen3.f16.gguf", "--chat", "--max-tokens", "3", "--seed", "7",
                 "--system", "x"},
                input);
  EXPECT_EQ(r.rc, 0) << r.out;
  // in process: each turn replies to the whole conversation in ChatML, sampled as the CLI does
  auto m =
      std::make_unique<tc::infer::LlmTextModel>(kDir + "qwen3.f16.gguf", tc::llm::LoadOptions{});
  tc::infer::LlmTextModel* model = m.get();
  tc::infer::Generator g(std::move(m));
  tc::infer::SamplingParams p{
      .max_tokens = 3, .temperature = 0.8, .top_k = 40, .top_p = 0.95, .min_p = 0.05, .seed = 7};
  std::vector<tc::llm::ChatMessage> chat = {{"system", "x"}, {"user", "hi"}};
  std::string first = g.generate(model->encode_chat(chat), p);
  chat.push_back({"assistant", first});
  chat.push_back({"user", "ok"});
  std::string second = g.generate(model->encode_chat(chat), p);
  EXPECT_THAT(r.out, HasSubstr("> " + first + "\n> " + second + "\n> "));
}

// --chat-template names the family that formats the chat, over the one the model's template
// text gives (qwen3's: ChatML); --stop cuts the CLI's text as the Generator's stop strings do.
TEST(LlmCli, AChatTemplateAndStopStringsFromTheCommandLine) {
  const std::string file = kDir + "qwen3.f16.gguf";
  tc::infer::LlmTextModel chatml(file, {}), mistral(file, {}, "mistral");
  std::vector<tc::llm::ChatMessage> chat = {{"user", "hi"}};
  auto text = [](const tc::infer::LlmTextModel& m, const std::vector<int32_t>& ids) {
    std::string t;
    for (int32_t id : ids) t += m.token_text(id);
    return t;
  };
  EXPECT_THAT(text(mistral, mistral.encode_chat(chat)), HasSubstr("[INST] hi [/INST]"));
  EXPECT_THAT(text(chatml, chatml.encode_chat(chat)), Not(HasSubstr("[INST]")));
  std::string input = std::filesystem::temp_directory_path() / "tc_llm_template_input.txt";
  std::ofstream(input) << "hi\n";
  Ran r = infer({"--model", file, "--chat", "--chat-template", "mistral", "--max-tokens", "4",
                 "--temperature", "0"},
                input);
  EXPECT_EQ(r.rc, 0) << r.out;
  auto m = std::make_unique<tc::infer::LlmTextModel>(file, tc::llm::LoadOptions{}, "mistral");
  std::vector<int32_t> ids = m->encode_chat(chat);
  tc::infer::Generator g(std::move(m));
  tc::infer::SamplingParams greedy{.max_tokens = 4, .temperature = 0};
  EXPECT_THAT(r.out, HasSubstr("> " + g.generate(ids, greedy) + "\n> "));

  std::string prompt = text_of("prompt"), completion = text_of("completion");  // "^k=k=k=k0vo.."
  r = infer({"--model", kDir + "llama.f16.gguf", "--prompt", prompt, "--temperature", "0",
             "--max-tokens", "16", "--stop", "0vo"});
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(prompt + completion.substr(0, completion.find("0vo")) + "\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("0vo")));
}

TEST(LlmGenerator, StopStringsCutTheTextWhereverTheyFallInTokens) {
  std::string completion = text_of("completion");  // "^k=k=k=k0voCVRp_"
  auto g = generator("llama.f16.gguf");
  for (const std::string& stop : {std::string("0vo"), std::string("=k"), std::string("p_")}) {
    tc::infer::SamplingParams p = kGreedy;
    p.stop = {stop, "never appears"};
    std::string streamed, finish;
    std::string text = g->generate(text_of("prompt"), p, [&](const tc::infer::Emitted& e) {
      streamed += e.text;
      if (e.finished) finish = e.finish_reason;
    });
    EXPECT_EQ(text, completion.substr(0, completion.find(stop))) << stop;
    EXPECT_EQ(streamed, text);
    EXPECT_EQ(finish, "stop");
  }
  tc::infer::SamplingParams p = kGreedy;
  p.stop = {"k=k=k=k0voCVRp_x"};  // held back to the end, then given out whole at the length
  EXPECT_EQ(g->generate(text_of("prompt"), p), completion);
}

// Each of min-p 1, top-k 1 and a top-p below any token's probability keeps the most probable
// token alone: hot sampling then gives the greedy text, whatever the seed.
TEST(LlmGenerator, MinPOfOneTopKOfOneOrATinyTopPSampleOnlyTheMostProbableToken) {
  auto g = generator("mistral.f16.gguf");
  std::string greedy = g->generate("the cat", kGreedy);
  for (uint64_t seed : {1, 2, 3}) {
    tc::infer::SamplingParams p{.max_tokens = 16, .temperature = 1.5, .min_p = 1.0, .seed = seed};
    EXPECT_EQ(g->generate("the cat", p), greedy) << seed;
    p.min_p = 0, p.top_k = 1;
    EXPECT_EQ(g->generate("the cat", p), greedy) << seed;
    p.top_k = 0, p.top_p = 1e-6;
    EXPECT_EQ(g->generate("the cat", p), greedy) << seed;
  }
  tc::infer::SamplingParams hot{.max_tokens = 16, .temperature = 1.5, .seed = 1};
  EXPECT_NE(g->generate("the cat", hot), greedy);  // without min-p the same seed wanders
}

TEST(LlmGenerator, AStrongRepetitionPenaltyNeverRepeatsARecentToken) {
  tc::infer::LlmTextModel* model = nullptr;
  auto m =
      std::make_unique<tc::infer::LlmTextModel>(kDir + "qwen2.f16.gguf", tc::llm::LoadOptions{});
  model = m.get();
  tc::infer::Generator g(std::move(m));
  std::vector<int32_t> prompt = g.encode("the cat and the dog sat 1234");
  std::string plain = g.generate(prompt, kGreedy);
  EXPECT_EQ(plain, "4444444444444444");  // the tied model repeats its last token
  tc::infer::SamplingParams p = kGreedy;
  p.repetition_penalty = 1e4;
  std::vector<int32_t> seen = prompt;
  g.generate(prompt, p, [&](const tc::infer::Emitted& e) {
    EXPECT_EQ(std::count(seen.begin(), seen.end(), e.token), 0) << model->token_text(e.token);
    seen.push_back(e.token);
  });
  EXPECT_EQ(seen.size(), prompt.size() + 16);
}

// --max-context cuts the KV cache to that many positions: a prompt and its tokens fit in them
// (the text ends there, as a length stop, and is the whole context's greedy text so far), and a
// longer prompt is an error that names the context.
TEST(LlmGenerator, MaxContextBoundsThePromptAndItsTokens) {
  tc::infer::Generator g(std::make_unique<tc::infer::LlmTextModel>(
      kDir + "llama.f16.gguf", tc::llm::LoadOptions{.max_context = 12, .quantize = ""}));
  std::vector<int32_t> prompt = g.encode("the cat");
  ASSERT_LT(prompt.size(), 12u);
  // the last token is not fed back: the context holds 12 - n + 1 of them
  const int64_t room = 13 - static_cast<int64_t>(prompt.size());
  tc::infer::SamplingParams p = kGreedy;
  p.max_tokens = 100;
  int64_t made = 0;
  std::string reason;
  std::string text = g.generate(prompt, p, [&](const tc::infer::Emitted& e) {
    made++;
    if (e.finished) reason = e.finish_reason;
  });
  EXPECT_EQ(made, room);
  EXPECT_EQ(reason, "length");
  p.max_tokens = room;
  EXPECT_EQ(text, generator("llama.f16.gguf")->generate(prompt, p));
  EXPECT_THAT([&] { g.encode("the cat and the dog sat 1234 the cat and the dog sat 1234"); },
              ThrowsMessage<tc::Error>(HasSubstr("fit the model's context of 12")));
}

// A prompt prefilled in chunks of 3 tokens (TC_PREFILL_CHUNK; 512 by default) gives the text of
// the one-pass prefill, with every family's attention.
TEST(LlmGenerator, APromptPrefilledInChunksGivesTheOnePassText) {
  const std::string prompt = "and the dog sat 1234 the cat and the dog";
  for (const char* file : {"llama.f16.gguf", "qwen3moe.f16.gguf", "gpt2.f32.gguf"}) {
    std::string whole = generator(file)->generate(prompt, kGreedy);
    setenv("TC_PREFILL_CHUNK", "3", 1);
    std::string chunked = generator(file)->generate(prompt, kGreedy);
    unsetenv("TC_PREFILL_CHUNK");
    EXPECT_EQ(chunked, whole) << file;
    EXPECT_FALSE(whole.empty()) << file;
  }
}

// Sequences started at different steps in three slots (prompts written by prefill) give the
// texts each gives alone.
TEST(LlmGenerator, ConcurrentSequencesEqualTheirSequentialResults) {
  std::vector<std::string> prompts = {"the cat", "and the dog sat 1234 the cat", "12"};
  std::vector<std::string> alone;
  auto one = generator("qwen3moe.f16.gguf");
  for (const std::string& p : prompts) alone.push_back(one->generate(p, kGreedy));
  auto g = generator("qwen3moe.f16.gguf", 3);
  std::vector<std::string> got(prompts.size());
  std::vector<int64_t> slot(prompts.size(), -1);
  int finished = 0;
  for (int step = 0; finished < 3; step++) {
    for (size_t i = 0; i < prompts.size(); i++)  // sequence i joins at step 3 i
      if (slot[i] < 0 && step == 3 * static_cast<int>(i))
        slot[i] = g->start(g->encode(prompts[i]), kGreedy);
    for (const tc::infer::Emitted& e : g->step()) {
      size_t i = std::find(slot.begin(), slot.end(), e.slot) - slot.begin();
      ASSERT_LT(i, prompts.size());
      got[i] += e.text;
      if (e.finished) {
        finished++;
        slot[i] = -2;
      }
    }
    ASSERT_LT(step, 100);
  }
  EXPECT_EQ(got, alone);
}

TEST(LlmCli, MistakesAreNamed) {
  std::string dir = std::filesystem::temp_directory_path() / "tc_llm_bad";
  std::filesystem::create_directories(dir);
  std::string cut = dir + "/cut.gguf";
  {
    std::ifstream in(kDir + "llama.f16.gguf", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  std::string bad_hf = dir + "/bad-hf";
  std::filesystem::create_directories(bad_hf);
  std::ofstream(bad_hf + "/config.json") << R"({"model_type": "llama", "hidden_size": 64)";
  std::string odd_hf = dir + "/odd-hf";
  std::filesystem::create_directories(odd_hf);
  std::ofstream(odd_hf + "/config.json") << R"({"model_type": "bloom"})";
  std::string huge_hf = dir + "/huge-hf";
  std::filesystem::create_directories(huge_hf);
  std::ofstream(huge_hf + "/config.json")
      << R"({"model_type": "llama", "hidden_size": 1e30, "num_hidden_layers": 2})";
  std::string gguf = kDir + "llama.f16.gguf";
  std::string alien = dir + "/alien.gguf";  // general.architecture "llama" written as "xlama"
  {
    std::ifstream in(gguf, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t key = bytes.find("general.architecture");
    ASSERT_NE(key, std::string::npos);
    size_t value = key + std::string("general.architecture").size() + 4 + 8;  // type, length
    ASSERT_EQ(bytes.substr(value, 5), "llama");
    bytes[value] = 'x';
    std::ofstream(alien, std::ios::binary) << bytes;
  }
  // an index naming a shard the folder lacks, and one naming a file outside it
  std::string no_shard = dir + "/no-shard-hf", outside = dir + "/outside-hf";
  for (const std::string& d : {no_shard, outside}) {
    std::filesystem::create_directories(d);
    std::filesystem::copy_file(kDir + "llama-hf/config.json", d + "/config.json",
                               std::filesystem::copy_options::overwrite_existing);
  }
  std::ofstream(no_shard + "/model.safetensors.index.json")
      << R"({"weight_map": {"model.norm.weight": "model-9.safetensors"}})";
  std::ofstream(outside + "/model.safetensors.index.json")
      << R"({"weight_map": {"model.norm.weight": "../cut.gguf"}})";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"--model", cut, "--prompt", "hi"}, "cut.gguf"},
      {{"--model", dir + "/none.gguf", "--prompt", "hi"}, "none.gguf: no such file"},
      {{"--model", bad_hf, "--prompt", "hi"}, "config.json: is not valid JSON"},
      {{"--model", odd_hf, "--prompt", "hi"}, "model_type 'bloom' is not supported"},
      {{"--model", huge_hf, "--prompt", "hi"}, "'hidden_size' is not an integer"},
      {{"--model", alien, "--prompt", "hi"}, "general.architecture 'xlama' is not supported"},
      {{"--model", no_shard, "--prompt", "hi"}, "model-9.safetensors"},
      {{"--model", outside, "--prompt", "hi"}, "tensor model.norm.weight names file"},
      {{"--model", gguf, "--prompt", "hi", "--quantize", "q3_k"}, "--quantize: 'q3_k'"},
      {{"--model", gguf, "--chat", "--chat-template", "alpaca"}, "alpaca"},
      {{"--model", gguf, "--prompt", "hi", "--min-p", "2"}, "--min-p: expected a number in [0, 1]"},
      {{"--model", gguf, "--prompt", "hi", "--max-context", "0"},
       "--max-context: expected at least 1"},
      {{"--model", gguf, "--prompt", std::string(100, 'x')},
       "do not fit the model's context of 64"},
      {{"--model", gguf}, "one of --prompt TEXT or --chat"},
  };
  for (const Case& c : cases) {
    Ran r = infer(c.args);
    EXPECT_EQ(r.rc, 2) << c.args[1] << ": " << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.message)) << r.out;
  }
}

}  // namespace
