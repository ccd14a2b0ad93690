// infer serve's request parsing (apps/infer/requests.h) without a server: base64 against RFC 4648's
// vectors and an independent encoder, and every refusal's status and message.
#include "apps/infer/requests.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "tests/error_message.h"
#include "tests/infer/base64_encode.h"

namespace {

using tc::infer::base64_decode;
using tc::infer::ClassifyRequest;
using tc::infer::CompletionRequest;
using tc::infer::parse_classify;
using tc::infer::parse_completion;
using tc::infer::RequestError;
using ::testing::HasSubstr;

using infertest::base64_encode;

TEST(Base64, DecodesTheRfcVectorsAndRandomBytes) {
  const std::pair<const char*, const char*> kRfc4648[] = {{"", ""},
                                                          {"Zg==", "f"},
                                                          {"Zm8=", "fo"},
                                                          {"Zm9v", "foo"},
                                                          {"Zm9vYg==", "foob"},
                                                          {"Zm9vYmE=", "fooba"},
                                                          {"Zm9vYmFy", "foobar"}};
  for (auto [text, bytes] : kRfc4648) EXPECT_EQ(base64_decode(text), bytes) << text;
  std::mt19937 rng(7);
  for (int len = 0; len < 70; len++) {
    std::string bytes(static_cast<size_t>(len), '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    EXPECT_EQ(base64_decode(base64_encode(bytes)), bytes) << len;
  }
  // MIME-wrapped text (line breaks every 76 characters, as `base64` writes it) decodes too.
  EXPECT_EQ(base64_decode("Zm9v\r\nYmFy\n"), "foobar");
  EXPECT_EQ(base64_decode("Zg=\n="), "f");
}

std::string base64_error(const std::string& text) {
  return error_message([&] { base64_decode(text); });
}

TEST(Base64, RefusesBadCharactersAndPadding) {
  EXPECT_EQ(base64_error("Zm9v!mFy"), "base64: invalid character '!' at offset 4");
  EXPECT_EQ(base64_error("Zm9v\x01"), "base64: invalid character 0x01 at offset 4");
  EXPECT_EQ(base64_error("Zm9-"), "base64: invalid character '-' at offset 3");  // base64url
  EXPECT_EQ(base64_error("Zm9vYg"),
            "base64: 6 characters is not a multiple of 4 (missing '=' "
            "padding?)");
  EXPECT_EQ(base64_error("Zg=a"), "base64: data after '=' padding at offset 3");
  EXPECT_EQ(base64_error("Zg==Zg=="), "base64: data after '=' padding at offset 4");
  EXPECT_EQ(base64_error("Z==="), "base64: more than two '=' at offset 3");
  EXPECT_EQ(base64_error("Zm8=="),
            "base64: 5 characters is not a multiple of 4 (missing '=' "
            "padding?)");
  EXPECT_EQ(base64_error("Zm9v===="), "base64: more than two '=' at offset 6");
  EXPECT_EQ(base64_error("Zh=="), "base64: the bits before '=' padding are not zero");
  EXPECT_EQ(base64_error("Zm9="), "base64: the bits before '=' padding are not zero");
}

// The status and message a parse refuses with.
template <typename F>
std::pair<int, std::string> refusal(F parse) {
  try {
    parse();
  } catch (const RequestError& e) {
    return {e.status(), e.what()};
  }
  return {0, "(accepted)"};
}

const tc::infer::ClassifyLimits kLimits{.classes = 10, .max_image_bytes = 100};

std::pair<int, std::string> classify_refusal(const std::string& body,
                                             const std::string& type = "application/json",
                                             const std::string& topk = "") {
  return refusal([&] { parse_classify(body, type, topk, kLimits); });
}

TEST(ClassifyRequest, ReadsRawBytesOrBase64Json) {
  ClassifyRequest raw = parse_classify("\x89PNG....", "image/png", "", kLimits);
  EXPECT_EQ(raw.image, "\x89PNG....");
  EXPECT_EQ(raw.topk, 5);
  EXPECT_EQ(parse_classify("abc", "", "3", kLimits).topk, 3);
  EXPECT_EQ(parse_classify("abc", "application/x-www-form-urlencoded", "10", kLimits).topk, 10);
  ClassifyRequest json =
      parse_classify(R"({"image": "Zm9vYmFy", "topk": 2, "model": "x"})",
                     "Application/JSON; charset=utf-8", "7", kLimits);  // JSON's topk wins
  EXPECT_EQ(json.image, "foobar");
  EXPECT_EQ(json.topk, 2);
  EXPECT_EQ(
      parse_classify(R"({"image": "Zm9v", "topk": null})", "application/json", "", kLimits).topk,
      5);
  EXPECT_EQ(
      parse_classify(R"({"image": "data:image/png;base64,Zm9v"})", "application/json", "", kLimits)
          .image,
      "foo");
  // Fewer classes than 5: topk defaults to all of them.
  EXPECT_EQ(parse_classify("abc", "", "", {.classes = 3, .max_image_bytes = 10}).topk, 3);
}

TEST(ClassifyRequest, RefusesEachBadFieldNamingIt) {
  using R = std::pair<int, std::string>;
  EXPECT_EQ(classify_refusal(""), R(400, "body: is empty (expected a JSON object)"));
  EXPECT_EQ(classify_refusal("{\"image\": "),
            R(400,
              "body: malformed JSON: parse error at line 1, column 11: syntax error while parsing "
              "value - unexpected end of input; expected '[', '{', or a literal"));
  EXPECT_EQ(classify_refusal("[1, 2]"), R(400, "body: expected a JSON object, got an array"));
  EXPECT_EQ(classify_refusal("\"Zm9v\""), R(400, "body: expected a JSON object, got \"Zm9v\""));
  EXPECT_EQ(classify_refusal("{}"),
            R(400, "image: missing (expected the image file's bytes as a base64 string)"));
  EXPECT_EQ(classify_refusal(R"({"image": null})").second,
            "image: missing (expected the image file's bytes as a base64 string)");
  EXPECT_EQ(classify_refusal(R"({"image": 12})"),
            R(400, "image: expected a base64 string, got 12"));
  EXPECT_EQ(classify_refusal(R"({"image": {"a": 1}})"),
            R(400, "image: expected a base64 string, got an object"));
  EXPECT_EQ(classify_refusal(R"({"image": "Zm9v!"})"),
            R(400, "image: not valid base64: base64: invalid character '!' at offset 4"));
  EXPECT_EQ(classify_refusal(R"({"image": ""})"),
            R(400, "image: is empty (send the image file's bytes, or JSON {\"image\": base64})"));
  EXPECT_EQ(classify_refusal("", "image/png").first, 400);
  EXPECT_EQ(classify_refusal(R"({"image": "Zm9v", "topk": 0})"),
            R(400, "topk: expected an integer in 1..10, got 0"));
  EXPECT_EQ(classify_refusal(R"({"image": "Zm9v", "topk": 11})"),
            R(400, "topk: expected an integer in 1..10, got 11"));
  EXPECT_EQ(classify_refusal(R"({"image": "Zm9v", "topk": -1})"),
            R(400, "topk: expected an integer in 1..10, got -1"));
  EXPECT_EQ(classify_refusal(R"({"image": "Zm9v", "topk": 2.5})"),
            R(400, "topk: expected an integer in 1..10, got 2.5"));
  EXPECT_EQ(classify_refusal(R"({"image": "Zm9v", "topk": "3"})"),
            R(400, "topk: expected an integer in 1..10, got \"3\""));
  EXPECT_EQ(classify_refusal(R"({"image": "Zm9v", "topk": 18446744073709551615})"),
            R(400, "topk: expected an integer in 1..10, got 18446744073709551615"));
  EXPECT_EQ(classify_refusal("abc", "image/png", "x3"),
            R(400, "topk: expected an integer in 1..10, got 'x3'"));
  EXPECT_EQ(classify_refusal("abc", "image/png", "0").first, 400);
  EXPECT_EQ(classify_refusal("abc", "image/png", "99999999999999999999999").first, 400);
  // Too large: 413, for raw bytes and for what base64 decodes to.
  EXPECT_EQ(classify_refusal(std::string(101, 'x'), "image/png"),
            R(413, "image: 101 bytes is more than the limit of 100"));
  EXPECT_EQ(classify_refusal(R"({"image": ")" + base64_encode(std::string(101, 'x')) + "\"}"),
            R(413, "image: 101 bytes is more than the limit of 100"));
  EXPECT_EQ(classify_refusal(R"({"image": ")" + std::string(400, 'A') + "\"}"),
            R(413, "image: more than the limit of 100 bytes"));
  // Long strings are cut in messages.
  EXPECT_EQ(
      classify_refusal(R"({"image": "Zm9v", "topk": ")" + std::string(100, 'z') + "\"}").second,
      "topk: expected an integer in 1..10, got \"" + std::string(36, 'z') + "...");
}

