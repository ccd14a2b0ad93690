// The bodies of infer serve's requests, parsed and checked into plain structs before anything
// touches the model (no model, no HTTP library here, so the fuzz target links this file alone).
// Every refusal is a RequestError carrying the HTTP status and a message that names the field and
// what was wrong: "max_tokens: expected an integer in 1..256, got -3".
//
// /v1/classify ignores unknown fields. The completion endpoints refuse a field they do not know,
// as OpenAI's API does ("model", "user" and the other fields of its API are known); OpenAI
// options that would change the answer and that we do not implement (n, best_of, echo, logprobs,
// suffix, presence_penalty, frequency_penalty, logit_bias) are accepted only at their neutral
// values, so a client never gets silently different output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tinycore/error.h"

namespace tc::infer {

// A request the server refuses: 400 (malformed or invalid), 404, 405, 413 (too large), 415,
// 422 (well formed but unusable, e.g. an undecodable image), 503 (queue full), 504 (timeout).
class RequestError : public Error {
 public:
  RequestError(int status, const std::string& message) : Error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

// OpenAI's error "type" for a status: "invalid_request_error" for 4xx, "server_overloaded"
// (503), "timeout" (504), "server_error" for the rest.
std::string error_type(int status);
// {"error": {"message": ..., "type": ...}}; bytes that are not UTF-8 become U+FFFD.
std::string error_body(int status, std::string_view message);

// Standard base64 (RFC 4648 alphabet, '=' padding required to a multiple of 4 characters).
// Throws tc::Error naming the offset of a bad character or bad padding. ASCII whitespace (line
// breaks of MIME-wrapped text) is skipped.
std::string base64_decode(std::string_view text);

struct ClassifyRequest {
  std::string image;  // encoded image bytes (PNG, JPEG, ...), not yet decoded
  int64_t topk = 0;
};

struct ClassifyLimits {
  int64_t classes = 10;                // topk: 1..classes
  int64_t max_image_bytes = 16 << 20;  // encoded size; more: 413
};

// A /v1/classify body: JSON {"image": "<base64>", "topk": K} when content_type is
// application/json, otherwise the raw image bytes, with topk from the query (`topk_query`, empty
// when absent). topk defaults to min(5, classes).
ClassifyRequest parse_classify(std::string_view body, std::string_view content_type,
                               std::string_view topk_query, const ClassifyLimits& limits);

struct ChatTurn {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

struct CompletionRequest {
  std::string prompt;               // /v1/completions: non-empty
  std::vector<ChatTurn> messages;   // /v1/chat/completions: at least one
  int64_t max_tokens = 16;          // OpenAI's default; 1..max_tokens limit
  double temperature = 1.0;         // >= 0; 0: greedy
  int64_t top_k = 0;                // >= 0; 0: all tokens
  double top_p = 1.0;               // (0, 1]
  double min_p = 0.0;               // [0, 1]
  double repetition_penalty = 1.0;  // > 0
  std::vector<std::string> stop;    // a string or up to 4 of them, none empty
  std::optional<uint64_t> seed;     // absent: the server picks one
  bool stream = false;
};

// A /v1/completions body (JSON object). max_tokens_limit bounds max_tokens.
CompletionRequest parse_completion(std::string_view body, int64_t max_tokens_limit);
// A /v1/chat/completions body: "messages" [{"role", "content": a string or [{"type": "text",
// "text"}]}] and the sampling fields of a completion (max_completion_tokens for max_tokens too).
CompletionRequest parse_chat_completion(std::string_view body, int64_t max_tokens_limit);

// A tensor of KServe's Open Inference Protocol v2 (as Triton serves it): as a model declares it,
// or as a request gives it.
struct V2Tensor {
  std::string name;
  std::string datatype;        // "FP32", "INT64", "BOOL", ... ("" where a model declares none)
  std::vector<int64_t> shape;  // a model's: -1 where dynamic
  // A request's values, C order, little-endian, each as v2_element_bytes says: the datatype's own
  // layout, except FP16 and BF16, read from JSON into FP32.
  std::string data;
};

// The datatypes of the protocol this server takes (BYTES, strings, is not among them), and the
// bytes of one element of each in V2Tensor::data (0 for an unknown name).
const std::vector<std::string>& v2_datatypes();
int v2_element_bytes(std::string_view datatype);

struct V2InferRequest {
  std::string id;                    // echoed in the answer when given
  std::vector<V2Tensor> inputs;      // one per model input, in the model's order
  std::vector<std::string> outputs;  // the outputs asked for, in the asked order; empty: all
};

// A POST /v2/models/<name>/infer body: {"id", "inputs": [{"name", "shape", "datatype", "data":
// flat or nested}], "outputs": [{"name"}]}, checked against the model's inputs and outputs. A
// wrong or missing input name, a datatype or shape that differs from the model's, data of the
// wrong length or out of its datatype's range are RequestErrors (400) naming the input. The
// binary-data extension is not supported.
V2InferRequest parse_v2_infer(std::string_view body, const std::vector<V2Tensor>& model_inputs,
                              const std::vector<std::string>& model_outputs);

}  // namespace tc::infer
