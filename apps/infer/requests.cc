#include "apps/infer/requests.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

namespace tc::infer {
namespace {

using Json = nlohmann::json;

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// A value as an error message shows it: scalars as JSON (long strings cut), containers by kind
// (never dumped whole: a deep array would recurse).
std::string describe(const Json& v) {
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  std::string s = dump(v);
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw RequestError(400, field + ": " + what);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The media type of a Content-Type header, lower case, without parameters ("; charset=...").
std::string media_type(std::string_view content_type) {
  std::string_view t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  return lower(t);
}

Json parse_object(std::string_view body) {
  if (body.empty()) bad("body", "is empty (expected a JSON object)");
  Json j;
  try {
    j = Json::parse(body.begin(), body.end());
  } catch (const Json::exception& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 5: ...", or
    // out_of_range.406 "number overflow parsing '1e999'" (found by the fuzzer)
    std::string what = e.what();
    size_t at = what.find("] ");
    bad("body", "malformed JSON: " + (at == std::string::npos ? what : what.substr(at + 2)));
  }
  if (!j.is_object()) bad("body", "expected a JSON object, got " + describe(j));
  return j;
}

// The field's value, or nullptr when it is absent or null (OpenAI treats null as "default").
const Json* field(const Json& obj, const char* name) {
  auto it = obj.find(name);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

int64_t int_in(const Json& obj, const char* name, int64_t lo, int64_t hi, int64_t dflt) {
  const Json* v = field(obj, name);
  if (!v) return dflt;
  bool ok = v->is_number_integer();
  if (ok && v->is_number_unsigned()) {  // nlohmann reads every integer >= 0 as unsigned
    uint64_t x = v->get<uint64_t>();
    ok = x <= static_cast<uint64_t>(hi) && (lo <= 0 || x >= static_cast<uint64_t>(lo));
  } else if (ok) {
    int64_t x = v->get<int64_t>();
    ok = x >= lo && x <= hi;
  }
  if (!ok) {
    std::string range = hi == std::numeric_limits<int64_t>::max()
                            ? ">= " + std::to_string(lo)
                            : "in " + std::to_string(lo) + ".." + std::to_string(hi);
    bad(name, "expected an integer " + range + ", got " + describe(*v));
  }
  return v->get<int64_t>();
}

// A number in [lo, hi] (lo_open: (lo, hi]).
double number_in(const Json& obj, const char* name, double lo, bool lo_open, double hi, double dflt,
                 const std::string& range) {
  const Json* v = field(obj, name);
  if (!v) return dflt;
  double x = v->is_number() ? v->get<double>() : std::nan("");
  if (!std::isfinite(x) || x > hi || (lo_open ? x <= lo : x < lo))
    bad(name, "expected a number " + range + ", got " + describe(*v));
  return x;
}

bool bool_field(const Json& obj, const char* name, bool dflt) {
  const Json* v = field(obj, name);
  if (!v) return dflt;
  if (!v->is_boolean()) bad(name, "expected true or false, got " + describe(*v));
  return v->get<bool>();
}

// OpenAI options we do not implement: accepted only at a value that changes nothing.
void check_neutral_options(const Json& obj) {
  struct Option {
    const char* name;
    const char* neutral;  // for the message
    bool (*is_neutral)(const Json&);
  };
  static const Option kOptions[] = {
      {"n", "1", [](const Json& v) { return v == 1; }},
      {"best_of", "1", [](const Json& v) { return v == 1; }},
      {"echo", "false", [](const Json& v) { return v == false; }},
      {"logprobs", "null", [](const Json&) { return false; }},
      {"suffix", "null or \"\"", [](const Json& v) { return v == ""; }},
      {"presence_penalty", "0", [](const Json& v) { return v.is_number() && v == 0; }},
      {"frequency_penalty", "0", [](const Json& v) { return v.is_number() && v == 0; }},
      {"logit_bias", "null or {}", [](const Json& v) { return v == Json::object(); }},
  };
  for (const Option& o : kOptions)
    if (const Json* v = field(obj, o.name); v && !o.is_neutral(*v))
      bad(o.name,
          std::string("not supported (only ") + o.neutral + " is accepted), got " + describe(*v));
}

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::string printable(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", u);
  return hex;
}

// How a datatype's JSON values are read: its element bytes and kind.
struct V2Type {
  const char* name;
  int bytes;
  char kind;  // 'b' bool, 'i' signed, 'u' unsigned, 'f' float (FP16 and BF16 read as FP32)
};
constexpr V2Type kV2Types[] = {
    {"BOOL", 1, 'b'},   {"INT8", 1, 'i'},  {"INT16", 2, 'i'},  {"INT32", 4, 'i'},
    {"INT64", 8, 'i'},  {"UINT8", 1, 'u'}, {"UINT16", 2, 'u'}, {"UINT32", 4, 'u'},
    {"UINT64", 8, 'u'}, {"FP16", 4, 'f'},  {"BF16", 4, 'f'},   {"FP32", 4, 'f'},
    {"FP64", 8, 'f'},
};

const V2Type* v2_type(std::string_view name) {
  for (const V2Type& t : kV2Types)
    if (name == t.name) return &t;
  return nullptr;
}

std::string fmt_dims(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); i++) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string quoted_names(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
  return s;
}

// Appends one JSON value to `out` as `t` lays it out; throws naming the input otherwise.
void append_value(const Json& v, const V2Type& t, const std::string& what, std::string& out) {
  auto range_error = [&] {
    bad(what, std::string("expected ") +
                  (t.kind == 'b'   ? "true or false"
                   : t.kind == 'f' ? "a number in " + std::string(t.name) + "'s range"
                                   : "an integer in " + std::string(t.name) + "'s range") +
                  ", got " + describe(v));
  };
  char buf[8] = {};
  if (t.kind == 'b') {
    if (!v.is_boolean()) range_error();
    buf[0] = v.get<bool>() ? 1 : 0;
  } else if (t.kind == 'f') {
    if (!v.is_number()) range_error();
    double x = v.get<double>();
    if (t.bytes == 8) {
      std::memcpy(buf, &x, 8);
    } else {
      if (!(std::fabs(x) <= std::numeric_limits<float>::max())) range_error();
      float f = static_cast<float>(x);
      std::memcpy(buf, &f, 4);
    }
  } else {
    if (!v.is_number_integer()) range_error();
    const int bits = 8 * t.bytes;
    uint64_t u = 0;  // two's complement bits, little-endian on the hosts we run on
    if (v.is_number_unsigned()) {
      u = v.get<uint64_t>();
      uint64_t max = t.kind == 'u' ? (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1)
                                   : (uint64_t{1} << (bits - 1)) - 1;
      if (u > max) range_error();
    } else {
      int64_t x = v.get<int64_t>();
      if (t.kind == 'u' || (bits < 64 && x < -(int64_t{1} << (bits - 1)))) range_error();
      u = static_cast<uint64_t>(x);
    }
    std::memcpy(buf, &u, static_cast<size_t>(t.bytes));
  }
  out.append(buf, static_cast<size_t>(t.bytes));
}

// The leaves of `data` (flat, or nested no deeper than the shape's rank) appended in order; stops
// past `limit` values (the caller reports the count).
void append_values(const Json& data, const V2Type& t, size_t depth, size_t rank, size_t limit,
                   const std::string& what, std::string& out, size_t& count) {
  for (const Json& v : data) {
    if (count > limit) return;
    if (v.is_array()) {
      if (depth >= rank)
        bad(what, "data is nested deeper than the shape's " + std::to_string(rank) + " dimensions");
      append_values(v, t, depth + 1, rank, limit, what, out, count);
    } else {
      if (++count <= limit) append_value(v, t, what, out);
    }
  }
}

// The request's input `in` checked against the model's `spec`.
V2Tensor v2_input(const Json& in, const V2Tensor& spec, const std::string& what) {
  V2Tensor r{spec.name, "", {}, ""};
  const Json* datatype = field(in, "datatype");
  if (!datatype || !datatype->is_string())
    bad(what, "datatype: expected a string such as \"FP32\"" +
                  (datatype ? ", got " + describe(*datatype) : std::string(", it is missing")));
  r.datatype = datatype->get<std::string>();
  if (!spec.datatype.empty() && r.datatype != spec.datatype)
    bad(what, "datatype " + describe(*datatype) + " does not match the model's " + spec.datatype);
  const V2Type* t = v2_type(r.datatype);
  if (!t) bad(what, "datatype " + describe(*datatype) + " is not supported");
  const Json* shape = field(in, "shape");
  if (!shape || !shape->is_array())
    bad(what, "shape: expected an array of dimensions" +
                  (shape ? ", got " + describe(*shape) : std::string(", it is missing")));
  if (shape->size() > 32) bad(what, "shape: more than 32 dimensions");
  int64_t n = 1;
  for (const Json& d : *shape) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() < 1 || d.get<uint64_t>() > (1u << 30))
      bad(what, "shape: expected dimensions in 1..2^30, got " + describe(d));
    r.shape.push_back(d.get<int64_t>());
    if (n > (int64_t{1} << 40) / r.shape.back()) bad(what, "shape: too many elements");
    n *= r.shape.back();
  }
  bool fits = spec.shape.size() == r.shape.size();
  for (size_t i = 0; fits && i < r.shape.size(); i++)
    fits = spec.shape[i] == -1 || spec.shape[i] == r.shape[i];
  if (!fits)
    bad(what, "shape " + fmt_dims(r.shape) + " does not fit the model's " + fmt_dims(spec.shape));
  const Json* data = field(in, "data");
  if (!data || !data->is_array())
    bad(what, "data: expected an array of values" +
                  (data ? ", got " + describe(*data)
                        : std::string(", it is missing (binary data is not supported)")));
  size_t count = 0, want = static_cast<size_t>(n);
  append_values(*data, *t, 1, std::max<size_t>(r.shape.size(), 1), want, what, r.data, count);
  if (count != want)
    bad(what, "data holds " +
                  (count > want ? "more than " + std::to_string(want) : std::to_string(count)) +
                  " values, shape " + fmt_dims(r.shape) + " needs " + std::to_string(want));
  return r;
}

}  // namespace