std::pair<int, std::string> completion_refusal(const std::string& body) {
  return refusal([&] { parse_completion(body, 256); });
}

TEST(CompletionRequest, ReadsOpenAiFieldsWithTheirDefaults) {
  CompletionRequest d = parse_completion(R"({"prompt": "hi", "model": "gpt", "user": "u"})", 256);
  EXPECT_EQ(d.prompt, "hi");
  EXPECT_EQ(d.max_tokens, 16);
  EXPECT_EQ(d.temperature, 1.0);
  EXPECT_EQ(d.top_k, 0);
  EXPECT_EQ(d.top_p, 1.0);
  EXPECT_FALSE(d.seed.has_value());
  EXPECT_FALSE(d.stream);
  EXPECT_EQ(parse_completion(R"({"prompt": "hi"})", 8).max_tokens, 8);  // the limit is lower
  CompletionRequest r = parse_completion(
      R"({"prompt": "caf\u00e9", "max_tokens": 256, "temperature": 0, "top_k": 40,
          "top_p": 0.9, "seed": 18446744073709551615, "stream": true, "n": 1, "best_of": null,
          "echo": false, "logprobs": null, "stop": [], "suffix": "", "presence_penalty": 0,
          "frequency_penalty": 0.0, "logit_bias": {}})",
      256);
  EXPECT_EQ(r.prompt, "caf\xc3\xa9");
  EXPECT_EQ(r.max_tokens, 256);
  EXPECT_EQ(r.temperature, 0.0);
  EXPECT_EQ(r.top_k, 40);
  EXPECT_EQ(r.top_p, 0.9);
  EXPECT_EQ(r.seed, UINT64_MAX);
  EXPECT_TRUE(r.stream);
  EXPECT_EQ(parse_completion(R"({"prompt": "a", "temperature": 2, "top_p": 1, "seed": 0})", 9)
                .temperature,
            2.0);
}

