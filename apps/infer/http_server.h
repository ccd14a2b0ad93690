// The event-driven HTTP/1.1 layer of infer serve, on libmicrohttpd: one epoll thread (or a small
// fixed pool of them) accepts, reads, routes and writes every connection, so an idle or slow
// connection costs a socket and a little memory, never a thread.
//
// A handler runs on that thread and never waits: it answers at once, or answers later. A later
// answer's function is asked again whenever the request's waker is woken (from any thread: the
// model thread, once a result or tokens are there) and once its deadline has passed; in between,
// the connection is suspended (no polling). A streamed body (chunked) works the same way: its
// producer gives the bytes it has, or none yet (then the connection sleeps until woken).
//
// Limits: at most connection_limit connections (more are closed at once); a connection must send
// its whole request (headers and body) within request_timeout_s of opening or of its previous
// answer, and one with no traffic at all for that long (a client not reading) is closed too; a
// body over max_body_bytes is refused 413 (and the connection closed).
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tc::infer::http {

using Clock = std::chrono::steady_clock;

struct Exchange;

// Wakes a request's suspended connection, so that its later answer (or stream) is asked again.
// Any thread may call wake(), any number of times, also after the request ended (then nothing).
class Waker {
 public:
  Waker() = default;
  explicit Waker(std::weak_ptr<Exchange> exchange) : exchange_(std::move(exchange)) {}
  void wake() const;

 private:
  std::weak_ptr<Exchange> exchange_;
};

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method, path;          // the path without its query
  std::vector<std::string> matches;  // the route's pattern: [0] the path, then its groups
  Headers headers, query;            // the query's parameters decoded
  std::string body;
  Clock::time_point start;  // when its headers had arrived
  Waker waker;

  // A header (case-insensitive name) or query parameter; "" when absent.
  bool has_header(std::string_view name) const;
  std::string header(std::string_view name) const;
  std::string param(std::string_view name) const;
};

// A piece of a streamed body: bytes to send (none: wait until woken), and whether it is the last.
struct Chunk {
  std::string data;
  bool end = false;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json", body;
  Headers headers;
  bool close = false;  // close the connection after this answer
  // Streamed (chunked) instead of `body`: asked for the next chunk whenever the client has taken
  // the last one, when woken, and once `deadline` has passed. on_close runs when the stream has
  // ended or its client went away.
  std::function<Chunk()> stream;
  std::function<void()> on_close;
  // Not answered yet: asked again when woken and once `deadline` has passed, until it gives the
  // answer (it may throw, as a handler may).
  std::function<std::optional<Response>()> later;
  Clock::time_point deadline = Clock::time_point::max();

  static Response later_by(Clock::time_point deadline,
                           std::function<std::optional<Response>()> later) {
    Response r;
    r.later = std::move(later);
    r.deadline = deadline;
    return r;
  }
};

struct Options {
  int threads = 1;  // event-loop threads; handlers never wait, so one is usually plenty
  int64_t connection_limit = 10000;
  int64_t max_body_bytes = 8 << 20;
  double request_timeout_s = 30;
};

class Server {
 public:
  using Handler = std::function<Response(const Request&)>;
  // The answer to an exception of a handler (or a later answer), and to the server's own
  // refusals: RequestErrors (apps/infer/requests.h) of 413 (body too large) and 503 (stopping).
  using ErrorPage = std::function<Response(const Request&, std::exception_ptr)>;
  // Told of every answer once it is queued for sending; of a stream once it has ended.
  using Logger = std::function<void(const Request&, int status)>;

  Server(const Options& options, ErrorPage error_page, Logger logger);
  ~Server();  // stops

  // The first route whose method (empty: any; HEAD takes GET's) and pattern (a regular expression
  // on the whole path) match answers.
  void route(std::string method, const std::string& pattern, Handler handler);

  // Binds and listens (port 0: an ephemeral one); the port, or -1 when it cannot.
  int listen(const std::string& host, int port);
  // Serves from the event thread(s) until stop(). Throws tc::Error when it cannot start.
  void start();
  // Closes every connection: streams and requests still waiting are cut (a waiting request the
  // event thread gets to first is answered 503).
  void stop();

 private:
  friend struct Exchange;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tc::infer::http
