// infer serve with a language model (the tiny random llama of tests/fixtures/gen_llm_models.py,
// context 64): OpenAI's chat and completion endpoints give what the in-process Generator gives,
// whole or streamed, alone or with concurrent requests (batching changes no token at
// temperature 0); /v1/models names the model; /metrics shows the time to first token; bad
// requests are 400s naming the field, and a client that leaves mid-stream harms nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "apps/infer/generator.h"
#include "apps/infer/llm_text_model.h"
#include "tests/infer/serving.h"

namespace {

using Json = nlohmann::json;
using infertest::client;
using infertest::scrape;
using infertest::Serving;
using infertest::sse_events;
using ::testing::HasSubstr;

const std::string kModel = std::string(TC_FIXTURE_DIR) + "/llm/llama.f16.gguf";
constexpr int64_t kSlots = 4;
const std::vector<std::string> kUserTurns = {"hi",   "the cat", "and the dog", "sat",
                                             "1234", "ok",      "12",          "a b c"};

tc::infer::ServerOptions options() {
  tc::infer::ServerOptions o;
  o.max_batch = kSlots;
  o.max_tokens = 12;
  return o;
}

// Each turn's greedy reply from an in-process Generator, as the server's chat would give it.
const std::vector<std::string>& replies() {
  static const std::vector<std::string> r = [] {
    auto m = std::make_unique<tc::infer::LlmTextModel>(kModel, tc::llm::LoadOptions{});
    tc::infer::LlmTextModel* model = m.get();
    tc::infer::Generator g(std::move(m), kSlots);
    std::vector<std::string> out;
    for (const std::string& turn : kUserTurns)
      out.push_back(
          g.generate(model->encode_chat({{"user", turn}}), {.max_tokens = 10, .temperature = 0}));
    return out;
  }();
  return r;
}

Json chat_body(const std::string& turn, bool stream) {
  return {{"model", "llama.f16"},
          {"messages", {{{"role", "user"}, {"content", turn}}}},
          {"max_tokens", 10},
          {"temperature", 0},
          {"stream", stream}};
}

// The reply of a whole chat.completion, after checking its shape.
std::string chat_reply(const httplib::Result& res) {
  EXPECT_TRUE(res);
  if (!res) return "";
  EXPECT_EQ(res->status, 200) << res->body;
  Json j = Json::parse(res->body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], "llama.f16");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["usage"]["total_tokens"], j["usage"]["prompt_tokens"].get<int64_t>() +
                                            j["usage"]["completion_tokens"].get<int64_t>());
  return j["choices"][0]["message"]["content"];
}

// The reply of a streamed chat: its deltas joined, after checking the events' shape.
std::string streamed_reply(const httplib::Result& res) {
  EXPECT_TRUE(res);
  if (!res) return "";
  EXPECT_EQ(res->status, 200) << res->body;
  std::vector<std::string> events = sse_events(res->body);
  EXPECT_GE(events.size(), 2u);
  if (events.size() < 2) return "";
  EXPECT_EQ(events.back(), "[DONE]");
  std::string text;
  for (size_t i = 0; i + 1 < events.size(); i++) {
    Json j = Json::parse(events[i]);
    EXPECT_EQ(j["object"], "chat.completion.chunk");
    text += j["choices"][0]["delta"]["content"].get<std::string>();
    bool last = i + 2 == events.size();
    EXPECT_EQ(j["choices"][0]["finish_reason"].is_null(), !last) << events[i];
  }
  return text;
}

class LlmServer : public infertest::ServerSuite<LlmServer> {
 protected:
  static void SetUpTestSuite() {
    replies();
    server_ = new Serving(kModel, options());
  }
};

TEST_F(LlmServer, ModelsNamesTheServedModel) {
  auto res = client(*server_)->Get("/v1/models");
  ASSERT_TRUE(res);
  Json j = Json::parse(res->body);
  EXPECT_EQ(j["object"], "list");
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["id"], "llama.f16");
}

TEST_F(LlmServer, WholeAndStreamedChatsAreTheInProcessReplies) {
  auto c = client(*server_);
  for (size_t i = 0; i < 3; i++) {
    EXPECT_EQ(chat_reply(c->Post("/v1/chat/completions", chat_body(kUserTurns[i], false).dump(),
                                 "application/json")),
              replies()[i]);
    EXPECT_EQ(streamed_reply(c->Post("/v1/chat/completions", chat_body(kUserTurns[i], true).dump(),
                                     "application/json")),
              replies()[i]);
  }
  EXPECT_GT(scrape(*c)["infer_time_to_first_token_seconds_count"], 0);
}

TEST_F(LlmServer, EightConcurrentStreamsEachEqualTheirSequentialReply) {
  std::vector<std::string> got(kUserTurns.size());
  infertest::from_clients(
      *server_, static_cast<int>(kUserTurns.size()), 1, [&](httplib::Client& c, int t, int) {
        got[static_cast<size_t>(t)] = streamed_reply(
            c.Post("/v1/chat/completions",
                   chat_body(kUserTurns[static_cast<size_t>(t)], true).dump(), "application/json"));
      });
  EXPECT_EQ(got, replies());
}

TEST_F(LlmServer, CompletionsTakeStopStrings) {
  tc::infer::Generator g(std::make_unique<tc::infer::LlmTextModel>(kModel, tc::llm::LoadOptions{}));
  std::string full = g.generate("the cat", {.max_tokens = 12, .temperature = 0});
  ASSERT_GE(full.size(), 4u);
  std::string stop = full.substr(2, 2);
  auto res = client(*server_)->Post(
      "/v1/completions",
      Json{{"prompt", "the cat"}, {"max_tokens", 12}, {"temperature", 0}, {"stop", {stop}}}.dump(),
      "application/json");
  ASSERT_TRUE(res);
  Json j = Json::parse(res->body);
  EXPECT_EQ(j["choices"][0]["text"], full.substr(0, full.find(stop)));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
}

TEST_F(LlmServer, BadRequestsAreFourHundredsNamingWhatIsWrong) {
  auto c = client(*server_);
  struct Case {
    std::string body;
    std::string message;
  };
  std::string long_turn(200, 'x');
  for (const Case& k : std::vector<Case>{
           {"{\"messages\": [", "body: malformed JSON"},
           {R"({"messages": [{"role": "user", "content": "hi"}], "tempreature": 1})",
            "tempreature: unknown field"},
           {R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 13})",
            "max_tokens: expected an integer in 1..12, got 13"},
           {R"({"messages": [{"role": "user", "content": ")" + long_turn + R"("}]})",
            "do not fit the context of 64"},
           {R"({"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "x"}],
               "stop": 5})",
            "stop: expected a string or an array"},
       }) {
    auto res = c->Post("/v1/chat/completions", k.body, "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << k.body;
    EXPECT_THAT(res->body, HasSubstr(k.message)) << k.body;
  }
  auto res = c->Post("/v1/classify", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_THAT(res->body, HasSubstr("/v1/chat/completions"));
}

TEST_F(LlmServer, AClientThatLeavesMidStreamLeavesTheServerServing) {
  {
    auto c = client(*server_);
    int chunks = 0;
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.body = chat_body("hi", true).dump();
    req.set_header("Content-Type", "application/json");
    req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) {
      return ++chunks < 2;  // hang up after the first chunk
    };
    c->send(req);
  }
  auto c = client(*server_);
  EXPECT_EQ(chat_reply(c->Post("/v1/chat/completions", chat_body(kUserTurns[1], false).dump(),
                               "application/json")),
            replies()[1]);
  auto health = c->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

}  // namespace