TEST(CompletionRequest, RefusesEachBadFieldNamingIt) {
  using R = std::pair<int, std::string>;
  EXPECT_EQ(completion_refusal("nope").first, 400);
  EXPECT_THAT(completion_refusal("nope").second, HasSubstr("body: malformed JSON: parse error"));
  EXPECT_THAT(completion_refusal("{\"prompt\": \"\xff\"}").second,
              HasSubstr("body: malformed JSON: parse error at line 1, column 13: syntax error "
                        "while parsing value - invalid string: ill-formed UTF-8 byte"));
  EXPECT_EQ(completion_refusal(R"({"prompt": "a", "max_tokens": 888888e6477})"),
            R(400, "body: malformed JSON: number overflow parsing '888888e6477'"));
  EXPECT_EQ(completion_refusal("{}"), R(400, "prompt: missing (expected a string)"));
  EXPECT_EQ(completion_refusal(R"({"prompt": ["a", "b"]})"),
            R(400,
              "prompt: expected a string (one prompt; arrays of prompts are not supported), got "
              "an array"));
  EXPECT_EQ(completion_refusal(R"({"prompt": 5})").second,
            "prompt: expected a string (one prompt; arrays of prompts are not supported), got 5");
  EXPECT_EQ(completion_refusal(R"({"prompt": ""})"),
            R(400, "prompt: is empty (give at least one character)"));
  const std::string p = R"({"prompt": "a", )";
  EXPECT_EQ(completion_refusal(p + R"("max_tokens": -3})"),
            R(400, "max_tokens: expected an integer in 1..256, got -3"));
  EXPECT_EQ(completion_refusal(p + R"("max_tokens": 0})").second,
            "max_tokens: expected an integer in 1..256, got 0");
  EXPECT_EQ(completion_refusal(p + R"("max_tokens": 257})").second,
            "max_tokens: expected an integer in 1..256, got 257");
  EXPECT_EQ(completion_refusal(p + R"("max_tokens": "5"})").second,
            "max_tokens: expected an integer in 1..256, got \"5\"");
  EXPECT_EQ(completion_refusal(p + R"("max_tokens": 1e3})").second,
            "max_tokens: expected an integer in 1..256, got 1000.0");
  EXPECT_EQ(completion_refusal(p + R"("temperature": -0.5})"),
            R(400, "temperature: expected a number >= 0, got -0.5"));
  EXPECT_EQ(completion_refusal(p + R"("temperature": "hot"})").second,
            "temperature: expected a number >= 0, got \"hot\"");
  EXPECT_EQ(completion_refusal(p + R"("temperature": true})").second,
            "temperature: expected a number >= 0, got true");
  EXPECT_EQ(completion_refusal(p + R"("top_k": -1})").second,
            "top_k: expected an integer >= 0, got -1");
  EXPECT_EQ(completion_refusal(p + R"("top_p": 0})").second,
            "top_p: expected a number in (0, 1], got 0");
  EXPECT_EQ(completion_refusal(p + R"("top_p": 1.5})").second,
            "top_p: expected a number in (0, 1], got 1.5");
  EXPECT_EQ(completion_refusal(p + R"("seed": -1})").second,
            "seed: expected an integer in 0..18446744073709551615, got -1");
  EXPECT_EQ(completion_refusal(p + R"("seed": 1.5})").second,
            "seed: expected an integer in 0..18446744073709551615, got 1.5");
  EXPECT_EQ(completion_refusal(p + R"("stream": "yes"})"),
            R(400, "stream: expected true or false, got \"yes\""));
  EXPECT_EQ(completion_refusal(p + R"("n": 2})"),
            R(400, "n: not supported (only 1 is accepted), got 2"));
  EXPECT_EQ(completion_refusal(p + R"("best_of": 3})").second,
            "best_of: not supported (only 1 is accepted), got 3");
  EXPECT_EQ(completion_refusal(p + R"("echo": true})").second,
            "echo: not supported (only false is accepted), got true");
  EXPECT_EQ(completion_refusal(p + R"("logprobs": 2})").second,
            "logprobs: not supported (only null is accepted), got 2");
  EXPECT_EQ(completion_refusal(p + R"("stop": ["a", "b", "c", "d", "e"]})").second,
            "stop: expected a string or an array of at most 4 strings, got an array");
  EXPECT_EQ(completion_refusal(p + R"("stop": [7]})").second, "stop: expected strings, got 7");
  EXPECT_EQ(completion_refusal(p + R"("min_p": 1.5})").second,
            "min_p: expected a number in [0, 1], got 1.5");
  EXPECT_EQ(completion_refusal(p + R"("repetition_penalty": 0})").second,
            "repetition_penalty: expected a number > 0, got 0");
  EXPECT_EQ(completion_refusal(p + R"("temprature": 0})"),
            R(400, "temprature: unknown field (not a field of this endpoint)"));
  EXPECT_EQ(completion_refusal(p + R"("messages": []})").second,
            "messages: unknown field (not a field of this endpoint)");
  EXPECT_EQ(completion_refusal(p + R"("suffix": "x"})").second,
            "suffix: not supported (only null or \"\" is accepted), got \"x\"");
  EXPECT_EQ(completion_refusal(p + R"("presence_penalty": 0.5})").second,
            "presence_penalty: not supported (only 0 is accepted), got 0.5");
  EXPECT_EQ(completion_refusal(p + R"("frequency_penalty": "0"})").second,
            "frequency_penalty: not supported (only 0 is accepted), got \"0\"");
  EXPECT_EQ(completion_refusal(p + R"("logit_bias": {"50": 1}})").second,
            "logit_bias: not supported (only null or {} is accepted), got an object");
}

