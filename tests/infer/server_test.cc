// infer serve (apps/infer/server.h) over real HTTP on an ephemeral loopback port, on the tiny
// trained runs: answers equal the in-process Classifier and Generator's (also under 16
// concurrent clients, also streamed), every kind of bad request gets its status and a JSON error
// naming what was wrong, a full queue answers 503 and a slow model 504, and /metrics counts what
// was asked.
#include "apps/infer/server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <stb/stb_image_write.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "apps/infer/generator.h"
#include "apps/infer/requests.h"
#include "datasets/idx.h"
#include "tests/infer/base64_encode.h"
#include "tests/infer/runs.h"
#include "tests/infer/serving.h"

namespace {

using Json = nlohmann::json;
using tc::infer::ServerOptions;
using ::testing::HasSubstr;

using infertest::client;
using infertest::from_clients;
using infertest::scrape;
using infertest::Serving;
using infertest::sse_events;
using infertest::wait_for_metric;

std::string png(const std::vector<uint8_t>& pixels, int w, int h, int comp) {
  std::string out;
  stbi_write_png_to_func(
      [](void* ctx, void* data, int size) {
        static_cast<std::string*>(ctx)->append(static_cast<const char*>(data),
                                               static_cast<size_t>(size));
      },
      &out, w, h, comp, pixels.data(), w * comp);
  return out;
}

using infertest::base64_encode;

// Text as the server's JSON carries it: bytes that are not UTF-8 become U+FFFD.
std::string as_json_text(const std::string& bytes) {
  return Json::parse(Json(bytes).dump(-1, ' ', false, Json::error_handler_t::replace))
      .get<std::string>();
}

// A refused request: its status, and the message of its {"error": {"message", "type"}} body.
void expect_refusal(const httplib::Result& res, int status, const std::string& message) {
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, status) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  Json j = Json::parse(res->body, nullptr, false);
  ASSERT_TRUE(j.is_object() && j["error"].is_object()) << res->body;
  EXPECT_THAT(j["error"]["message"].get<std::string>(), HasSubstr(message));
  EXPECT_EQ(j["error"]["type"], tc::infer::error_type(status));
}

// The response a raw socket gets for `bytes` (for requests httplib's client cannot make). The
// socket stays open for writing: httplib takes a half-closed connection for a client gone away.
std::string raw_exchange(int port, const std::string& bytes) {
  int fd = infertest::connect_to(port);
  std::string out;
  if (fd >= 0 && write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size())) {
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) {
      out.append(buf, static_cast<size_t>(n));
      size_t head = out.find("\r\n\r\n"), length = out.find("Content-Length: ");
      if (head != std::string::npos && length != std::string::npos &&
          out.size() >= head + 4 + std::stoul(out.substr(length + 16)))
        break;
    }
  }
  if (fd >= 0) close(fd);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Classification

constexpr int64_t kMaxBatch = 4;

ServerOptions classify_options() {
  ServerOptions o;
  o.max_batch = kMaxBatch;
  o.batch_wait_ms = 5;
  o.max_body_bytes = 64 << 10;
  o.image = {.max_bytes = 32 << 10, .max_side = 64};
  o.threads = 16;
  return o;
}

// Test images (8 Fashion-MNIST test images and a noisy 60x60 RGB picture larger than 8 KiB) as
// PNG files, and what an in-process Classifier with the server's batch size says of each.
struct Images {
  std::vector<std::string> pngs;
  std::vector<std::vector<tc::infer::ClassScore>> scores;  // all 10 classes, most probable first
};

