// infer serve --model over KServe's Open Inference Protocol v2, on ONNX models built in the test:
// the metadata declares the model's inputs and outputs, answers equal a naive double loop (flat
// and nested data, also under 16 concurrent clients, whose requests are batched along axis 0 when
// the model's first dimension is dynamic and run one by one when it is not), every wrong request
// is a 400 naming what is wrong, an unknown model a 404, and /healthz and /metrics keep working.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/infer/onnx_models.h"
#include "tests/infer/serving.h"

namespace {

using infertest::client;
using infertest::from_clients;
using infertest::scrape;
using infertest::Serving;
using Json = nlohmann::json;
using tc::infer::ServerOptions;
using ::testing::HasSubstr;

constexpr int64_t kMaxBatch = 4;

ServerOptions options(const std::string& name = "") {
  ServerOptions o;
  o.max_batch = kMaxBatch;
  o.batch_wait_ms = 20;
  o.threads = 20;
  o.model_name = name;
  return o;
}

// rows x 4 inputs, different for each seed.
std::vector<float> inputs(int rows, int seed) {
  std::vector<float> x;
  for (int i = 0; i < rows * onnxmodels::kIn; i++)
    x.push_back(0.25f * static_cast<float>((i * 7 + seed * 3) % 13) - 1.5f);
  return x;
}

Json infer_body(const std::vector<float>& x, bool nested = false) {
  int64_t rows = static_cast<int64_t>(x.size()) / onnxmodels::kIn;
  Json data = Json::array();
  for (int64_t r = 0; r < rows; r++) {
    Json row(
        std::vector<float>(x.begin() + r * onnxmodels::kIn, x.begin() + (r + 1) * onnxmodels::kIn));
    if (nested)
      data.push_back(row);
    else
      for (const Json& v : row) data.push_back(v);
  }
  return {{"inputs",
           {{{"name", "x"},
             {"shape", {rows, onnxmodels::kIn}},
             {"datatype", "FP32"},
             {"data", data}}}}};
}

// The answer's y checked against the reference for x.
void expect_y(const httplib::Result& res, const std::vector<float>& x) {
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  ASSERT_EQ(res->status, 200) << res->body;
  Json j = Json::parse(res->body);
  EXPECT_EQ(j["model_name"], "gemm");
  ASSERT_EQ(j["outputs"].size(), 1u) << res->body;
  const Json& y = j["outputs"][0];
  EXPECT_EQ(y["name"], "y");
  EXPECT_EQ(y["datatype"], "FP32");
  int64_t rows = static_cast<int64_t>(x.size()) / onnxmodels::kIn;
  EXPECT_EQ(y["shape"], Json({rows, onnxmodels::kOut}));
  std::vector<double> want = onnxmodels::gemm_relu_reference(x);
  ASSERT_EQ(y["data"].size(), want.size());
  for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(y["data"][i].get<double>(), want[i], 1e-5);
}

// A refusal in the protocol's shape: {"error": "message"}.
void expect_error(const httplib::Result& res, int status, const std::string& message) {
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, status) << res->body;
  Json j = Json::parse(res->body, nullptr, false);
  ASSERT_TRUE(j.is_object() && j["error"].is_string()) << res->body;
  EXPECT_THAT(j["error"].get<std::string>(), HasSubstr(message));
}

class GemmServer : public infertest::ServerSuite<GemmServer> {
 protected:
  static void SetUpTestSuite() { server_ = new Serving(onnxmodels::gemm_relu(), options("gemm")); }
};

TEST_F(GemmServer, AnswersHealthAndMetadata) {
  auto c = client(*server_);
  auto ready = c->Get("/v2/health/ready");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200);
  auto live = c->Get("/v2/health/live");
  ASSERT_TRUE(live && live->status == 200);
  auto meta = c->Get("/v2/models/gemm");
  ASSERT_TRUE(meta);
  ASSERT_EQ(meta->status, 200) << meta->body;
  EXPECT_EQ(Json::parse(meta->body),
            Json::parse(R"({"name": "gemm", "versions": ["1"], "platform": "onnx",
              "inputs": [{"name": "x", "datatype": "FP32", "shape": [-1, 4]}],
              "outputs": [{"name": "y", "datatype": "FP32", "shape": [-1, 3]}]})"));
  auto health = c->Get("/healthz");
  ASSERT_TRUE(health && health->status == 200);
  EXPECT_EQ(Json::parse(health->body)["architecture"], "onnx");
}