std::string error_type(int status) {
  if (status >= 400 && status < 500) return "invalid_request_error";
  if (status == 503) return "server_overloaded";
  if (status == 504) return "timeout";
  return "server_error";
}

std::string error_body(int status, std::string_view message) {
  return dump(Json{{"error", {{"message", message}, {"type", error_type(status)}}}});
}

std::string base64_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t bits = 0;
  int nbits = 0;
  size_t chars = 0, pad = 0;  // significant characters, '=' among them
  for (size_t i = 0; i < text.size(); i++) {
    char c = text[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      if (++pad > 2) fail("base64: more than two '=' at offset %d", i);
      chars++;
      continue;
    }
    int v = base64_value(c);
    if (v < 0) fail("base64: invalid character %s at offset %d", printable(c), i);
    if (pad > 0) fail("base64: data after '=' padding at offset %d", i);
    chars++;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    nbits += 6;
    if (nbits >= 8) {
      nbits -= 8;
      out.push_back(static_cast<char>((bits >> nbits) & 0xff));
    }
  }
  if (chars % 4 != 0)
    fail("base64: %d characters is not a multiple of 4 (missing '=' padding?)", chars);
  // With whole groups of 4, the padding matches the data: 2 leftover bits mean one '=', 4 two.
  if ((bits & ((1u << nbits) - 1)) != 0) fail("base64: the bits before '=' padding are not zero");
  return out;
}