TEST(CompletionRequest, ReadsStopStringsAndSamplingExtras) {
  CompletionRequest r = parse_completion(
      R"({"prompt": "a", "stop": "\n", "min_p": 0.05, "repetition_penalty": 1.1})", 256);
  EXPECT_EQ(r.stop, std::vector<std::string>{"\n"});
  EXPECT_EQ(r.min_p, 0.05);
  EXPECT_EQ(r.repetition_penalty, 1.1);
  EXPECT_EQ(parse_completion(R"({"prompt": "a", "stop": ["x", "", "yz"]})", 9).stop,
            (std::vector<std::string>{"x", "yz"}));  // an empty stop string stops nothing
}

std::pair<int, std::string> chat_refusal(const std::string& body) {
  return refusal([&] { tc::infer::parse_chat_completion(body, 256); });
}

TEST(ChatCompletionRequest, ReadsMessagesAsStringsOrTextParts) {
  CompletionRequest r = tc::infer::parse_chat_completion(
      R"({"model": "m", "messages": [{"role": "system", "content": "be brief"},
          {"role": "user", "content": [{"type": "text", "text": "hi "}, {"type": "text",
          "text": "there"}]}], "max_completion_tokens": 7, "stream": true, "seed": 3})",
      256);
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[0].content, "be brief");
  EXPECT_EQ(r.messages[1].role, "user");
  EXPECT_EQ(r.messages[1].content, "hi there");
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_TRUE(r.stream);
  EXPECT_EQ(r.seed, 3u);
}

