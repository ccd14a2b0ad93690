// infer serve under connections that cost it nothing but a socket (tinycore issue 33): with 200
// idle or half-sent connections open, /healthz and a completion answer within 100 ms of what they
// take on an idle server; past the connection limit a connection is closed at once while a freed
// slot still serves; a client that dawdles over its request is closed at the request timeout;
// 100 concurrent streams (more than the model's slots, so most wait queued) all give the
// in-process Generator's text while the process's thread count does not grow; and a server
// stopped while a request waits for the model answers or closes it.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/infer/generator.h"
#include "tests/infer/onnx_models.h"
#include "tests/infer/runs.h"
#include "tests/infer/serving.h"

using infertest::connect_to;

namespace {

using infertest::client;
using infertest::Serving;
using Json = nlohmann::json;
using tc::infer::ServerOptions;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

bool send_all(int fd, const std::string& bytes) {
  return send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

// Everything the server sends until it closes the connection (closed: whether it did, rather
// than the read timing out).
std::string read_to_end(int fd, bool* closed = nullptr) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  if (closed) *closed = n == 0 || errno == ECONNRESET;
  return out;
}

// Whether the server closed the connection (rather than the read timing out).
bool closed_by_server(int fd) {
  char c;
  ssize_t n = read(fd, &c, 1);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

// The threads of this process (the server's among them).
int64_t threads() {
  return std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                       std::filesystem::directory_iterator());
}

constexpr int64_t kSlots = 8;
const std::vector<std::string> kPrompts = {"the quick", "fox ",  "lazy dog 1", "t",
                                           "over the",  "brown", "jumps 4",    "q"};
const tc::infer::SamplingParams kGreedy{.max_tokens = 8, .temperature = 0};

Json completion(const std::string& prompt, bool stream) {
  return {{"prompt", prompt}, {"max_tokens", 8}, {"temperature", 0}, {"stream", stream}};
}

// What an in-process Generator with the server's slots makes of each prompt, as JSON carries it
// (bytes that are not UTF-8 become U+FFFD).
const std::vector<std::string>& greedy_texts() {
  static const std::vector<std::string> r = [] {
    tc::infer::Generator g(inferruns::gpt().dir, kSlots);
    std::vector<std::string> out;
    for (const std::string& p : kPrompts)
      out.push_back(
          Json::parse(
              Json(g.generate(p, kGreedy)).dump(-1, ' ', false, Json::error_handler_t::replace))
              .get<std::string>());
    return out;
  }();
  return r;
}

ServerOptions gpt_options() {
  ServerOptions o;
  o.max_batch = kSlots;
  o.max_tokens = 8;
  o.queue_limit = 256;
  return o;
}

// The best of three times of a request on a new connection, after checking its answer.
double best_of_three(const Serving& s, const std::function<void(httplib::Client&)>& request) {
  double best = 1e9;
  for (int i = 0; i < 3; i++) {
    auto c = client(s);
    Clock::time_point t0 = Clock::now();
    request(*c);
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

TEST(SlowClients, IdleAndHalfSentConnectionsDoNotDelayOthers) {
  greedy_texts();
  Serving s(inferruns::gpt().dir, gpt_options());
  auto healthz = [](httplib::Client& c) {
    auto res = c.Get("/healthz");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
  };
  auto complete = [](httplib::Client& c) {
    auto res = c.Post("/v1/completions", completion(kPrompts[0], false).dump(), "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    EXPECT_EQ(Json::parse(res->body)["choices"][0]["text"], greedy_texts()[0]);
  };
  double healthz_alone = best_of_three(s, healthz), complete_alone = best_of_three(s, complete);
  int64_t threads_before = threads();

  // 100 connections that send nothing, 100 that send half a request and stop.
  std::vector<int> slow;
  for (int i = 0; i < 200; i++) {
    int fd = connect_to(s.port());
    ASSERT_GE(fd, 0);
    if (i % 2) {
      ASSERT_TRUE(send_all(fd,
                           "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n"
                           "Content-Type: application/json\r\n\r\n{\"prompt\": \"the"));
    }
    slow.push_back(fd);
  }
  double healthz_loaded = best_of_three(s, healthz), complete_loaded = best_of_three(s, complete);
  EXPECT_EQ(threads(), threads_before) << "threads grew with the connections";
  std::cout << "healthz: " << healthz_alone * 1e3 << " ms alone, " << healthz_loaded * 1e3
            << " ms beside 200 slow connections; completion: " << complete_alone * 1e3
            << " ms alone, " << complete_loaded * 1e3 << " ms beside them\n";
  EXPECT_LT(healthz_loaded, healthz_alone + 0.1);
  EXPECT_LT(complete_loaded, complete_alone + 0.1);
  // The slow connections are still open (not dropped to make room): each still takes a request.
  ASSERT_TRUE(send_all(slow[0], "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  EXPECT_THAT(read_to_end(slow[0]), ::testing::HasSubstr("HTTP/1.1 200"));
  for (int fd : slow) close(fd);
}

TEST(SlowClients, ConnectionsPastTheLimitAreClosedAtOnce) {
  ServerOptions o = gpt_options();
  o.connection_limit = 50;
  Serving s(inferruns::gpt().dir, o);
  std::vector<int> open;
  for (int i = 0; i < 50; i++) {
    int fd = connect_to(s.port());
    ASSERT_GE(fd, 0);
    open.push_back(fd);
  }
  // The 50th is being served: it answers (keeping its connection).
  ASSERT_TRUE(send_all(open.back(), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  char buf[4096];
  ASSERT_GT(read(open.back(), buf, sizeof buf), 0);
  for (int i = 0; i < 3; i++) {
    int fd = connect_to(s.port());
    ASSERT_GE(fd, 0);  // the kernel accepts; the server closes it
    Clock::time_point t0 = Clock::now();
    EXPECT_TRUE(closed_by_server(fd)) << "connection " << 51 + i << " was left open";
    EXPECT_LT(seconds_since(t0), 5);
    close(fd);
  }
  // Once one closes, a new connection is served (as soon as the server has seen the close).
  close(open[0]);
  open.erase(open.begin());
  bool served = false;
  for (int attempt = 0; attempt < 100 && !served; attempt++) {
    auto res = client(s)->Get("/healthz");
    served = res && res->status == 200;
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(served);
  for (int fd : open) close(fd);
}

TEST(SlowClients, AClientSlowerThanTheRequestTimeoutIsClosed) {
  ServerOptions o = gpt_options();
  o.request_timeout_s = 0.5;
  Serving s(inferruns::gpt().dir, o);
  // One byte of a request every 100 ms is never idle, but never done either.
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  int fd = connect_to(s.port());
  ASSERT_GE(fd, 0);
  Clock::time_point t0 = Clock::now();
  bool closed = false;
  for (size_t i = 0; !closed && seconds_since(t0) < 10; i++) {
    closed = !send_all(fd, std::string(1, i < request.size() ? request[i] : 'z'));
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    if (!closed && poll(&p, 1, 100) > 0) closed = closed_by_server(fd);
  }
  double slow_closed_after = seconds_since(t0);
  close(fd);
  EXPECT_TRUE(closed) << "a trickling client was never closed";
  EXPECT_GE(slow_closed_after, 0.5);
  // One that sends nothing at all, and one that sent a request and lingers on the kept-alive
  // connection, are closed too.
  int idle = connect_to(s.port());
  t0 = Clock::now();
  EXPECT_TRUE(closed_by_server(idle));
  double idle_closed_after = seconds_since(t0);
  EXPECT_GE(idle_closed_after, 0.45);
  close(idle);
  int kept = connect_to(s.port());
  ASSERT_TRUE(send_all(kept, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  bool kept_closed = false;
  EXPECT_THAT(read_to_end(kept, &kept_closed), ::testing::HasSubstr("HTTP/1.1 200"));
  EXPECT_TRUE(kept_closed);
  close(kept);
  std::cout << "closed a trickling client after " << slow_closed_after << " s, an idle one after "
            << idle_closed_after << " s (request timeout 0.5 s)\n";
  auto res = client(s)->Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

// A chunked HTTP/1.1 body without its chunk framing.
std::string dechunk(const std::string& body) {
  std::string out;
  for (size_t at = 0;;) {
    size_t line = body.find("\r\n", at);
    if (line == std::string::npos) break;
    size_t n = std::stoul(body.substr(at, line - at), nullptr, 16);
    if (n == 0) break;
    out += body.substr(line + 2, n);
    at = line + 2 + n + 2;
  }
  return out;
}

TEST(SlowClients, AHundredStreamsFinishWithoutMoreThreads) {
  greedy_texts();
  Serving s(inferruns::gpt().dir, gpt_options());
  // A first full batch, so that the model thread has made whatever it makes once.
  infertest::from_clients(s, kSlots, 1, [](httplib::Client& c, int t, int) {
    auto res = c.Post("/v1/completions", completion(kPrompts[static_cast<size_t>(t)], true).dump(),
                      "application/json");
    ASSERT_TRUE(res && res->status == 200);
  });
  int64_t threads_before = threads();
  constexpr int kStreams = 100;
  std::vector<int> streams;
  for (int i = 0; i < kStreams; i++) {
    int fd = connect_to(s.port());
    ASSERT_GE(fd, 0);
    std::string body = completion(kPrompts[static_cast<size_t>(i) % kPrompts.size()], true).dump();
    ASSERT_TRUE(send_all(fd,
                         "POST /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                         "Content-Type: application/json\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\n\r\n" + body));
    streams.push_back(fd);
  }
  EXPECT_EQ(threads(), threads_before) << "threads grew with the streams";
  for (int i = 0; i < kStreams; i++) {
    bool closed = false;
    std::string answer = read_to_end(streams[static_cast<size_t>(i)], &closed);
    EXPECT_TRUE(closed);
    close(streams[static_cast<size_t>(i)]);
    size_t head = answer.find("\r\n\r\n");
    ASSERT_NE(head, std::string::npos) << answer;
    ASSERT_THAT(answer.substr(0, head), ::testing::HasSubstr("HTTP/1.1 200"));
    ASSERT_THAT(answer.substr(0, head), ::testing::HasSubstr("Transfer-Encoding: chunked"));
    std::vector<std::string> events = infertest::sse_events(dechunk(answer.substr(head + 4)));
    ASSERT_GE(events.size(), 2u);
    EXPECT_EQ(events.back(), "[DONE]");
    std::string text;
    for (size_t e = 0; e + 1 < events.size(); e++)
      text += Json::parse(events[e])["choices"][0]["text"].get<std::string>();
    EXPECT_EQ(text, greedy_texts()[static_cast<size_t>(i) % kPrompts.size()]) << "stream " << i;
  }
  EXPECT_EQ(threads(), threads_before);
  EXPECT_TRUE(infertest::wait_for_metric(
      *client(s), "infer_requests_total{endpoint=\"/v1/completions\",code=\"200\"}",
      kStreams + kSlots));
}

// A request waiting for company in a batch (its connection suspended) when the server stops:
// the stop neither hangs nor crashes (libmicrohttpd must not stop with suspended connections),
// and the client's connection is closed (after a 503, if the event thread got to answer it).
TEST(SlowClients, StoppingWhileARequestWaitsAnswersOrClosesIt) {
  ServerOptions o;
  o.max_batch = 4;
  o.batch_wait_ms = 60000;
  auto s = std::make_unique<Serving>(onnxmodels::gemm_relu(), o);
  std::string body =
      R"({"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]})";
  int fd = connect_to(s->port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd,
                       "POST /v2/models/gemm_relu/infer HTTP/1.1\r\nHost: x\r\n"
                       "Content-Type: application/json\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body));
  ASSERT_TRUE(infertest::wait_for_metric(*client(*s), "infer_queue_depth", 1));
  s.reset();
  bool closed = false;
  std::string answer = read_to_end(fd, &closed);
  close(fd);
  EXPECT_TRUE(closed);
  if (!answer.empty()) {
    EXPECT_THAT(answer, ::testing::HasSubstr("HTTP/1.1 503"));
  }
}

}  // namespace