ClassifyRequest parse_classify(std::string_view body, std::string_view content_type,
                               std::string_view topk_query, const ClassifyLimits& limits) {
  const int64_t classes = limits.classes;
  ClassifyRequest r;
  r.topk = std::min<int64_t>(5, classes);
  if (media_type(content_type) == "application/json") {
    Json j = parse_object(body);
    const Json* image = field(j, "image");
    if (!image) bad("image", "missing (expected the image file's bytes as a base64 string)");
    if (!image->is_string()) bad("image", "expected a base64 string, got " + describe(*image));
    std::string_view text = image->get_ref<const std::string&>();
    // A data URL ("data:image/png;base64,....") as browsers make them: the base64 after the comma.
    if (text.substr(0, 5) == "data:" && text.find(";base64,") != std::string_view::npos)
      text.remove_prefix(text.find(";base64,") + 8);
    if (text.size() / 4 * 3 > static_cast<size_t>(limits.max_image_bytes) + 3)
      throw RequestError(413, "image: more than the limit of " +
                                  std::to_string(limits.max_image_bytes) + " bytes");
    try {
      r.image = base64_decode(text);
    } catch (const Error& e) {
      bad("image", std::string("not valid base64: ") + e.what());
    }
    r.topk = int_in(j, "topk", 1, classes, r.topk);
  } else {
    r.image = std::string(body);
    if (!topk_query.empty()) {
      int64_t k = 0;
      auto [end, err] =
          std::from_chars(topk_query.data(), topk_query.data() + topk_query.size(), k);
      if (err != std::errc() || end != topk_query.data() + topk_query.size() || k < 1 ||
          k > classes) {
        std::string shown(topk_query.substr(0, 40));
        bad("topk",
            "expected an integer in 1.." + std::to_string(classes) + ", got '" + shown + "'");
      }
      r.topk = k;
    }
  }
  if (r.image.empty())
    bad("image", "is empty (send the image file's bytes, or JSON {\"image\": base64})");
  if (static_cast<int64_t>(r.image.size()) > limits.max_image_bytes)
    throw RequestError(413, "image: " + std::to_string(r.image.size()) +
                                " bytes is more than the limit of " +
                                std::to_string(limits.max_image_bytes));
  return r;
}