TEST(ChatCompletionRequest, RefusesEachBadFieldNamingIt) {
  using R = std::pair<int, std::string>;
  EXPECT_EQ(
      chat_refusal("{}"),
      R(400, "messages: expected a non-empty array of {\"role\", \"content\"}, it is missing"));
  EXPECT_EQ(chat_refusal(R"({"messages": []})").second,
            "messages: expected a non-empty array of {\"role\", \"content\"}, got an array");
  EXPECT_EQ(chat_refusal(R"({"messages": [{"role": "tool", "content": "x"}]})").second,
            "messages[0].role: expected system, user or assistant, got \"tool\"");
  EXPECT_EQ(chat_refusal(R"({"messages": [{"role": "user"}]})").second,
            "messages[0]: expected {\"role\": a string, \"content\"}, got an object");
  EXPECT_EQ(
      chat_refusal(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})")
          .second,
      "messages[0].content: expected text parts {\"type\": \"text\", \"text\"}, got an object");
  EXPECT_EQ(
      chat_refusal(R"({"messages": [{"role": "user", "content": "x"}], "prompt": "a"})").second,
      "prompt: unknown field (not a field of this endpoint)");
  EXPECT_EQ(
      chat_refusal(R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0})").second,
      "max_tokens: expected an integer in 1..256, got 0");
}

TEST(ErrorBody, IsOpenAiShapedJsonEvenForBytesThatAreNotUtf8) {
  nlohmann::json j = nlohmann::json::parse(tc::infer::error_body(400, "prompt: \xff bad"));
  EXPECT_EQ(j["error"]["message"], "prompt: \xef\xbf\xbd bad");  // U+FFFD
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(tc::infer::error_type(413), "invalid_request_error");
  EXPECT_EQ(tc::infer::error_type(503), "server_overloaded");
  EXPECT_EQ(tc::infer::error_type(504), "timeout");
  EXPECT_EQ(tc::infer::error_type(500), "server_error");
}

}  // namespace