const Images& images() {
  static const Images r = [] {
    Images r;
    tc::datasets::MnistSplit test = tc::datasets::load_mnist(tc::datasets::kFashionMnistDir, false);
    for (int i = 0; i < 8; i++)
      r.pngs.push_back(
          png({test.images.data.begin() + i * 784, test.images.data.begin() + (i + 1) * 784}, 28,
              28, 1));
    std::vector<uint8_t> noise(60 * 60 * 3);
    std::mt19937 rng(3);
    for (uint8_t& v : noise) v = static_cast<uint8_t>(rng());
    r.pngs.push_back(png(noise, 60, 60, 3));
    tc::infer::Classifier c(inferruns::mnist().dir, kMaxBatch);
    for (const std::string& p : r.pngs) r.scores.push_back(c.classify({c.preprocess(p)}, 10)[0]);
    return r;
  }();
  return r;
}

void expect_predictions(const httplib::Result& res, size_t image, size_t topk) {
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  ASSERT_EQ(res->status, 200) << res->body;
  Json p = Json::parse(res->body)["predictions"];
  ASSERT_EQ(p.size(), topk);
  for (size_t k = 0; k < topk; k++) {
    const tc::infer::ClassScore& want = images().scores[image][k];
    EXPECT_EQ(p[k]["index"], want.index) << "image " << image << " rank " << k;
    EXPECT_EQ(p[k]["label"], want.label);
    EXPECT_EQ(p[k]["prob"].get<double>(), want.prob);  // bitwise: JSON round-trips doubles
  }
}

class ClassifyServer : public infertest::ServerSuite<ClassifyServer> {
 protected:
  static void SetUpTestSuite() {
    images();  // before any server runs: the model is one thread's at a time
    server_ = new Serving(inferruns::mnist().dir, classify_options());
  }
};

TEST_F(ClassifyServer, AnswersHealthz) {
  auto c = client(*server_);
  auto res = c->Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  Json j = Json::parse(res->body);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["architecture"], "mnist_convnet");
  EXPECT_EQ(j["model"], std::filesystem::path(inferruns::mnist().dir).filename().string());
}

TEST_F(ClassifyServer, ClassifiesRawBytesAndBase64AsTheInProcessClassifier) {
  auto c = client(*server_);
  expect_predictions(c->Post("/v1/classify", images().pngs[0], "image/png"), 0, 5);
  expect_predictions(c->Post("/v1/classify?topk=10", images().pngs[1], "application/octet-stream"),
                     1, 10);
  expect_predictions(
      c->Post("/v1/classify", Json{{"image", base64_encode(images().pngs[2])}, {"topk", 3}}.dump(),
              "application/json"),
      2, 3);
  // curl --data-binary sends a form's content type: a picture above httplib's 8 KiB form limit
  // still goes through whole.
  ASSERT_GT(images().pngs[8].size(), 8192u);
  expect_predictions(
      c->Post("/v1/classify?topk=2", images().pngs[8], "application/x-www-form-urlencoded"), 8, 2);
  // Chunked upload (no Content-Length).
  expect_predictions(c->Post(
                         "/v1/classify",
                         [&](size_t, httplib::DataSink& sink) {
                           const std::string& p = images().pngs[3];
                           sink.write(p.data(), p.size() / 2);
                           sink.write(p.data() + p.size() / 2, p.size() - p.size() / 2);
                           sink.done();
                           return true;
                         },
                         "image/png"),
                     3, 5);
}

TEST_F(ClassifyServer, SixteenConcurrentClientsGetTheSingleRequestAnswers) {
  auto c = client(*server_);
  std::map<std::string, double> before = scrape(*c);
  constexpr int kClients = 16, kEach = 4;
  from_clients(*server_, kClients, kEach, [](httplib::Client& c, int t, int i) {
    size_t image = static_cast<size_t>(t * kEach + i) % 8;
    if (i % 2)
      expect_predictions(c.Post("/v1/classify?topk=10", images().pngs[image], "image/png"), image,
                         10);
    else
      expect_predictions(
          c.Post("/v1/classify",
                 Json{{"image", base64_encode(images().pngs[image])}, {"topk", 10}}.dump(),
                 "application/json"),
          image, 10);
  });
  std::map<std::string, double> after = scrape(*c);  // each answer was counted before it was sent
  const std::string ok = "infer_requests_total{endpoint=\"/v1/classify\",code=\"200\"}";
  EXPECT_EQ(after[ok] - before[ok], kClients * kEach);
  // Every image ran in exactly one batch of at most max_batch.
  EXPECT_EQ(after["infer_batch_size_sum"] - before["infer_batch_size_sum"], kClients * kEach);
  EXPECT_EQ(after["infer_batch_size_bucket{le=\"+Inf\"}"],
            after["infer_batch_size_bucket{le=\"4\"}"]);
  EXPECT_GE(after["infer_batch_size_count"] - before["infer_batch_size_count"],
            kClients * kEach / kMaxBatch);
}