namespace {

// Fields every completion endpoint knows (OpenAI's, and ours), beside its own.
const std::set<std::string> kCompletionFields = {"model",
                                                 "max_tokens",
                                                 "temperature",
                                                 "top_k",
                                                 "top_p",
                                                 "min_p",
                                                 "seed",
                                                 "stop",
                                                 "stream",
                                                 "stream_options",
                                                 "user",
                                                 "n",
                                                 "logprobs",
                                                 "presence_penalty",
                                                 "frequency_penalty",
                                                 "logit_bias",
                                                 "repetition_penalty"};

// Sampling fields into r, after refusing a field neither kCompletionFields nor `own` names.
void parse_sampling(const Json& j, const std::set<std::string>& own, int64_t max_tokens_limit,
                    CompletionRequest& r) {
  for (const auto& [name, value] : j.items())
    if (!kCompletionFields.count(name) && !own.count(name))
      bad(name, "unknown field (not a field of this endpoint)");
  r.max_tokens =
      int_in(j, "max_tokens", 1, max_tokens_limit, std::min(r.max_tokens, max_tokens_limit));
  r.temperature = number_in(j, "temperature", 0, false, std::numeric_limits<double>::max(),
                            r.temperature, ">= 0");
  r.top_k = int_in(j, "top_k", 0, std::numeric_limits<int64_t>::max(), r.top_k);
  r.top_p = number_in(j, "top_p", 0, true, 1, r.top_p, "in (0, 1]");
  r.min_p = number_in(j, "min_p", 0, false, 1, r.min_p, "in [0, 1]");
  r.repetition_penalty = number_in(j, "repetition_penalty", 0, true,
                                   std::numeric_limits<double>::max(), r.repetition_penalty, "> 0");
  if (const Json* seed = field(j, "seed")) {
    if (!seed->is_number_integer() || (!seed->is_number_unsigned() && seed->get<int64_t>() < 0))
      bad("seed", "expected an integer in 0..18446744073709551615, got " + describe(*seed));
    r.seed = seed->get<uint64_t>();
  }
  if (const Json* stop = field(j, "stop")) {
    Json list = stop->is_string() ? Json::array({*stop}) : *stop;
    if (!list.is_array() || list.size() > 4)
      bad("stop", "expected a string or an array of at most 4 strings, got " + describe(*stop));
    for (const Json& s : list) {
      if (!s.is_string()) bad("stop", "expected strings, got " + describe(s));
      if (!s.get<std::string>().empty()) r.stop.push_back(s.get<std::string>());
    }
  }
  r.stream = bool_field(j, "stream", r.stream);
  check_neutral_options(j);
}

}  // namespace

CompletionRequest parse_completion(std::string_view body, int64_t max_tokens_limit) {
  Json j = parse_object(body);
  CompletionRequest r;
  const Json* prompt = field(j, "prompt");
  if (!prompt) bad("prompt", "missing (expected a string)");
  if (!prompt->is_string())
    bad("prompt", "expected a string (one prompt; arrays of prompts are not supported), got " +
                      describe(*prompt));
  r.prompt = prompt->get<std::string>();
  if (r.prompt.empty()) bad("prompt", "is empty (give at least one character)");
  parse_sampling(j, {"prompt", "best_of", "echo", "suffix"}, max_tokens_limit, r);
  return r;
}