TEST_F(GemmServer, InfersFlatAndNestedDataAsTheReference) {
  auto c = client(*server_);
  for (int rows : {1, 3}) {
    std::vector<float> x = inputs(rows, rows);
    expect_y(c->Post("/v2/models/gemm/infer", infer_body(x).dump(), "application/json"), x);
    expect_y(c->Post("/v2/models/gemm/infer", infer_body(x, true).dump(), "application/json"), x);
  }
  // An id is echoed; outputs may be asked for by name.
  Json body = infer_body(inputs(2, 5));
  body["id"] = "req-7";
  body["outputs"] = {{{"name", "y"}}};
  auto res = c->Post("/v2/models/gemm/infer", body.dump(), "application/json");
  expect_y(res, inputs(2, 5));
  EXPECT_EQ(Json::parse(res->body)["id"], "req-7");
}

TEST_F(GemmServer, ConcurrentRequestsAreBatchedAlongAxis0) {
  auto c = client(*server_);
  std::map<std::string, double> before = scrape(*c);
  constexpr int kClients = 16, kEach = 3;
  from_clients(*server_, kClients, kEach, [](httplib::Client& c, int t, int i) {
    std::vector<float> x = inputs(1 + (t + i) % 3, t * kEach + i);
    expect_y(c.Post("/v2/models/gemm/infer", infer_body(x).dump(), "application/json"), x);
  });
  std::map<std::string, double> after = scrape(*c);
  const std::string ok = "infer_requests_total{endpoint=\"/v2/models/gemm/infer\",code=\"200\"}";
  EXPECT_EQ(after[ok] - before[ok], kClients * kEach);
  EXPECT_EQ(after["infer_batch_size_sum"] - before["infer_batch_size_sum"], kClients * kEach);
  auto steps = [](std::map<std::string, double>& m, const std::string& le) {
    return m["infer_batch_size_bucket{le=\"" + le + "\"}"];
  };
  EXPECT_LT(steps(after, "1") - steps(before, "1"), kClients * kEach)
      << "16 clients never ran together";
  EXPECT_EQ(steps(after, "+Inf"), steps(after, "4"));
}

TEST_F(GemmServer, WrongRequestsAre400NamingWhatIsWrong) {
  auto c = client(*server_);
  auto post = [&](const std::string& body) {
    return c->Post("/v2/models/gemm/infer", body, "application/json");
  };
  auto with = [&](const std::string& key, const Json& value) {
    Json b = infer_body(inputs(2, 0));
    b["inputs"][0][key] = value;
    return post(b.dump());
  };
  expect_error(post("{\"inputs\": "), 400, "body: malformed JSON");
  expect_error(post("{}"), 400, "inputs: expected an array");
  expect_error(post(R"({"inputs": []})"), 400, "input 'x': missing (the model's inputs: 'x')");
  expect_error(with("name", "z"), 400, "input 'z': the model has no such input (its inputs: 'x')");
  expect_error(with("datatype", "INT64"), 400,
               "input 'x': datatype \"INT64\" does not match the model's FP32");
  expect_error(with("shape", {2, 5}), 400,
               "input 'x': shape [2, 5] does not fit the model's [-1, 4]");
  expect_error(with("shape", {8}), 400, "input 'x': shape [8] does not fit the model's [-1, 4]");
  expect_error(with("shape", {3, 4}), 400, "input 'x': data holds 8 values, shape [3, 4] needs 12");
  expect_error(with("shape", {1, 4}), 400,
               "input 'x': data holds more than 4 values, shape [1, 4] needs 4");
  expect_error(with("data", {1, 2, "three", 4, 5, 6, 7, 8}), 400,
               "input 'x': expected a number in FP32's range, got \"three\"");
  expect_error(with("data", {{{1, 2, 3, 4}}, {5, 6, 7, 8}}), 400,
               "input 'x': data is nested deeper than the shape's 2 dimensions");
  expect_error(with("data", "AAAA"), 400, "input 'x': data: expected an array of values");
  Json twice = infer_body(inputs(1, 0));
  twice["inputs"].push_back(twice["inputs"][0]);
  expect_error(post(twice.dump()), 400, "input 'x': given twice");
  Json unknown_output = infer_body(inputs(1, 0));
  unknown_output["outputs"] = {{{"name", "logits"}}};
  expect_error(post(unknown_output.dump()), 400,
               "output 'logits': the model has no such output (its outputs: 'y')");
  // Unknown models are 404, on both paths; the wrong method 405.
  expect_error(
      c->Post("/v2/models/resnet/infer", infer_body(inputs(1, 0)).dump(), "application/json"), 404,
      "model 'resnet' is not served here (this server serves 'gemm')");
  expect_error(c->Get("/v2/models/resnet"), 404, "model 'resnet' is not served here");
  expect_error(c->Get("/v2/models/gemm/infer"), 405, "/v2/models/<name>/infer takes POST only");
  auto classify = c->Post("/v1/classify", "x", "image/png");
  ASSERT_TRUE(classify);
  EXPECT_EQ(classify->status, 404);
  EXPECT_THAT(classify->body, HasSubstr("an ONNX model; use POST /v2/models/gemm/infer"));
  // Still serving.
  expect_y(post(infer_body(inputs(1, 1)).dump()), inputs(1, 1));
  std::map<std::string, double> m = scrape(*c);
  EXPECT_GE((m["infer_requests_total{endpoint=\"/v2/models/gemm/infer\",code=\"400\"}"]), 13);
  EXPECT_GE((m["infer_requests_total{endpoint=\"other\",code=\"404\"}"]), 2);
}

