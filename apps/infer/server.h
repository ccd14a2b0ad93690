// infer serve: the HTTP front of a run or a model (libmicrohttpd through apps/infer/http_server.h,
// JSON with nlohmann-json).
//   POST /v1/classify      image bytes (any non-JSON content type) or {"image": "<base64>",
//                          "topk": K} -> {"predictions": [{"index", "label", "prob"}, ...]}
//   POST /v1/completions   OpenAI-completions-shaped {"prompt", "max_tokens", "temperature",
//                          "top_k", "top_p", "seed", "stream"}; stream: true answers with
//                          server-sent events, one per token, then "data: [DONE]"
//   GET  /healthz          {"status": "ok", "model": ...}
// A language model (a GGUF file or a Hugging Face folder) answers /v1/completions (plus stop,
// min_p, repetition_penalty) and, in OpenAI's shapes:
//   POST /v1/chat/completions  {"messages": [{"role", "content"}], sampling fields as above,
//                          "stop"} -> chat.completion (stream: chat.completion.chunk deltas)
//   GET  /v1/models        {"object": "list", "data": [{"id": <name>, "object": "model"}]}
// The completion endpoints refuse unknown fields (400 naming the field).
// An ONNX model is served by KServe's Open Inference Protocol v2 (as Triton serves it) instead:
//   GET  /v2/health/ready, /v2/health/live, /v2 (server metadata)
//   GET  /v2/models/<name> {"name", "versions", "platform": "onnx", "inputs" and "outputs":
//                          [{"name", "datatype": "FP32", ..., "shape": -1 where dynamic}]}
//   POST /v2/models/<name>/infer  {"id", "inputs": [{"name", "shape", "datatype", "data"}],
//                          "outputs": [{"name"}]} -> {"model_name", "model_version", "id",
//                          "outputs": [{"name", "datatype", "shape", "data" (flat)}]}
// with errors as that protocol writes them, {"error": "message"}; an unknown model is 404.
//   GET  /metrics          Prometheus text: requests by endpoint and status, latency
//                          percentiles, generated tokens and tokens/s, queue depth, batch sizes
// Serving never spends a thread per connection: one event thread (apps/infer/http_server.h)
// accepts, reads and writes every connection, parses and validates a request, then queues it and
// suspends the connection until the model thread wakes it with the result (or tokens to stream).
// One model thread owns the model: it takes up to max_batch queued images or ONNX requests (stacked
// along axis 0 when the model's first dimensions are dynamic; waiting at most batch_wait_ms for
// more) or keeps up to max_batch sequences decoding together (apps/infer/generator.h). A full queue
// answers 503; bad input 4xx with {"error": {"message", "type"}} (apps/infer/requests.h says
// which status for what). A streamed completion sends a token's bytes once they end a whole UTF-8
// character, and ends with an error event (then [DONE]) if the timeout cuts it. A client that goes
// away frees its sequence's slot; a request that times out while queued never runs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "apps/infer/classifier.h"

namespace tc::infer {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                   // 0: an ephemeral port (Server::port() tells which)
  int64_t max_batch = 8;             // images per model step / sequences decoding together
  double batch_wait_ms = 2;          // how long a lone image waits for company
  int64_t queue_limit = 64;          // requests waiting for the model thread; more: 503
  int64_t max_body_bytes = 8 << 20;  // larger bodies: 413
  ImageLimits image;                 // larger images: 413
  int64_t max_tokens = 256;          // a completion asking for more: 400
  double request_timeout_s = 30;     // waiting + running; longer: 504. A connection must also
                                     // send a whole request within it (of opening, or of its
                                     // previous answer), and one silent that long is closed
  int threads = 1;                   // HTTP event-loop threads (each serves any number of
                                     // connections; they never wait, so one is usually plenty)
  int64_t connection_limit = 10000;  // open connections; more are closed at once
  std::string model_name;  // the name an ONNX or language model is served under (default: its
                           // file's stem or folder's name)
  // A language model's (see llm::LoadOptions and LlmTextModel)
  int64_t max_context = 4096;
  std::string quantize, chat_template;
};

class Server {
 public:
  // Loads the model and binds host:port: `source` is a run folder (a classifier or a GPT, from its
  // config), an ONNX model file, or a language model (a GGUF file or Hugging Face folder). Throws
  // tc::Error when the model cannot be loaded or the address cannot be bound.
  Server(const std::string& source, const ServerOptions& options);
  ~Server();  // stops
  int port() const;
  void run();  // serves until stop() (from any thread or a signal handler's thread)
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tc::infer