TEST_F(ClassifyServer, RefusesEveryKindOfBadRequestWithAJsonError) {
  auto c = client(*server_);
  const std::string& image = images().pngs[0];
  const std::string json = "application/json";
  expect_refusal(c->Post("/v1/classify", "{\"image\": ", json), 400, "body: malformed JSON");
  expect_refusal(c->Post("/v1/classify", "[1]", json), 400,
                 "body: expected a JSON object, got an array");
  expect_refusal(c->Post("/v1/classify", "{}", json), 400, "image: missing");
  expect_refusal(c->Post("/v1/classify", R"({"image": 7})", json), 400,
                 "image: expected a base64 string, got 7");
  expect_refusal(c->Post("/v1/classify", R"({"image": "iVBOR!"})", json), 400,
                 "image: not valid base64: base64: invalid character '!' at offset 5");
  expect_refusal(
      c->Post("/v1/classify", Json{{"image", base64_encode(image)}, {"topk", 11}}.dump(), json),
      400, "topk: expected an integer in 1..10, got 11");
  expect_refusal(c->Post("/v1/classify?topk=ten", image, "image/png"), 400,
                 "topk: expected an integer in 1..10, got 'ten'");
  expect_refusal(c->Post("/v1/classify", "", "image/png"), 400, "image: is empty");
  expect_refusal(c->Post("/v1/classify", "hello, not an image", "image/gif"), 422,
                 "image: not a decodable image");
  expect_refusal(c->Post("/v1/classify", image.substr(0, image.size() / 2), "image/png"), 422,
                 "image:");
  // Too large: the body (by Content-Length, and chunked), the image's bytes, its sides.
  expect_refusal(c->Post("/v1/classify", std::string(65 << 10, 'x'), "image/png"), 413,
                 "body: larger than the limit of 65536 bytes");
  expect_refusal(c->Post(
                     "/v1/classify",
                     [](size_t, httplib::DataSink& sink) {
                       std::string block(16 << 10, 'x');
                       for (int i = 0; i < 5; i++) sink.write(block.data(), block.size());
                       sink.done();
                       return true;
                     },
                     "image/png"),
                 413, "body: larger than the limit of 65536 bytes");
  expect_refusal(c->Post("/v1/classify", std::string(40 << 10, 'x'), "image/png"), 413,
                 "image: 40960 bytes is more than the limit of 32768");
  expect_refusal(
      c->Post("/v1/classify", png(std::vector<uint8_t>(100 * 30, 128), 100, 30, 1), "image/png"),
      413, "image: 100x30 is larger than the limit of 64x64");
  httplib::MultipartFormDataItems form = {{"image", image, "a.png", "image/png"}};
  expect_refusal(c->Post("/v1/classify", form), 415, "multipart/form-data is not supported");
  // Wrong endpoint or method.
  expect_refusal(c->Get("/nope"), 404, "no endpoint GET /nope");
  expect_refusal(c->Post("/v1/completions", R"({"prompt": "a"})", json), 404,
                 "/v1/completions is not served: this run");
  auto get = c->Get("/v1/classify");
  expect_refusal(get, 405, "/v1/classify takes POST only");
  EXPECT_EQ(get->get_header_value("Allow"), "POST");
  expect_refusal(c->Delete("/v1/classify"), 405, "/v1/classify takes POST only");
  expect_refusal(c->Post("/healthz", "", "text/plain"), 405, "/healthz takes GET only");
  // A request that is not HTTP, then one that is fine: the server is still there. (libmicrohttpd
  // answers what it cannot parse itself, with its own HTML page, and closes the connection.)
  std::string answer = raw_exchange(server_->port(), "BREW /pot HTCPCP/1.0 nonsense\r\n\r\n");
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(answer, HasSubstr("Connection: close"));
  expect_predictions(c->Post("/v1/classify", image, "image/png"), 0, 5);
}

