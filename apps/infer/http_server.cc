#include "apps/infer/http_server.h"

#include <absl/strings/str_format.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
// GCC 12 warns of a std::function member "maybe uninitialized" inside <regex> when it
// instantiates it under the sanitizers (-O1): a false alarm in the library's code
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "apps/infer/requests.h"
#include "tinycore/error.h"

namespace tc::infer::http {
namespace {

bool same_name(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

const std::string* find(const Headers& h, std::string_view name) {
  for (const auto& [k, v] : h)
    if (same_name(k, name)) return &v;
  return nullptr;
}

// Runs functions at their times on a thread of its own: the deadlines of requests and answers.
class Timers {
 public:
  using Id = std::pair<Clock::time_point, uint64_t>;

  Timers() : thread_([this] { loop(); }) {}
  ~Timers() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Id at(Clock::time_point t, std::function<void()> fn) {
    std::lock_guard<std::mutex> lock(mu_);
    Id id{t, ++next_};
    bool first = due_.empty() || id < due_.begin()->first;
    due_.emplace(id, std::move(fn));
    if (first) cv_.notify_all();
    return id;
  }
  void cancel(Id id) {
    std::lock_guard<std::mutex> lock(mu_);
    due_.erase(id);
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (due_.empty()) {
        cv_.wait(lock);
      } else if (Clock::time_point next = due_.begin()->first.first; next > Clock::now()) {
        cv_.wait_until(lock, next);  // a copy: cancel() may erase the entry while this waits
      } else {
        std::function<void()> fn = std::move(due_.begin()->second);
        due_.erase(due_.begin());
        lock.unlock();
        fn();
        lock.lock();
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Id, std::function<void()>> due_;
  uint64_t next_ = 0;
  bool stop_ = false;
  std::thread thread_;  // last: runs once the rest is made
};

// A connection: its socket, and whether it owes the rest of a request (then its deadline runs).
struct Connection {
  uint64_t id;
  int fd;
  bool reading = true;
  Timers::Id deadline;
};

enum class Suspend { suspended, woken, stopping };

}  // namespace

// One request and its answer, shared by the connection (until it ends), a stream's response and
// the wakers' weak references.
struct Exchange {
  Server::Impl* server;
  MHD_Connection* connection;  // null once the request is over (guarded by the server's mu)
  Request request;
  bool dispatched = false;
  bool too_large = false;
  uint64_t received = 0;  // body bytes
  std::function<std::optional<Response>()> later;
  std::optional<Timers::Id> deadline;
  int status = 0;
  // A stream: its producer, and the bytes it gave that the client has not taken yet.
  std::function<Chunk()> stream;
  std::function<void()> on_close;
  std::string out;
  size_t sent = 0;
  bool ended = false;
  // Guarded by the server's mu.
  bool suspended = false, woken = false;
};

using Shared = std::shared_ptr<Exchange>;

struct Server::Impl {
  Options opt;
  ErrorPage error_page;
  Logger logger;
  struct Route {
    std::string method;
    std::regex pattern;
    Handler handler;
  };
  std::vector<Route> routes;
  int listen_fd = -1;
  MHD_Daemon* daemon = nullptr;
  std::atomic<int64_t> open{0};  // connections

  std::mutex mu;  // guards the exchanges' suspension, and everything below
  bool stopping = false;
  std::unordered_set<Exchange*> suspended;
  std::unordered_map<uint64_t, Connection*> connections;
  uint64_t next_connection = 0;
  Timers timers;  // last: stopped first, as its functions use the rest

  Impl(const Options& o, ErrorPage e, Logger l)
      : opt(o), error_page(std::move(e)), logger(std::move(l)) {}

  std::chrono::nanoseconds request_timeout() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(opt.request_timeout_s));
  }

  // --- suspension: the event thread suspends; any thread wakes.
  Suspend suspend(Exchange& e) {
    std::lock_guard<std::mutex> lock(mu);
    if (stopping) return Suspend::stopping;
    if (e.woken) {
      e.woken = false;
      return Suspend::woken;
    }
    e.suspended = true;
    suspended.insert(&e);
    MHD_suspend_connection(e.connection);
    return Suspend::suspended;
  }
  void wake(Exchange& e) {
    std::lock_guard<std::mutex> lock(mu);
    if (!e.connection) return;
    if (!e.suspended) {
      e.woken = true;
      return;
    }
    e.suspended = false;
    suspended.erase(&e);
    MHD_resume_connection(e.connection);
  }
  // Wakes the exchange once `t` has passed (once per exchange).
  void wake_at(const Shared& e, Clock::time_point t) {
    if (e->deadline || t == Clock::time_point::max()) return;
    e->deadline = timers.at(t, [this, w = std::weak_ptr<Exchange>(e)] {
      if (Shared e = w.lock()) wake(*e);
    });
  }

  // --- a connection's deadline for its request.
  static Connection* connection_of(MHD_Connection* c) {
    const MHD_ConnectionInfo* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? static_cast<Connection*>(info->socket_context) : nullptr;
  }
  // Starts (reading) or ends the time the connection has to send its request; past it, the
  // socket is shut down, which the event thread sees as the client leaving.
  void expect_request(Connection* k, bool reading) {
    std::lock_guard<std::mutex> lock(mu);
    timers.cancel(k->deadline);
    k->reading = reading;
    if (!reading) return;
    k->deadline = timers.at(Clock::now() + request_timeout(), [this, id = k->id] {
      std::lock_guard<std::mutex> lock(mu);
      auto it = connections.find(id);
      if (it != connections.end() && it->second->reading) shutdown(it->second->fd, SHUT_RDWR);
    });
  }

  // --- answers
  Response refusal(const Request& r, int status, const std::string& message) {
    return error_page(r, std::make_exception_ptr(RequestError(status, message)));
  }
  template <typename F>
  auto guarded(const Request& r, F f) -> decltype(f()) {
    try {
      return f();
    } catch (...) {
      return error_page(r, std::current_exception());
    }
  }
  Response dispatch(Request& r) {
    std::string method = r.method == "HEAD" ? "GET" : r.method;
    for (const Route& route : routes) {
      std::smatch m;
      if ((!route.method.empty() && route.method != method) ||
          !std::regex_match(r.path, m, route.pattern))
        continue;
      r.matches.assign(m.begin(), m.end());
      return guarded(r, [&] { return route.handler(r); });
    }
    return refusal(r, 404, absl::StrFormat("no endpoint %s %s", r.method, r.path));
  }
  // Answers now, or suspends until the later answer has news.
  MHD_Result answer(const Shared& e, std::optional<Response> r) {
    for (;;) {
      if (r && !r->later) return queue(e, std::move(*r));
      if (r) {
        e->later = std::move(r->later);
        wake_at(e, r->deadline);
      }
      switch (suspend(*e)) {
        case Suspend::suspended:
          return MHD_YES;
        case Suspend::stopping:
          return queue(e, refusal(e->request, 503, "the server is shutting down"));
        case Suspend::woken:
          r = guarded(e->request, e->later);
      }
    }
  }
  MHD_Result queue(const Shared& e, Response r) {
    MHD_Response* res;
    e->status = r.status;
    if (r.stream) {
      e->stream = std::move(r.stream);
      e->on_close = std::move(r.on_close);
      wake_at(e, r.deadline);
      res = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, &read_stream, new Shared(e),
                                              &free_stream);
    } else {
      res = MHD_create_response_from_buffer(r.body.size(), r.body.data(), MHD_RESPMEM_MUST_COPY);
    }
    if (!res) return MHD_NO;
    if (!r.content_type.empty())
      MHD_add_response_header(res, "Content-Type", r.content_type.c_str());
    for (const auto& [k, v] : r.headers) MHD_add_response_header(res, k.c_str(), v.c_str());
    if (r.close) MHD_add_response_header(res, "Connection", "close");
    // Counted before it is sent, so that the client sees it in its next /metrics; a stream once
    // it has ended.
    if (!e->stream && logger) logger(e->request, r.status);
    MHD_Result ok = MHD_queue_response(e->connection, static_cast<unsigned>(r.status), res);
    MHD_destroy_response(res);
    return ok;
  }

