#include "apps/infer/server.h"

#include <filesystem>

#include "apps/common/config.h"
#include "apps/infer/server_impl.h"

namespace tc::infer {

using namespace serving;  // the parts the server's files share (server_impl.h)

namespace {

constexpr const char* kClassify = "/v1/classify";
constexpr const char* kCompletions = "/v1/completions";
constexpr const char* kChatCompletions = "/v1/chat/completions";
constexpr const char* kModels = "/v1/models";
constexpr const char* kHealthz = "/healthz";
constexpr const char* kMetrics = "/metrics";
// KServe's Open Inference Protocol v2, for an ONNX model.
constexpr const char* kV2 = "/v2";
constexpr const char* kV2Ready = "/v2/health/ready";
constexpr const char* kV2Live = "/v2/health/live";
constexpr const char* kV2Model = R"(/v2/models/([^/]+))";
constexpr const char* kV2Infer = R"(/v2/models/([^/]+)/infer)";

// The name a model is served under: the option, else the run folder's name or the model file's
// without its extension.
std::string served_name(const std::string& source, const ServerOptions& o) {
  if (!o.model_name.empty()) return o.model_name;
  std::filesystem::path p = std::filesystem::path(source).lexically_normal();
  if (std::filesystem::is_regular_file(p)) return p.stem().string();
  return p.filename().empty() ? p.parent_path().filename().string() : p.filename().string();
}

// The paths /metrics counts requests under (any other: "other").
std::vector<std::string> counted_paths(Kind kind, const std::string& name) {
  if (kind == Kind::llm) return {kCompletions, kChatCompletions, kModels, kHealthz, kMetrics};
  if (kind != Kind::onnx) return {kClassify, kCompletions, kHealthz, kMetrics};
  return {kHealthz,
          kMetrics,
          kV2,
          kV2Ready,
          kV2Live,
          "/v2/models/" + name,
          "/v2/models/" + name + "/infer"};
}

// Errors as the endpoint's protocol writes them: the v2 protocol's {"error": "message"},
// OpenAI's {"error": {"message", "type"}} elsewhere.
std::string error_json(const std::string& path, int status, std::string_view message) {
  if (path.starts_with("/v2")) return dump({{"error", message}});
  return error_body(status, message);
}

// A refusal's answer: its status and JSON error.
http::Response refusal(const std::string& path, int status, std::string_view message) {
  http::Response res;
  res.status = status;
  res.body = error_json(path, status, message);
  return res;
}

// The answer to what a handler threw.
http::Response refusal(const http::Request& req, std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const RequestError& e) {
    return refusal(req.path, e.status(), e.what());
  } catch (const Error& e) {
    return refusal(req.path, 400, e.what());
  } catch (const std::exception& e) {
    return refusal(req.path, 500, std::string("internal error: ") + e.what());
  } catch (...) {
    return refusal(req.path, 500, "internal error");
  }
}

http::Options http_options(const ServerOptions& o) {
  return {.threads = o.threads,
          .connection_limit = o.connection_limit,
          .max_body_bytes = o.max_body_bytes,
          .request_timeout_s = o.request_timeout_s};
}

}  // namespace

Server::Impl::Impl(const std::string& src, const ServerOptions& o)
    : opt(o),
      source(src),
      kind(is_language_model(src)                  ? Kind::llm
           : std::filesystem::is_regular_file(src) ? Kind::onnx
                                                   : Kind::classifier),
      model_name(served_name(src, o)),
      metrics(counted_paths(kind, model_name), o.max_batch),
      http(
          http_options(o),
          [](const http::Request& req, std::exception_ptr e) { return refusal(req, e); },
          [this](const http::Request& req, int status) {
            metrics.record_request(req.path, status, seconds_between(req.start, Clock::now()));
          }) {}

void Server::Impl::start() {
  if (opt.max_batch < 1 || opt.queue_limit < 1 || opt.max_body_bytes < 1 || opt.max_tokens < 1 ||
      opt.threads < 1 || opt.connection_limit < 1 || !(opt.request_timeout_s > 0) ||
      !(opt.batch_wait_ms >= 0))
    fail(
        "ServerOptions: max_batch, queue_limit, max_body_bytes, max_tokens, threads, "
        "connection_limit and request_timeout_s must be positive, batch_wait_ms 0 or more");
  std::string config_file = source + "/config.yaml";
  // A missing config is reported by load_run (through the Classifier), naming the folder.
  if (kind == Kind::onnx)
    architecture = "onnx";
  else if (kind == Kind::classifier && std::filesystem::exists(config_file))
    architecture = config::load_config(config_file).model.name;
  if (architecture == "gpt") kind = Kind::gpt;

  // The model lives on its own thread from construction on (the JIT, the no-grad state and the
  // tensors are that thread's); construction errors come back here.
  std::promise<void> ready;
  std::future<void> loaded = ready.get_future();
  model_thread = std::thread([this, ready = std::move(ready)]() mutable { load_model(ready); });
  try {
    loaded.get();
  } catch (...) {
    model_thread.join();
    throw;
  }

  routes();
  bound_port = http.listen(opt.host, opt.port);
  if (bound_port < 0)
    fail(
        "infer serve: cannot listen on %s:%d (is the port in use, or the host not an address of "
        "this machine?)",
        opt.host, opt.port);
}

