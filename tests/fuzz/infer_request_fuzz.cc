// libFuzzer target for infer serve's request parsing (apps/infer/requests.h): any body gives a
// request whose fields are in range or a RequestError with a 4xx status, never a crash, a hang
// or another exception (ASan and UBSan watch); base64 that decodes re-encodes to the same text;
// an error body is JSON whatever bytes its message holds; a v2 infer request holds every model
// input once, with as many bytes of data as its shape and datatype need. The first byte picks the
// parser.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "apps/infer/requests.h"
#include "tests/infer/base64_encode.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

using infertest::base64_encode;

void fuzz(uint8_t mode, std::string_view body) {
  using namespace tc::infer;
  switch (mode % 5) {
    case 0:
    case 1: {
      const ClassifyLimits limits{.classes = 10, .max_image_bytes = 1000};
      ClassifyRequest r = parse_classify(body, mode % 5 ? "image/png" : "application/json",
                                         mode & 4 ? body.substr(0, 4) : "", limits);
      check(!r.image.empty() && static_cast<int64_t>(r.image.size()) <= limits.max_image_bytes);
      check(r.topk >= 1 && r.topk <= limits.classes);
      break;
    }
    case 2: {
      CompletionRequest r = parse_completion(body, 64);
      check(!r.prompt.empty() && r.max_tokens >= 1 && r.max_tokens <= 64);
      check(std::isfinite(r.temperature) && r.temperature >= 0 && r.top_k >= 0);
      check(r.top_p > 0 && r.top_p <= 1);
      break;
    }
    case 3: {
      std::string bytes = base64_decode(body);
      std::string text;
      for (char c : body)
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') text += c;
      check(base64_encode(bytes) == text);
      break;
    }
    case 4: {
      const std::vector<V2Tensor> inputs = {
          {"x", "FP32", {-1, 4}, ""}, {"ids", "INT64", {2}, ""}, {"mask", "BOOL", {}, ""}};
      V2InferRequest r = parse_v2_infer(body, inputs, {"y", "z"});
      check(r.inputs.size() == inputs.size());
      for (size_t i = 0; i < inputs.size(); i++) {
        const V2Tensor& in = r.inputs[i];
        check(in.name == inputs[i].name && in.datatype == inputs[i].datatype);
        check(in.shape.size() == inputs[i].shape.size());
        int64_t n = 1;
        for (size_t d = 0; d < in.shape.size(); d++) {
          check(in.shape[d] >= 1 &&
                (inputs[i].shape[d] == -1 || inputs[i].shape[d] == in.shape[d]));
          n *= in.shape[d];
        }
        check(static_cast<int64_t>(in.data.size()) == n * v2_element_bytes(in.datatype));
      }
      for (const std::string& o : r.outputs) check(o == "y" || o == "z");
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    fuzz(data[0], body);
  } catch (const tc::infer::RequestError& e) {
    check(e.status() >= 400 && e.status() < 500);
    nlohmann::json j = nlohmann::json::parse(tc::infer::error_body(e.status(), e.what()));
    check(j["error"]["message"].is_string());
  } catch (const tc::Error&) {
    check(data[0] % 5 == 3);  // only base64_decode throws a plain tc::Error
  }
  return 0;
}