TEST_F(ClassifyServer, MetricsCountRequestsByEndpointAndStatus) {
  auto c = client(*server_);
  std::map<std::string, double> before = scrape(*c);
  for (int i = 0; i < 3; i++) c->Post("/v1/classify", images().pngs[i], "image/png");
  c->Post("/v1/classify", "not an image", "image/png");
  c->Get("/healthz");
  c->Get("/no/such/path");
  c->Get("/another/one");
  std::map<std::string, double> after = scrape(*c);
  auto delta = [&](const std::string& endpoint, int code) {
    std::string k =
        "infer_requests_total{endpoint=\"" + endpoint + "\",code=\"" + std::to_string(code) + "\"}";
    return after[k] - before[k];
  };
  EXPECT_EQ(delta("/v1/classify", 200), 3);
  EXPECT_EQ(delta("/v1/classify", 422), 1);
  EXPECT_EQ(delta("/healthz", 200), 1);
  EXPECT_EQ(delta("other", 404), 2);     // unknown paths share one label
  EXPECT_EQ(delta("/metrics", 200), 1);  // the first scrape
  const std::string q = "infer_request_latency_seconds{endpoint=\"/v1/classify\",quantile=\"";
  EXPECT_GT(after[q + "0.5\"}"], 0);
  EXPECT_LE(after[q + "0.5\"}"], after[q + "0.9\"}"]);
  EXPECT_LE(after[q + "0.9\"}"], after[q + "0.99\"}"]);
  EXPECT_EQ(after["infer_request_latency_seconds_count{endpoint=\"/v1/classify\"}"] -
                before["infer_request_latency_seconds_count{endpoint=\"/v1/classify\"}"],
            4);
  EXPECT_EQ(after["infer_queue_depth"], 0);
  EXPECT_EQ(after["infer_generated_tokens_total"], 0);
}

TEST_F(ClassifyServer, ReportsARunThatCannotLoadAndAPortInUse) {
  ServerOptions o = classify_options();
  try {
    tc::infer::Server s("/no/such/run", o);
    ADD_FAILURE() << "a missing run loaded";
  } catch (const tc::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("run folder '/no/such/run' does not exist"));
  }
  o.port = server_->port();
  try {
    tc::infer::Server s(inferruns::mnist().dir, o);
    ADD_FAILURE() << "bound a port in use";
  } catch (const tc::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "infer serve: cannot listen on 127.0.0.1:" + std::to_string(o.port) +
                  " (is the port in use, or the host not an address of this machine?)");
  }
}

// One queued image fills a queue of 1 (503 for the next), and with the model thread waiting
// 700 ms for company, a 300 ms timeout answers 504; the abandoned image never runs.
TEST(ClassifyServerLimits, AFullQueueAnswers503AndASlowAnswer504) {
  images();
  ServerOptions o = classify_options();
  o.queue_limit = 1;
  o.batch_wait_ms = 700;
  o.request_timeout_s = 0.3;
  Serving s(inferruns::mnist().dir, o);
  auto c = client(s);
  auto first = std::async(std::launch::async, [&] {
    auto c = client(s);
    return c->Post("/v1/classify", images().pngs[0], "image/png");
  });
  ASSERT_TRUE(wait_for_metric(*c, "infer_queue_depth", 1));
  expect_refusal(c->Post("/v1/classify", images().pngs[1], "image/png"), 503,
                 "the server is busy: its queue of 1 requests is full; try again later");
  expect_refusal(first.get(), 504, "the request took longer than the server's timeout of 0.3 s");
  ASSERT_TRUE(wait_for_metric(*c, "infer_queue_depth", 0));
  EXPECT_EQ(scrape(*c)["infer_batch_size_count"], 0);
}