void Server::Impl::load_model(std::promise<void>& ready) {
  try {
    if (kind == Kind::gpt || kind == Kind::llm) {
      std::unique_ptr<TextModel> model;
      if (kind == Kind::llm) {
        auto m = std::make_unique<LlmTextModel>(
            source, llm::LoadOptions{.max_context = opt.max_context, .quantize = opt.quantize},
            opt.chat_template);
        llm = m.get();
        architecture = m->loaded().model->config().arch;
        model = std::move(m);
      } else {
        model = load_run_text_model(source);
      }
      generator = std::make_unique<Generator>(std::move(model), opt.max_batch);
      // Warm up: the step's JIT captures on its second call, so the first client does not wait.
      generator->generate("\n", {.max_tokens = 2, .temperature = 0});
    } else if (kind == Kind::onnx) {
      onnx = std::make_unique<OnnxModel>(source);
      for (const onnx::TensorSpec& s : onnx->inputs()) v2_inputs.push_back(v2_tensor(s));
      for (const onnx::TensorSpec& s : onnx->outputs()) {
        v2_outputs.push_back(v2_tensor(s));
        v2_output_names.push_back(s.name);
      }
      v2_batchable = onnx->batchable();
    } else {
      classifier = std::make_unique<Classifier>(source, opt.max_batch);
      classifier->warm_up();
    }
  } catch (...) {
    ready.set_exception(std::current_exception());
    return;
  }
  ready.set_value();
  if (kind == Kind::gpt || kind == Kind::llm)
    generate_loop();
  else if (kind == Kind::onnx)
    tensor_loop();
  else
    classify_loop();
}

// Takes up to max_batch images: once one is queued it waits up to batch_wait_ms for company.
void Server::Impl::classify_loop() {
  std::vector<std::shared_ptr<ClassifyJob>> batch;
  while (take_batch(
      images, opt.max_batch, [](const ClassifyJob&, const ClassifyJob&) { return true; }, batch)) {
    if (batch.empty()) continue;
    std::vector<std::vector<float>> inputs;
    int64_t topk = 1;
    for (const auto& job : batch) {
      inputs.push_back(std::move(job->input));
      topk = std::max(topk, job->topk);
    }
    Clock::time_point t0 = Clock::now();
    std::vector<std::vector<ClassScore>> scores;
    try {
      scores = classifier->classify(inputs, topk);
    } catch (...) {
      for (const auto& job : batch) job->refuse(std::current_exception());
      continue;
    }
    metrics.record_step(static_cast<int64_t>(batch.size()), 0, seconds_between(t0, Clock::now()));
    for (size_t i = 0; i < batch.size(); i++) {
      scores[i].resize(static_cast<size_t>(batch[i]->topk));
      batch[i]->answer(std::move(scores[i]));
    }
  }
  refuse_queued(images);
}

http::Response Server::Impl::classify(const http::Request& req) {
  ClassifyRequest r =
      parse_classify(req.body, req.header("Content-Type"), req.param("topk"),
                     {.classes = classifier->classes(), .max_image_bytes = opt.image.max_bytes});
  auto job = std::make_shared<ClassifyJob>();
  try {
    job->input = classifier->preprocess(r.image, opt.image);
  } catch (const ImageTooLarge& e) {
    throw RequestError(413, e.what());
  } catch (const Error& e) {
    throw RequestError(422, e.what());  // not an image
  }
  job->topk = r.topk;
  return submit(req, images, job, [](const std::vector<ClassScore>& scores) {
    Json predictions = Json::array();
    for (const ClassScore& s : scores)
      predictions.push_back({{"index", s.index}, {"label", s.label}, {"prob", s.prob}});
    http::Response res;
    res.body = dump({{"predictions", predictions}});
    return res;
  });
}

