#include "apps/infer/requests.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

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
      {"stop", "null, \"\" or []", [](const Json& v) { return v == "" || v == Json::array(); }},
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
  r.max_tokens =
      int_in(j, "max_tokens", 1, max_tokens_limit, std::min(r.max_tokens, max_tokens_limit));
  r.temperature = number_in(j, "temperature", 0, false, std::numeric_limits<double>::max(),
                            r.temperature, ">= 0");
  r.top_k = int_in(j, "top_k", 0, std::numeric_limits<int64_t>::max(), r.top_k);
  r.top_p = number_in(j, "top_p", 0, true, 1, r.top_p, "in (0, 1]");
  if (const Json* seed = field(j, "seed")) {
    if (!seed->is_number_integer() || (!seed->is_number_unsigned() && seed->get<int64_t>() < 0))
      bad("seed", "expected an integer in 0..18446744073709551615, got " + describe(*seed));
    r.seed = seed->get<uint64_t>();
  }
  r.stream = bool_field(j, "stream", r.stream);
  check_neutral_options(j);
  return r;
}

}  // namespace tc::infer