// ---------------------------------------------------------------------------------------------
// Completions

constexpr int64_t kSlots = 4;
const std::vector<std::string> kPrompts = {"the quick", "fox ",  "lazy dog 1", "t",
                                           "over the",  "brown", "jumps 4",    "q"};

ServerOptions gpt_options() {
  ServerOptions o;
  o.max_batch = kSlots;
  o.max_tokens = 8;
  o.threads = 16;
  return o;
}

const tc::infer::SamplingParams kGreedy{.max_tokens = 8, .temperature = 0};
const tc::infer::SamplingParams kSampled{
    .max_tokens = 6, .temperature = 0.8, .top_k = 50, .top_p = 0.9, .seed = 1234};

// What an in-process Generator with the server's slots makes of each prompt.
struct Texts {
  std::vector<std::string> greedy, sampled;
};

const Texts& texts() {
  static const Texts r = [] {
    Texts r;
    tc::infer::Generator g(inferruns::gpt().dir, kSlots);
    for (const std::string& p : kPrompts) {
      r.greedy.push_back(g.generate(p, kGreedy));
      r.sampled.push_back(g.generate(p, kSampled));
    }
    return r;
  }();
  return r;
}

Json completion_body(const std::string& prompt, const tc::infer::SamplingParams& p,
                     bool stream = false) {
  return {{"prompt", prompt}, {"max_tokens", p.max_tokens}, {"temperature", p.temperature},
          {"top_k", p.top_k}, {"top_p", p.top_p},           {"seed", p.seed},
          {"stream", stream}, {"model", "ignored"}};
}