void Server::Impl::routes() {
  auto post = [this](const char* path, http::Response (Impl::*handler)(const http::Request&)) {
    http.route("POST", path, [this, handler](const http::Request& req) {
      if (req.header("Content-Type").starts_with("multipart/form-data"))
        throw RequestError(415,
                           "body: multipart/form-data is not supported: send the image file's "
                           "bytes as the body, or JSON");
      return (this->*handler)(req);
    });
  };
  auto get = [this](const char* path, std::function<Json(const http::Request&)> answer) {
    http.route("GET", path, [answer](const http::Request& req) {
      http::Response res;
      res.body = dump(answer(req));
      return res;
    });
  };
  if (kind == Kind::gpt || kind == Kind::llm) post(kCompletions, &Impl::complete);
  if (kind == Kind::llm) {
    post(kChatCompletions, &Impl::chat);
    get(kModels, [this](const http::Request&) {
      Json model = {
          {"id", model_name}, {"object", "model"}, {"created", 0}, {"owned_by", "tinycore"}};
      return Json{{"object", "list"}, {"data", Json::array({model})}};
    });
  }
  if (kind == Kind::classifier) post(kClassify, &Impl::classify);
  if (kind == Kind::onnx) {
    post(kV2Infer, &Impl::infer);
    get(kV2Model, [this](const http::Request& req) {
      check_model_name(req);
      return v2_metadata();
    });
    get(kV2, [](const http::Request&) {
      return Json{{"name", "tinycore"}, {"version", "1"}, {"extensions", Json::array()}};
    });
    // The model is loaded before the server listens: once it answers, it is live and ready.
    get(kV2Ready, [](const http::Request&) { return Json{{"ready", true}}; });
    get(kV2Live, [](const http::Request&) { return Json{{"live", true}}; });
  }
  get(kHealthz, [this](const http::Request&) {
    return Json{{"status", "ok"}, {"model", model_name}, {"architecture", architecture}};
  });
  http.route("GET", kMetrics, [this](const http::Request&) {
    http::Response res;
    res.content_type = "text/plain; version=0.0.4";
    res.body = metrics.render();
    return res;
  });
  // Any other method on a known path: 405 with the allowed one. An endpoint the model does not
  // serve (completions on a classifier, classify on an ONNX model, ...): 404 saying what it is.
  const std::string v2_infer = "/v2/models/" + model_name + "/infer";
  std::string use = kind == Kind::gpt || kind == Kind::llm
                        ? "a language model; use POST /v1/completions or /v1/chat/completions"
                    : kind == Kind::classifier ? "an image classifier; use POST /v1/classify"
                                               : "an ONNX model; use POST " + v2_infer;
  struct Route {
    const char* pattern;
    std::string path;  // as messages show it
    const char* method;
    bool served;
  };
  const bool v2 = kind == Kind::onnx;
  for (const Route& r :
       {Route{kClassify, kClassify, "POST", kind == Kind::classifier},
        Route{kCompletions, kCompletions, "POST", kind == Kind::gpt || kind == Kind::llm},
        Route{kChatCompletions, kChatCompletions, "POST", kind == Kind::llm},
        Route{kModels, kModels, "GET", kind == Kind::llm}, Route{kHealthz, kHealthz, "GET", true},
        Route{kMetrics, kMetrics, "GET", true},
        Route{kV2Infer, "/v2/models/<name>/infer", "POST", v2},
        Route{kV2Model, "/v2/models/<name>", "GET", v2}, Route{kV2Ready, kV2Ready, "GET", v2},
        Route{kV2Live, kV2Live, "GET", v2}, Route{kV2, kV2, "GET", v2}}) {
    std::string message = r.served ? absl::StrFormat("%s takes %s only", r.path, r.method)
                                   : absl::StrFormat("%s is not served: this %s (%s) is %s", r.path,
                                                     v2 ? "model" : "run", model_name, use);
    int status = r.served ? 405 : 404;
    std::string allow = r.method;
    http.route("", r.pattern, [=](const http::Request& req) {
      http::Response res = refusal(req.path, status, message);
      if (status == 405) res.headers = {{"Allow", allow}};
      return res;
    });
  }
  std::string endpoints =
      kind == Kind::onnx
          ? absl::StrFormat("GET %s, GET /v2/models/%s, POST %s, GET %s, GET %s, GET %s", kV2Ready,
                            model_name, v2_infer, kV2Live, kHealthz, kMetrics)
      : kind == Kind::llm
          ? absl::StrFormat("POST %s, POST %s, GET %s, GET %s, GET %s", kCompletions,
                            kChatCompletions, kModels, kHealthz, kMetrics)
          : absl::StrFormat("POST %s, GET %s, GET %s", kind == Kind::gpt ? kCompletions : kClassify,
                            kHealthz, kMetrics);
  http.route("", ".*", [endpoints](const http::Request& req) {
    return refusal(
        req.path, 404,
        absl::StrFormat("no endpoint %s %s (the endpoints: %s)", req.method, req.path, endpoints));
  });
}

Server::Server(const std::string& source, const ServerOptions& options)
    : impl_(std::make_unique<Impl>(source, options)) {
  impl_->start();
}

Server::~Server() = default;

int Server::port() const { return impl_->bound_port; }

void Server::run() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.stop_requested || s.running) return;
    s.running = true;
  }
  // The event thread serves; this one waits for stop().
  try {
    s.http.start();
    std::unique_lock<std::mutex> lock(s.mu);
    s.run_ended.wait(lock, [&] { return s.stop_requested; });
  } catch (...) {
    std::lock_guard<std::mutex> lock(s.mu);
    s.running = false;
    s.run_ended.notify_all();
    throw;
  }
  s.http.stop();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.running = false;
  }
  s.run_ended.notify_all();
}

void Server::stop() { impl_->stop(); }

}  // namespace tc::infer