  // --- libmicrohttpd's callbacks
  MHD_Result on_request(MHD_Connection* c, const char* url, const char* method, const char* upload,
                        size_t* upload_size, void** context) {
    if (!*context) {  // the headers are in
      auto e = std::make_shared<Exchange>();
      e->server = this;
      e->connection = c;
      Request& r = e->request;
      r.method = method;
      r.path = url;
      r.start = Clock::now();
      r.waker = Waker(e);
      auto collect = [](void* to, MHD_ValueKind, const char* key, const char* value) {
        static_cast<Headers*>(to)->emplace_back(key, value ? value : "");
        return MHD_YES;
      };
      MHD_get_connection_values(c, MHD_HEADER_KIND, collect, &r.headers);
      MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect, &r.query);
      *context = new Shared(e);
      // A body announced far over the limit is refused unread.
      const std::string* length = find(r.headers, "Content-Length");
      if (length && std::strtoull(length->c_str(), nullptr, 10) >
                        2 * static_cast<uint64_t>(opt.max_body_bytes)) {
        e->dispatched = true;
        return queue(e, too_large(r));
      }
      return MHD_YES;
    }
    const Shared& e = *static_cast<Shared*>(*context);
    if (*upload_size) {
      Request& r = e->request;
      const auto limit = static_cast<uint64_t>(opt.max_body_bytes);
      e->received += *upload_size;
      if (e->received <= limit) r.body.append(upload, *upload_size);
      *upload_size = 0;
      if (e->received <= limit) return MHD_YES;
      // Over the limit: read on and drop (up to the limit again) so that a client still sending
      // gets the 413 rather than a reset connection; past that, hang up.
      e->too_large = true;
      std::string().swap(r.body);
      return e->received <= 2 * limit ? MHD_YES : MHD_NO;
    }
    if (e->dispatched) return answer(e, guarded(e->request, e->later));  // resumed
    e->dispatched = true;
    if (Connection* k = connection_of(c)) expect_request(k, false);
    if (e->too_large) return queue(e, too_large(e->request));
    return answer(e, dispatch(e->request));
  }
  Response too_large(const Request& r) {
    Response res = refusal(
        r, 413, absl::StrFormat("body: larger than the limit of %d bytes", opt.max_body_bytes));
    res.close = true;
    return res;
  }

