// infer serve's KServe Open Inference Protocol v2 for an ONNX model: model metadata and infer
// requests, those whose first dimension is dynamic stacked along it and run together.
#include "apps/infer/server_impl.h"

namespace tc::infer {

using namespace serving;  // the parts the server's files share (server_impl.h)

namespace {

// Whether two requests' inputs stack along axis 0: equal shapes but for the first dimension.
bool stackable(const TensorJob& a, const TensorJob& b) {
  for (size_t i = 0; i < a.inputs.size(); i++)
    if (!std::equal(a.inputs[i].shape.begin() + 1, a.inputs[i].shape.end(),
                    b.inputs[i].shape.begin() + 1, b.inputs[i].shape.end()))
      return false;
  return true;
}

// The protocol's datatypes as tinycore's dtypes, and the dtype their JSON values are read into.
struct V2DType {
  const char* name;
  DType dtype, host;
};
constexpr V2DType kV2DTypes[] = {
    {"BOOL", dtypes::bool_, dtypes::bool_},      {"INT8", dtypes::int8, dtypes::int8},
    {"INT16", dtypes::int16, dtypes::int16},     {"INT32", dtypes::int32, dtypes::int32},
    {"INT64", dtypes::int64, dtypes::int64},     {"UINT8", dtypes::uint8, dtypes::uint8},
    {"UINT16", dtypes::uint16, dtypes::uint16},  {"UINT32", dtypes::uint32, dtypes::uint32},
    {"UINT64", dtypes::uint64, dtypes::uint64},  {"FP16", dtypes::float16, dtypes::float32},
    {"BF16", dtypes::bfloat16, dtypes::float32}, {"FP32", dtypes::float32, dtypes::float32},
    {"FP64", dtypes::float64, dtypes::float64},
};
const V2DType* v2_dtype(DType d) {
  for (const V2DType& t : kV2DTypes)
    if (t.dtype == d) return &t;
  return nullptr;
}
const V2DType& v2_dtype(const std::string& name) {
  for (const V2DType& t : kV2DTypes)
    if (t.name == name) return t;
  fail("datatype %s is not supported", name);
}

// A host array's values as a flat JSON array.
Json json_values(const HostArray& a) {
  Json out = Json::array();
  for (int64_t i = 0; i < a.numel(); i++) visit_element(a, i, [&](auto v) { out.push_back(v); });
  return out;
}

}  // namespace

V2Tensor serving::v2_tensor(const onnx::TensorSpec& s) {
  const V2DType* t = v2_dtype(s.dtype);
  return {s.name, t ? t->name : "", s.ranked ? s.shape : std::vector<int64_t>{-1}, ""};
}

// Requests to an ONNX model whose first dimension is dynamic run together (their inputs stacked
// along axis 0, when their other dimensions agree), as images do; others one by one.
void Server::Impl::tensor_loop() {
  std::vector<std::shared_ptr<TensorJob>> batch;
  while (take_batch(tensors, v2_batchable ? opt.max_batch : 1, stackable, batch)) {
    if (batch.empty()) continue;
    Clock::time_point t0 = Clock::now();
    std::vector<NamedArrays> outputs;
    try {
      std::optional<std::vector<NamedArrays>> stacked = run_tensors(batch);
      if (!stacked)  // the model does not keep axis 0: one by one (a lone request always splits)
        for (const auto& job : batch) outputs.push_back(std::move((*run_tensors({job}))[0]));
      else
        outputs = std::move(*stacked);
    } catch (...) {
      for (const auto& job : batch) job->refuse(std::current_exception());
      continue;
    }
    // Counted before any client has its answer, so that its next /metrics shows the step.
    metrics.record_step(static_cast<int64_t>(batch.size()), 0, seconds_between(t0, Clock::now()));
    for (size_t i = 0; i < batch.size(); i++) batch[i]->answer(std::move(outputs[i]));
  }
  refuse_queued(tensors);
}

std::optional<std::vector<NamedArrays>> Server::Impl::run_tensors(
    const std::vector<std::shared_ptr<TensorJob>>& batch) {
  std::map<std::string, Tensor> in;
  int64_t rows = 0;  // stacked: every input has a first dimension
  if (batch.size() > 1)
    for (const auto& job : batch) rows += job->inputs[0].shape[0];
  for (size_t k = 0; k < v2_inputs.size(); k++) {
    const V2Tensor& first = batch[0]->inputs[k];
    std::vector<int64_t> shape = first.shape;
    if (batch.size() > 1) shape[0] = rows;
    std::string bytes;
    for (const auto& job : batch) bytes += job->inputs[k].data;
    const V2DType& t = v2_dtype(first.datatype);
    Tensor x = Tensor::from_blob(bytes.data(), shape, t.host);
    in.emplace(first.name, t.host == t.dtype ? x : x.cast(t.dtype));
  }
  NamedArrays out = onnx->run(in);
  if (batch.size() == 1) return std::vector<NamedArrays>{std::move(out)};
  for (const auto& [name, a] : out)
    if (a.shape.empty() || a.shape[0] != rows) return std::nullopt;
  // Each request's rows of every output.
  std::vector<NamedArrays> split;
  int64_t row = 0;
  for (const auto& job : batch) {
    int64_t n = job->inputs[0].shape[0];
    NamedArrays& mine = split.emplace_back();
    for (const auto& [name, a] : out) {
      size_t row_bytes = a.data.size() / static_cast<size_t>(rows);
      HostArray part{
          a.dtype, a.shape,
          a.data.substr(static_cast<size_t>(row) * row_bytes, static_cast<size_t>(n) * row_bytes)};
      part.shape[0] = n;
      mine.emplace_back(name, std::move(part));
    }
    row += n;
  }
  return split;
}

void Server::Impl::check_model_name(const http::Request& req) const {
  if (req.matches.size() > 1 && req.matches[1] != model_name)
    throw RequestError(404,
                       absl::StrFormat("model '%s' is not served here (this server serves '%s')",
                                       req.matches[1].substr(0, 100), model_name));
}

Json Server::Impl::v2_metadata() const {
  auto tensors = [](const std::vector<V2Tensor>& ts) {
    Json out = Json::array();
    for (const V2Tensor& t : ts)
      out.push_back({{"name", t.name}, {"datatype", t.datatype}, {"shape", t.shape}});
    return out;
  };
  return {{"name", model_name},
          {"versions", {"1"}},
          {"platform", "onnx"},
          {"inputs", tensors(v2_inputs)},
          {"outputs", tensors(v2_outputs)}};
}

http::Response Server::Impl::infer(const http::Request& req) {
  check_model_name(req);
  V2InferRequest r = parse_v2_infer(req.body, v2_inputs, v2_output_names);
  auto job = std::make_shared<TensorJob>();
  job->inputs = std::move(r.inputs);
  return submit(req, tensors, job, [this, r](const NamedArrays& outputs) {
    Json out = Json::array();
    for (const auto& [name, a] : outputs) {
      if (!r.outputs.empty() &&
          std::find(r.outputs.begin(), r.outputs.end(), name) == r.outputs.end())
        continue;
      const V2DType* t = v2_dtype(a.dtype);
      out.push_back({{"name", name},
                     {"datatype", t ? t->name : numpy_name(a.dtype)},
                     {"shape", a.shape},
                     {"data", json_values(a)}});
    }
    // The outputs in the order they were asked for.
    if (!r.outputs.empty())
      std::stable_sort(out.begin(), out.end(), [&](const Json& a, const Json& b) {
        auto at = [&](const Json& o) {
          return std::find(r.outputs.begin(), r.outputs.end(), o["name"].get<std::string>());
        };
        return at(a) < at(b);
      });
    Json answer = {{"model_name", model_name}, {"model_version", "1"}, {"outputs", out}};
    if (!r.id.empty()) answer["id"] = r.id;
    http::Response res;
    res.body = dump(answer);
    return res;
  });
}

}  // namespace tc::infer