CompletionRequest parse_chat_completion(std::string_view body, int64_t max_tokens_limit) {
  Json j = parse_object(body);
  CompletionRequest r;
  if (const Json* m = field(j, "max_completion_tokens")) j["max_tokens"] = *m;
  const Json* messages = field(j, "messages");
  if (!messages || !messages->is_array() || messages->empty())
    bad("messages",
        "expected a non-empty array of {\"role\", \"content\"}" +
            (messages ? ", got " + describe(*messages) : std::string(", it is missing")));
  for (size_t i = 0; i < messages->size(); i++) {
    const Json& m = (*messages)[i];
    std::string at = "messages[" + std::to_string(i) + "]";
    const Json* role = m.is_object() ? field(m, "role") : nullptr;
    const Json* content = m.is_object() ? field(m, "content") : nullptr;
    if (!role || !role->is_string() || !content)
      bad(at, "expected {\"role\": a string, \"content\"}, got " + describe(m));
    ChatTurn turn{role->get<std::string>(), ""};
    if (turn.role != "system" && turn.role != "user" && turn.role != "assistant")
      bad(at + ".role", "expected system, user or assistant, got " + describe(*role));
    if (content->is_string()) {
      turn.content = content->get<std::string>();
    } else if (content->is_array()) {  // parts: only text ones
      for (const Json& part : *content) {
        const Json* text = part.is_object() ? field(part, "text") : nullptr;
        if (!text || !text->is_string() || part.value("type", "") != "text")
          bad(at + ".content",
              "expected text parts {\"type\": \"text\", \"text\"}, got " + describe(part));
        turn.content += text->get<std::string>();
      }
    } else {
      bad(at + ".content", "expected a string or text parts, got " + describe(*content));
    }
    r.messages.push_back(std::move(turn));
  }
  parse_sampling(j, {"messages", "max_completion_tokens"}, max_tokens_limit, r);
  return r;
}

const std::vector<std::string>& v2_datatypes() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const V2Type& t : kV2Types) n.push_back(t.name);
    return n;
  }();
  return names;
}

int v2_element_bytes(std::string_view datatype) {
  const V2Type* t = v2_type(datatype);
  return t ? t->bytes : 0;
}

V2InferRequest parse_v2_infer(std::string_view body, const std::vector<V2Tensor>& model_inputs,
                              const std::vector<std::string>& model_outputs) {
  Json j = parse_object(body);
  V2InferRequest r;
  if (const Json* id = field(j, "id")) {
    if (!id->is_string()) bad("id", "expected a string, got " + describe(*id));
    r.id = id->get<std::string>();
  }
  std::vector<std::string> input_names;
  for (const V2Tensor& s : model_inputs) input_names.push_back(s.name);
  const Json* inputs = field(j, "inputs");
  if (!inputs || !inputs->is_array())
    bad("inputs", "expected an array of {\"name\", \"shape\", \"datatype\", \"data\"}" +
                      (inputs ? ", got " + describe(*inputs) : std::string(", it is missing")));
  std::vector<std::optional<V2Tensor>> given(model_inputs.size());
  for (size_t i = 0; i < inputs->size(); i++) {
    const Json& in = (*inputs)[i];
    std::string at = "inputs[" + std::to_string(i) + "]";
    if (!in.is_object()) bad(at, "expected an object, got " + describe(in));
    const Json* name = field(in, "name");
    if (!name || !name->is_string())
      bad(at + ".name", "expected a string" +
                            (name ? ", got " + describe(*name) : std::string(", it is missing")));
    const std::string& n = name->get_ref<const std::string&>();
    auto spec = std::find(input_names.begin(), input_names.end(), n);
    std::string field_name = "input '" + n.substr(0, 40) + "'";
    if (spec == input_names.end())
      bad(field_name,
          "the model has no such input (its inputs: " + quoted_names(input_names) + ")");
    size_t k = static_cast<size_t>(spec - input_names.begin());
    if (given[k]) bad(field_name, "given twice");
    given[k] = v2_input(in, model_inputs[k], field_name);
  }
  for (size_t k = 0; k < given.size(); k++) {
    if (!given[k])
      bad("input '" + model_inputs[k].name + "'",
          "missing (the model's inputs: " + quoted_names(input_names) + ")");
    r.inputs.push_back(std::move(*given[k]));
  }
  if (const Json* outputs = field(j, "outputs")) {
    if (!outputs->is_array())
      bad("outputs", "expected an array of {\"name\"}, got " + describe(*outputs));
    for (size_t i = 0; i < outputs->size(); i++) {
      const Json& out = (*outputs)[i];
      const Json* name = out.is_object() ? field(out, "name") : nullptr;
      if (!name || !name->is_string())
        bad("outputs[" + std::to_string(i) + "]",
            "expected {\"name\": string}, got " + describe(out));
      const std::string& n = name->get_ref<const std::string&>();
      if (std::find(model_outputs.begin(), model_outputs.end(), n) == model_outputs.end())
        bad("output '" + n.substr(0, 40) + "'",
            "the model has no such output (its outputs: " + quoted_names(model_outputs) + ")");
      r.outputs.push_back(n);
    }
  }
  return r;
}

}  // namespace tc::infer
