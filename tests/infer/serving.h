// infer serve in a test: a Server on an ephemeral loopback port, serving from its own thread,
// a client for it, and its /metrics read back as numbers.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apps/infer/server.h"

namespace infertest {

using tc::infer::ServerOptions;

// A server on 127.0.0.1 at an ephemeral port, serving from its own thread until destroyed.
class Serving {
 public:
  Serving(const std::string& run, ServerOptions o)
      : server_(run, (o.port = 0, o)), thread_([this] { server_.run(); }) {}
  ~Serving() {
    server_.stop();
    thread_.join();
  }
  int port() const { return server_.port(); }

 private:
  tc::infer::Server server_;
  std::thread thread_;
};

inline std::unique_ptr<httplib::Client> client(const Serving& s) {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", s.port());
  c->set_read_timeout(30);
  return c;
}

// GET /metrics as {"name{labels}": value}.
inline std::map<std::string, double> scrape(httplib::Client& c) {
  std::map<std::string, double> m;
  auto res = c.Get("/metrics");
  EXPECT_TRUE(res && res->status == 200);
  if (!res) return m;
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4");
  std::istringstream in(res->body);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.rfind(' ');
    m[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return m;
}

// Polls /metrics until `key` has `value` (the model thread updates gauges on its own time).
inline bool wait_for_metric(httplib::Client& c, const std::string& key, double value) {
  for (int i = 0; i < 500; i++) {
    if (scrape(c)[key] == value) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// `clients` threads, each on its own connection, each sending `each` requests: request(c, t, i)
// for thread t's i-th.
inline void from_clients(const Serving& s, int clients, int each,
                         const std::function<void(httplib::Client&, int, int)>& request) {
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; t++)
    threads.emplace_back([&, t] {
      auto c = client(s);
      for (int i = 0; i < each; i++) request(*c, t, i);
    });
  for (std::thread& t : threads) t.join();
}

// A test suite's one server: its SetUpTestSuite starts server_, stopped after the last test.
template <typename Suite>
class ServerSuite : public testing::Test {
 protected:
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static Serving* server_;
};
template <typename Suite>
Serving* ServerSuite<Suite>::server_ = nullptr;

// The events of a server-sent-event stream ("data: ...\n\n" each).
inline std::vector<std::string> sse_events(const std::string& stream) {
  std::vector<std::string> events;
  for (size_t at = 0; at < stream.size();) {
    size_t end = stream.find("\n\n", at);
    if (end == std::string::npos || stream.compare(at, 6, "data: ") != 0) {
      ADD_FAILURE() << "not an event stream: " << stream.substr(at);
      break;
    }
    events.push_back(stream.substr(at + 6, end - at - 6));
    at = end + 2;
  }
  return events;
}

// A blocking loopback connection (reads give up after 10 s), or -1.
inline int connect_to(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{.tv_sec = 10, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace infertest