  ssize_t on_read(Exchange& e, char* buf, size_t max) {
    for (;;) {
      if (e.sent < e.out.size()) {
        size_t n = std::min(max, e.out.size() - e.sent);
        std::memcpy(buf, e.out.data() + e.sent, n);
        e.sent += n;
        return static_cast<ssize_t>(n);
      }
      if (e.ended) return MHD_CONTENT_READER_END_OF_STREAM;
      Chunk chunk;
      try {
        chunk = e.stream();
      } catch (...) {
        return MHD_CONTENT_READER_END_WITH_ERROR;
      }
      e.out = std::move(chunk.data);
      e.sent = 0;
      e.ended = chunk.end;
      if (!e.out.empty() || e.ended) continue;
      switch (suspend(e)) {
        case Suspend::suspended:
          return 0;
        case Suspend::stopping:
          return MHD_CONTENT_READER_END_WITH_ERROR;
        case Suspend::woken:
          continue;
      }
    }
  }

  void on_completed(MHD_Connection* c, void** context, MHD_RequestTerminationCode why) {
    auto* held = static_cast<Shared*>(*context);
    if (!held) return;
    *context = nullptr;
    Exchange& e = **held;
    {
      std::lock_guard<std::mutex> lock(mu);
      e.connection = nullptr;
      suspended.erase(&e);
      e.suspended = false;
    }
    if (e.deadline) timers.cancel(*e.deadline);
    if (e.stream) {
      if (e.on_close) e.on_close();
      if (logger) logger(e.request, e.status);
    }
    delete held;
    // A kept-alive connection owes its next request within the timeout.
    if (why == MHD_REQUEST_TERMINATED_COMPLETED_OK)
      if (Connection* k = connection_of(c)) expect_request(k, true);
  }