// The completion's text, after checking the OpenAI shape around it.
std::string completion_text(const httplib::Result& res, const std::string& prompt,
                            int64_t max_tokens) {
  EXPECT_TRUE(res);
  if (!res) return "";
  EXPECT_EQ(res->status, 200) << res->body;
  Json j = Json::parse(res->body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_THAT(j["id"].get<std::string>(), HasSubstr("cmpl-"));
  EXPECT_EQ(j["model"], std::filesystem::path(inferruns::gpt().dir).filename().string());
  EXPECT_EQ(j["choices"].size(), 1u);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  // One byte a token; the context (16) holds the prompt and up to 17 - prompt tokens.
  int64_t tokens = std::min(max_tokens, 17 - static_cast<int64_t>(prompt.size()));
  EXPECT_EQ(j["usage"]["prompt_tokens"], prompt.size());
  EXPECT_EQ(j["usage"]["completion_tokens"], tokens);
  EXPECT_EQ(j["usage"]["total_tokens"], static_cast<int64_t>(prompt.size()) + tokens);
  return j["choices"][0]["text"];
}

class CompletionServer : public infertest::ServerSuite<CompletionServer> {
 protected:
  static void SetUpTestSuite() {
    texts();
    server_ = new Serving(inferruns::gpt().dir, gpt_options());
  }
};

TEST_F(CompletionServer, GreedyAndSeededCompletionsAreTheInProcessGeneratorsText) {
  auto c = client(*server_);
  for (size_t i = 0; i < 3; i++) {
    EXPECT_EQ(
        completion_text(c->Post("/v1/completions", completion_body(kPrompts[i], kGreedy).dump(),
                                "application/json"),
                        kPrompts[i], 8),
        as_json_text(texts().greedy[i]));
    EXPECT_EQ(
        completion_text(c->Post("/v1/completions", completion_body(kPrompts[i], kSampled).dump(),
                                "application/json"),
                        kPrompts[i], 6),
        as_json_text(texts().sampled[i]));
  }
  // max_tokens is cut to what the context (16) leaves after the prompt.
  std::string long_prompt(14, 'a');
  auto res =
      c->Post("/v1/completions", completion_body(long_prompt, kGreedy).dump(), "application/json");
  ASSERT_TRUE(res && res->status == 200);
  EXPECT_EQ(Json::parse(res->body)["usage"]["completion_tokens"], 3);
}

TEST_F(CompletionServer, SixteenConcurrentClientsGetTheSingleRequestAnswers) {
  constexpr int kClients = 16, kEach = 3;
  from_clients(*server_, kClients, kEach, [](httplib::Client& c, int t, int i) {
    size_t p = static_cast<size_t>(t * kEach + i) % kPrompts.size();
    bool sampled = (t + i) % 3 == 0;
    const tc::infer::SamplingParams& params = sampled ? kSampled : kGreedy;
    EXPECT_EQ(completion_text(c.Post("/v1/completions", completion_body(kPrompts[p], params).dump(),
                                     "application/json"),
                              kPrompts[p], params.max_tokens),
              as_json_text(sampled ? texts().sampled[p] : texts().greedy[p]))
        << kPrompts[p];
  });
  auto c = client(*server_);
  std::map<std::string, double> m = scrape(*c);
  EXPECT_GT(m["infer_batch_size_bucket{le=\"+Inf\"}"], m["infer_batch_size_bucket{le=\"1\"}"])
      << "16 clients never decoded together";
}

TEST_F(CompletionServer, StreamsTokensAsServerSentEvents) {
  auto c = client(*server_);
  for (size_t i = 0; i < 3; i++) {
    auto res = c->Post("/v1/completions", completion_body(kPrompts[i], kGreedy, true).dump(),
                       "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
    std::vector<std::string> events = sse_events(res->body);
    ASSERT_GE(events.size(), 2u);
    EXPECT_EQ(events.back(), "[DONE]");
    std::string text;
    for (size_t e = 0; e + 1 < events.size(); e++) {
      Json chunk = Json::parse(events[e]);
      EXPECT_EQ(chunk["object"], "text_completion");
      text += chunk["choices"][0]["text"].get<std::string>();
      bool last = e + 2 == events.size();
      EXPECT_EQ(chunk["choices"][0]["finish_reason"], last ? Json("length") : Json(nullptr));
    }
    // One event per token, unless tokens cut a UTF-8 character (then it waits for the rest).
    EXPECT_LE(events.size() - 1, 8u);
    EXPECT_EQ(text, as_json_text(texts().greedy[i]));
  }
}

TEST_F(CompletionServer, AClientThatLeavesMidStreamFreesItsSlot) {
  auto c = client(*server_);
  for (int i = 0; i < 2 * kSlots; i++) {
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/completions";
    req.body = completion_body("t", {.max_tokens = 8, .temperature = 1, .seed = 5}, true).dump();
    req.set_header("Content-Type", "application/json");
    int chunks = 0;
    req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++chunks < 1; };
    auto res = c->send(req);
    EXPECT_FALSE(res);  // the client cancelled
    EXPECT_EQ(chunks, 1);
  }
  // Every slot is free again: a full batch of requests still completes.
  EXPECT_TRUE(wait_for_metric(*c, "infer_active_sequences", 0));
  std::vector<std::future<std::string>> answers;
  for (size_t i = 0; i < kSlots; i++)
    answers.push_back(std::async(std::launch::async, [i] {
      auto c = client(*server_);
      return completion_text(
          c->Post("/v1/completions", completion_body(kPrompts[i], kGreedy).dump(),
                  "application/json"),
          kPrompts[i], 8);
    }));
  for (size_t i = 0; i < kSlots; i++) EXPECT_EQ(answers[i].get(), as_json_text(texts().greedy[i]));
}

TEST_F(CompletionServer, RefusesEveryKindOfBadRequestWithAJsonError) {
  auto c = client(*server_);
  const std::string json = "application/json";
  auto post = [&](const std::string& body) { return c->Post("/v1/completions", body, json); };
  expect_refusal(post("{\"prompt\": \"a\""), 400, "body: malformed JSON");
  expect_refusal(c->Post("/v1/completions", "prompt=a", "application/x-www-form-urlencoded"), 400,
                 "body: malformed JSON");
  expect_refusal(post("\"a\""), 400, "body: expected a JSON object, got \"a\"");
  expect_refusal(post("{}"), 400, "prompt: missing");
  expect_refusal(post(R"({"prompt": ["a"]})"), 400, "prompt: expected a string");
  expect_refusal(post(R"({"prompt": ""})"), 400, "prompt: is empty");
  expect_refusal(post(R"({"prompt": "a", "max_tokens": -3})"), 400,
                 "max_tokens: expected an integer in 1..8, got -3");
  expect_refusal(post(R"({"prompt": "a", "max_tokens": 9})"), 400,
                 "max_tokens: expected an integer in 1..8, got 9");
  expect_refusal(post(R"({"prompt": "a", "temperature": -1})"), 400,
                 "temperature: expected a number >= 0, got -1");
  expect_refusal(post(R"({"prompt": "a", "top_p": 0})"), 400,
                 "top_p: expected a number in (0, 1], got 0");
  expect_refusal(post(R"({"prompt": "a", "top_k": "all"})"), 400,
                 "top_k: expected an integer >= 0, got \"all\"");
  expect_refusal(post(R"({"prompt": "a", "seed": -2})"), 400, "seed: expected an integer");
  expect_refusal(post(R"({"prompt": "a", "stream": 1})"), 400,
                 "stream: expected true or false, got 1");
  expect_refusal(post(R"({"prompt": "a", "n": 2})"), 400, "n: not supported");
  expect_refusal(post(Json{{"prompt", std::string(17, 'a')}}.dump()), 400,
                 "prompt: 17 tokens do not fit the model's context of 16");
  expect_refusal(c->Get("/v1/completions"), 405, "/v1/completions takes POST only");
  expect_refusal(c->Post("/v1/classify", "x", "image/png"), 404,
                 "/v1/classify is not served: this run");
  // After all that, a good request.
  EXPECT_EQ(completion_text(post(completion_body(kPrompts[0], kGreedy).dump()), kPrompts[0], 8),
            as_json_text(texts().greedy[0]));
}

TEST_F(CompletionServer, MetricsCountGeneratedTokens) {
  auto c = client(*server_);
  std::map<std::string, double> before = scrape(*c);
  int64_t tokens = 0;
  for (size_t i = 0; i < 3; i++) {
    auto res = c->Post("/v1/completions", completion_body(kPrompts[i], kGreedy).dump(),
                       "application/json");
    ASSERT_TRUE(res && res->status == 200);
    tokens += Json::parse(res->body)["usage"]["completion_tokens"].get<int64_t>();
  }
  std::map<std::string, double> after = scrape(*c);
  EXPECT_EQ(after["infer_generated_tokens_total"] - before["infer_generated_tokens_total"], tokens);
  EXPECT_GT(after["infer_tokens_per_second"], 0);
  EXPECT_GT(after["infer_model_seconds_total"], before["infer_model_seconds_total"]);
  const std::string ok = "infer_requests_total{endpoint=\"/v1/completions\",code=\"200\"}";
  EXPECT_EQ(after[ok] - before[ok], 3);
  EXPECT_GT(after["infer_request_latency_seconds{endpoint=\"/v1/completions\",quantile=\"0.99\"}"],
            0);
}

}  // namespace