// Fixed shapes: requests run one by one, int64 values come back exact, both outputs by name.
TEST(FixedShapeServer, RunsRequestsOneByOne) {
  Serving s(onnxmodels::add_mul_int64(), options());
  from_clients(s, 8, 1, [](httplib::Client& c, int t, int) {
    std::vector<int64_t> a = {1, 2, 3, 4, 5, t}, b = {10, -20, 30, 5000000000, 0, -t};
    Json body = {{"inputs",
                  {{{"name", "b"}, {"shape", {2, 3}}, {"datatype", "INT64"}, {"data", b}},
                   {{"name", "a"}, {"shape", {2, 3}}, {"datatype", "INT64"}, {"data", a}}}},
                 {"outputs", {{{"name", "prod"}}, {{"name", "sum"}}}}};
    auto res = c.Post("/v2/models/add_mul/infer", body.dump(), "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    Json out = Json::parse(res->body)["outputs"];
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0]["name"], "prod");
    EXPECT_EQ(out[1]["name"], "sum");
    for (size_t i = 0; i < 6; i++) {
      EXPECT_EQ(out[0]["data"][i].get<int64_t>(), a[i] * b[i]);
      EXPECT_EQ(out[1]["data"][i].get<int64_t>(), a[i] + b[i]);
    }
    EXPECT_EQ(out[0]["datatype"], "INT64");
    EXPECT_EQ(out[0]["shape"], Json({2, 3}));
  });
  auto c = client(s);
  std::map<std::string, double> m = scrape(*c);
  EXPECT_EQ(m["infer_batch_size_count"], 8);
  EXPECT_EQ(m["infer_batch_size_bucket{le=\"1\"}"], 8);
  Json bad_shape = {
      {"inputs",
       {{{"name", "a"}, {"shape", {1, 3}}, {"datatype", "INT64"}, {"data", {1, 2, 3}}},
        {{"name", "b"}, {"shape", {2, 3}}, {"datatype", "INT64"}, {"data", {1, 2, 3, 4, 5, 6}}}}}};
  expect_error(c->Post("/v2/models/add_mul/infer", bad_shape.dump(), "application/json"), 400,
               "input 'a': shape [1, 3] does not fit the model's [2, 3]");
  Json out_of_range = bad_shape;
  out_of_range["inputs"][0] = {
      {"name", "a"}, {"shape", {2, 3}}, {"datatype", "INT64"}, {"data", {1, 2, 3, 4, 5, 1.5}}};
  expect_error(c->Post("/v2/models/add_mul/infer", out_of_range.dump(), "application/json"), 400,
               "input 'a': expected an integer in INT64's range, got 1.5");
}

// Batched requests whose outputs do not keep axis 0 cannot be split: each is run again alone.
TEST(SumRowsServer, OutputsThatDropAxis0AreRunOneByOne) {
  Serving s(onnxmodels::sum_rows(), options());
  from_clients(s, 8, 2, [](httplib::Client& c, int t, int i) {
    int rows = 1 + (t + i) % 3;
    std::vector<float> x;
    for (int v = 0; v < rows * 3; v++) x.push_back(static_cast<float>(t * 10 + i * 100 + v));
    Json body = {
        {"inputs", {{{"name", "x"}, {"shape", {rows, 3}}, {"datatype", "FP32"}, {"data", x}}}}};
    auto res = c.Post("/v2/models/sum_rows/infer", body.dump(), "application/json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
    Json y = Json::parse(res->body)["outputs"][0];
    EXPECT_EQ(y["shape"], Json({1, 3}));
    for (int j = 0; j < 3; j++) {
      double sum = 0;
      for (int r = 0; r < rows; r++) sum += x[static_cast<size_t>(r * 3 + j)];
      EXPECT_EQ(y["data"][j].get<double>(), sum);
    }
  });
  auto c = client(s);
  EXPECT_LT(scrape(*c)["infer_batch_size_bucket{le=\"1\"}"], 16) << "8 clients never ran together";
}

}  // namespace