  void on_connection(MHD_Connection* c, void** socket_context,
                     MHD_ConnectionNotificationCode code) {
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
      const MHD_ConnectionInfo* info =
          MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
      auto* k = new Connection{.id = 0, .fd = info ? info->connect_fd : -1, .deadline = {}};
      {
        std::lock_guard<std::mutex> lock(mu);
        k->id = ++next_connection;
        connections[k->id] = k;
      }
      open++;
      *socket_context = k;
      expect_request(k, true);
      return;
    }
    auto* k = static_cast<Connection*>(*socket_context);
    if (!k) return;
    {
      std::lock_guard<std::mutex> lock(mu);
      timers.cancel(k->deadline);
      connections.erase(k->id);
    }
    open--;
    delete k;
    *socket_context = nullptr;
  }

  static ssize_t read_stream(void* cls, uint64_t, char* buf, size_t max) {
    Exchange& e = **static_cast<Shared*>(cls);
    return e.server->on_read(e, buf, max);
  }
  static void free_stream(void* cls) { delete static_cast<Shared*>(cls); }
};

void Waker::wake() const {
  if (Shared e = exchange_.lock()) e->server->wake(*e);
}

bool Request::has_header(std::string_view name) const { return find(headers, name) != nullptr; }
std::string Request::header(std::string_view name) const {
  const std::string* v = find(headers, name);
  return v ? *v : "";
}
std::string Request::param(std::string_view name) const {
  for (const auto& [k, v] : query)
    if (k == name) return v;
  return "";
}

Server::Server(const Options& options, ErrorPage error_page, Logger logger)
    : impl_(std::make_unique<Impl>(options, std::move(error_page), std::move(logger))) {}

Server::~Server() {
  stop();
  if (!impl_->daemon && impl_->listen_fd >= 0) close(impl_->listen_fd);
}

void Server::route(std::string method, const std::string& pattern, Handler handler) {
  impl_->routes.push_back({std::move(method), std::regex(pattern), std::move(handler)});
}

int Server::listen(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    // SO_REUSEADDR only (not SO_REUSEPORT): a port in use must be an error.
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) return -1;
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  impl_->listen_fd = fd;
  return ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                          : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

void Server::start() {
  Impl& s = *impl_;
  TC_CHECK(s.listen_fd >= 0 && !s.daemon, "http::Server::start: listen first, and once");
  // Connections past the limit are closed by the accept policy; libmicrohttpd's own limit is
  // above it (per thread), so that it never stops accepting and leaves clients in the backlog.
  auto threads = static_cast<unsigned>(std::max(1, s.opt.threads));
  auto limit = static_cast<unsigned>(s.opt.connection_limit + 1) * threads;
  auto idle = static_cast<unsigned>(std::max(1.0, std::ceil(s.opt.request_timeout_s)));
  auto accept = [](void* cls, const sockaddr*, socklen_t) {
    Impl& s = *static_cast<Impl*>(cls);
    return s.open < s.opt.connection_limit ? MHD_YES : MHD_NO;
  };
  auto request = [](void* cls, MHD_Connection* c, const char* url, const char* method, const char*,
                    const char* upload, size_t* upload_size, void** context) {
    return static_cast<Impl*>(cls)->on_request(c, url, method, upload, upload_size, context);
  };
  MHD_RequestCompletedCallback completed = [](void* cls, MHD_Connection* c, void** context,
                                              MHD_RequestTerminationCode why) {
    static_cast<Impl*>(cls)->on_completed(c, context, why);
  };
  MHD_NotifyConnectionCallback connection = [](void* cls, MHD_Connection* c, void** context,
                                               MHD_ConnectionNotificationCode code) {
    static_cast<Impl*>(cls)->on_connection(c, context, code);
  };
  s.daemon =
      MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME, 0, accept, &s,
                       request, &s, MHD_OPTION_LISTEN_SOCKET, s.listen_fd,
                       MHD_OPTION_CONNECTION_LIMIT, limit, MHD_OPTION_CONNECTION_TIMEOUT, idle,
                       MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_NOTIFY_COMPLETED, completed,
                       &s, MHD_OPTION_NOTIFY_CONNECTION, connection, &s, MHD_OPTION_END);
  if (!s.daemon) fail("infer serve: libmicrohttpd could not start serving");
}

void Server::stop() {
  Impl& s = *impl_;
  if (!s.daemon) return;
  {
    // Nothing suspends from now on: waiting requests answer 503, streams end.
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.stopping) return;
    s.stopping = true;
    for (Exchange* e : s.suspended) {
      e->suspended = false;
      MHD_resume_connection(e->connection);
    }
    s.suspended.clear();
  }
  MHD_stop_daemon(s.daemon);
}

}  // namespace tc::infer::http
